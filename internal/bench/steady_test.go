package bench

import (
	"testing"
	"time"
)

// TestSteadyWindowsCountStalledCalls: a claim or an insert that runs across a whole window counts in
// it (and in every other window it overlaps); one that ran before a window does not.
func TestSteadyWindowsCountStalledCalls(t *testing.T) {
	ms := time.Millisecond
	proto := newProtocol(4)
	pr := &producer{enqueued: map[int64]int64{}}
	// Four jobs enqueued over 1 s (windows of 250 ms), each started 10 ms after its insert returned.
	for i, at := range []time.Duration{0, 300 * ms, 600 * ms, 1000 * ms} {
		id := int64(i + 1)
		pr.enqueued[id] = at.Nanoseconds()
		pr.pushes = append(pr.pushes, claimSample{at: at, took: ms})
		proto.recordAt(id, (at + 10*ms).Nanoseconds(), 0)
	}
	// An insert that began before the last window and stalled through it.
	pr.pushes = append(pr.pushes, claimSample{at: 700 * ms, took: 400 * ms})
	proto.claims = []claimSample{
		{at: 100 * ms, took: 2 * ms},    // inside the first window only
		{at: 200 * ms, took: 1000 * ms}, // begins in the first window, spans the last
		{at: 300 * ms, took: 300 * ms},  // between the windows: neither
	}
	st := (&env{}).steadyFigures(proto, pr, &depthSampler{}, time.Second)
	if st.WindowSeconds != 0.25 {
		t.Fatalf("window %v s, want 0.25", st.WindowSeconds)
	}
	if st.ClaimP99LastMS != 1000 {
		t.Errorf("last window's claim p99 %v ms, want 1000: the stalled claim spans it", st.ClaimP99LastMS)
	}
	if st.ClaimP99FirstMS != 1000 {
		t.Errorf("first window's claim p99 %v ms, want 1000: the stalled claim began in it", st.ClaimP99FirstMS)
	}
	if st.InsertMaxLastMS != 400 || st.InsertMaxFirstMS != 1 {
		t.Errorf("insert max %v / %v ms, want 1 / 400", st.InsertMaxFirstMS, st.InsertMaxLastMS)
	}
}
