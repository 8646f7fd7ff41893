//go:build linux || darwin

package worker

import (
	"time"

	"golang.org/x/sys/unix"
)

// hrtime is PHP's hrtime(): the host's monotonic clock, which counts from its boot.
func hrtime() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
