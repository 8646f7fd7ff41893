//go:build !(linux || darwin)

package worker

import "time"

// hrtime is PHP's hrtime(), which this system's build does not read.
func hrtime() (time.Duration, bool) { return 0, false }
