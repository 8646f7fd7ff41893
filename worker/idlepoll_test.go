package worker

import (
	"slices"
	"testing"
	"time"
)

func TestIdlePollDoublesUpToSleepAndResets(t *testing.T) {
	p := idlePoll{max: 100 * time.Millisecond}
	var got []time.Duration
	for range 5 {
		got = append(got, p.next())
	}
	ms := time.Millisecond
	if want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 100 * ms}; !slices.Equal(got, want) {
		t.Fatalf("pauses %v, want %v", got, want)
	}
	p.reset()
	if d := p.next(); d != idlePollMin {
		t.Fatalf("after a claim that found jobs: %v, want %v", d, idlePollMin)
	}
	if d := (&idlePoll{}).next(); d != 0 {
		t.Fatalf("--sleep 0: %v, want 0", d)
	}
}
