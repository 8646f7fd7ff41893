//go:build unix

package handlers

import (
	"os/exec"
	"syscall"
)

// killGroup starts the command in its own process group and makes cancellation kill the whole group,
// so that `sh -c` and the programs it starts stop together.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killLeftovers kills what is left of the command's process group after it exited: programs it
// started in the background must not outlive the job (nor the worker).
func killLeftovers(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
