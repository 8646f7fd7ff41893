package worker

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target (GOGC) a worker process runs with unless GOGC is set.
// A worker's live heap is small and its allocation rate high (every job's payload is read and
// decoded), so Go's default of 100 collects very often. On queue:bench's no-op jobs 400 gave about a
// tenth more jobs/s on PostgreSQL (CPU the database server on the same machine gets back), and the
// bench process's peak RSS about doubled.
const GCPercent = 400

// TuneGC sets the process's garbage collection for a worker: GCPercent, and with a --memory limit a
// soft memory limit at three quarters of it, so that the larger heap target never brings the worker to
// its memory stop condition while the collector could still have freed enough. It does nothing when
// GOGC or GOMEMLIMIT is set in the environment, which then rule. The returned function restores the
// previous settings.
func TuneGC(memoryMB int) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	oldPercent := debug.SetGCPercent(GCPercent)
	oldLimit := int64(-1)
	if memoryMB > 0 {
		oldLimit = debug.SetMemoryLimit(int64(memoryMB) << 20 / 4 * 3)
	}
	return func() {
		debug.SetGCPercent(oldPercent)
		if oldLimit >= 0 {
			debug.SetMemoryLimit(oldLimit)
		}
	}
}
