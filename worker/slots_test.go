package worker

import (
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// slotCounter is the real queue, adding up the slots its workers announce.
type slotCounter struct {
	laravel.Queue
	slots int
}

func (q *slotCounter) AddSlots(n int) { q.slots += n }

// TestWorkersAnnounceTheirSlots: each worker built on a queue that groups its deletes tells it how many
// jobs it runs at once, so that a group holding every slot commits without waiting for its linger.
func TestWorkersAnnounceTheirSlots(t *testing.T) {
	t.Parallel()
	f := newStrategyFixture(t, testenv.SQLite(t), "batch")
	if _, ok := f.Queue.(laravel.SlotAware); !ok {
		t.Fatalf("the batch strategy's queue %T does not take its workers' slots", f.Queue)
	}
	q := &slotCounter{Queue: f.Queue}
	f.Queue = q
	f.worker(t, func(c *Config) { c.Concurrency = 3 })
	f.worker(t, func(c *Config) { c.Concurrency = 5 })
	if q.slots != 8 {
		t.Errorf("the queue was told of %d slots, want 3 + 5", q.slots)
	}
}
