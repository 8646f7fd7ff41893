//go:build !unix

package handlers

import "os/exec"

// killGroup leaves cancellation to os/exec, which kills the command's own process.
func killGroup(*exec.Cmd) {}

func killLeftovers(*exec.Cmd) {}
