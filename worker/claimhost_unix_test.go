//go:build unix

package worker

import (
	"context"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestHostSlotsAcrossProcesses opens one scope's lock files twice, as two processes do (each opening
// has descriptors of its own, which flock tells apart): between them no more slots are held than there
// are files, a freed slot is the other's to take, and a wait ends with its context.
func TestHostSlotsAcrossProcesses(t *testing.T) {
	t.Parallel()
	scope := testenv.Name("hostslots")
	a, b := openHostSlots(scope, 2), openHostSlots(scope, 2)
	if a == nil || b == nil {
		t.Fatal("could not open the lock files in the temporary directory")
	}
	ctx := context.Background()
	releaseA1, err := a.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	releaseA2, err := a.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.try() != nil {
		t.Fatal("a third slot was taken where there are two")
	}
	waiting, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := b.acquire(waiting); err == nil {
		t.Fatal("acquire returned a slot while both were held")
	}
	releaseA1()
	releaseB, err := b.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.try() != nil {
		t.Fatal("a slot was taken again while the other opening held it")
	}
	releaseB()
	releaseA2()
	// The wait that ended with its context takes its slot when it comes and frees it at once: each
	// opening gets both slots again, waiting for that at most.
	for _, h := range []*hostSlots{a, b} {
		var releases []func()
		for range 2 {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			r, err := h.acquire(ctx)
			cancel()
			if err != nil {
				t.Fatalf("a slot stayed taken after every release: %v", err)
			}
			releases = append(releases, r)
		}
		for _, r := range releases {
			r()
		}
	}
}
