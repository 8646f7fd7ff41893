//go:build unix

// Package hostlock holds the lock files the artisan-go processes of one host share, in the directory
// artisan-go-claims of the temporary directory. A process holds one with flock, which the kernel
// releases when the process dies, so a crashed holder never keeps the others out.
package hostlock

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// Open opens the lock file name of scope, creating it and the directory. The directory is writable by
// every user, as the temporary directory is, and the file is opened for reading, which is all flock
// needs, so that the processes of other users share it too.
func Open(scope, name string) (*os.File, error) {
	dir := filepath.Join(os.TempDir(), "artisan-go-claims")
	if err := os.Mkdir(dir, 0o777); err == nil {
		_ = os.Chmod(dir, 0o777|os.ModeSticky)
	}
	sum := sha256.Sum256([]byte(scope))
	return os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:12])+"-"+name+".lock"), os.O_RDONLY|os.O_CREATE, 0o644)
}
