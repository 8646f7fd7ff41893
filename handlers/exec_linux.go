//go:build linux

package handlers

import "syscall"

// groupAttr starts the command in a process group of its own, and has the kernel kill it when the
// worker dies, even by SIGKILL (which runs none of the worker's code), so that a killed worker leaves
// no command running past the job's timeout. What the command itself started in the background is in
// its group and is killed with it at the job's end; a killed worker cannot do that for them.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
