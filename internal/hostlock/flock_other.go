//go:build !unix

package hostlock

import "os"

const supported = false

// Try is false: Open gives no file here.
func Try(*os.File) bool { return false }

// Wait fails: Open gives no file here.
func Wait(*os.File) error { return ErrUnsupported }

// Unlock does nothing.
func Unlock(*os.File) {}
