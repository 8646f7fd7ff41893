//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filecache

import (
	"errors"
	"os"
)

var errLocked = errors.New("file is locked")

func supported() error {
	return errors.New("the file cache store needs flock(2), which this system does not have: use the database or redis cache store")
}

func lock(*os.File, bool, bool) error { return supported() }
