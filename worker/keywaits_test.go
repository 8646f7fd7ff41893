package worker

import "testing"

// TestKeyLimitsStaleLimit: a limit read before a job of the key ended is refused (the caller reads
// it again, and sees that job's exception counted), so two jobs in flight cannot both pass a limit
// one of them has just used up.
func TestKeyLimitsStaleLimit(t *testing.T) {
	t.Parallel()
	var k keyLimits
	before := k.endedSoFar("k")
	leave, _ := k.enter("k", 2, 1, before)
	if leave == nil {
		t.Fatal("the first job did not enter under a limit of 2")
	}
	// Job 2 reads the limit (2) now; job 1 then ends, its exception counted: the limit is 1.
	stale := k.endedSoFar("k")
	leave()
	if l, changed := k.enter("k", 2, 2, stale); l != nil {
		t.Fatal("entered with a limit read before a job of the key ended")
	} else {
		select {
		case <-changed:
		default:
			t.Fatal("refused without a closed channel: the caller would wait for nothing")
		}
	}
	fresh := k.endedSoFar("k")
	if l, _ := k.enter("k", 1, 2, fresh); l == nil {
		t.Fatal("a limit read afresh was refused")
	}
}
