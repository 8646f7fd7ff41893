//go:build unix

package hostlock

import (
	"os"
	"syscall"
)

// Try takes the exclusive lock of f without waiting, and says whether it did.
func Try(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// Wait waits for the exclusive lock of f.
func Wait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

// Unlock gives the lock of f back.
func Unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
