//go:build unix && !linux

package handlers

import "syscall"

// groupAttr starts the command in a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
