package worker

import (
	"math"
	"runtime/debug"
	"testing"
)

// current reads the GC percent and memory limit without changing them.
func current() (percent int, limit int64) {
	percent = debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	p0, l0 := current()
	restore := TuneGC(128)
	if p, l := current(); p != GCPercent || l != 96<<20 {
		t.Errorf("after TuneGC(128): GOGC %d, limit %d; want %d and %d", p, l, GCPercent, 96<<20)
	}
	restore()
	if p, l := current(); p != p0 || l != l0 {
		t.Errorf("after restore: GOGC %d, limit %d; want %d and %d", p, l, p0, l0)
	}

	restore = TuneGC(0)
	if p, l := current(); p != GCPercent || l != l0 {
		t.Errorf("after TuneGC(0): GOGC %d, limit %d; want %d and the limit untouched (%d)", p, l, GCPercent, l0)
	}
	restore()

	t.Setenv("GOGC", "50")
	restore = TuneGC(128)
	if p, l := current(); p != p0 || l != l0 {
		t.Errorf("with GOGC set: GOGC %d, limit %d; want both untouched (%d, %d)", p, l, p0, l0)
	}
	restore()
	if l0 != math.MaxInt64 {
		t.Logf("the test process already had a memory limit of %d", l0)
	}
}
