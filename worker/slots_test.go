package worker

import (
	"context"
	"sync"
	"testing"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// slotCounter is the real queue, adding up the slots its workers announce and noting how many there
// were at each claim.
type slotCounter struct {
	laravel.Queue
	mu      sync.Mutex
	slots   int
	atClaim []int
}

func (q *slotCounter) AddSlots(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.slots += n
}

func (q *slotCounter) JobClaim(ctx context.Context, p *laravel.JobClaimParams) ([]*laravel.Job, error) {
	q.mu.Lock()
	q.atClaim = append(q.atClaim, q.slots)
	q.mu.Unlock()
	return q.Queue.JobClaim(ctx, p)
}

// TestWorkersAnnounceTheirSlots: a worker on a queue that sizes its claims and groups its deletes by
// its workers tells it how many jobs it runs at once while it runs (Run, RunOnce), and takes them back
// when it returns, so that a worker built and dropped does not count.
func TestWorkersAnnounceTheirSlots(t *testing.T) {
	t.Parallel()
	f := newStrategyFixture(t, testenv.SQLite(t), "batch")
	if _, ok := f.Queue.(laravel.SlotAware); !ok {
		t.Fatalf("the batch strategy's queue %T does not take its workers' slots", f.Queue)
	}
	q := &slotCounter{Queue: f.Queue}
	f.Queue = q
	three := f.worker(t, func(c *Config) { c.Concurrency = 3; c.StopWhenEmpty = true })
	five := f.worker(t, func(c *Config) { c.Concurrency = 5 })
	if q.slots != 0 {
		t.Fatalf("built, not running: the queue was told of %d slots, want 0", q.slots)
	}
	if _, err := three.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := five.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(q.atClaim) < 2 || q.atClaim[0] != 3 || q.atClaim[len(q.atClaim)-1] != 5 {
		t.Errorf("slots at each claim %v, want 3 while the first worker ran, then 5", q.atClaim)
	}
	if q.slots != 0 {
		t.Errorf("after both returned the queue counts %d slots, want 0", q.slots)
	}
}

// TestOneJobAtATimeReservesOneRow: a worker at the library's defaults (one job at a time) on the batch
// strategy at its default claim size holds one row reserved while its job runs, as PHP's worker does,
// not a batch of rows that would wait behind it.
func TestOneJobAtATimeReservesOneRow(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newStrategyFixture(t, testenv.Apart(t, db), "batch")
		started, release := make(chan struct{}, 5), make(chan struct{})
		f.reg.Register(`App\Jobs\SendWelcomeEmail`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			started <- struct{}{}
			<-release
			return nil
		}))
		for range 5 {
			f.push(t, "default", fixture883(t, "welcome"))
		}
		w := f.worker(t, func(c *Config) { c.StopWhenEmpty = true })
		done := make(chan error, 1)
		go func() {
			_, err := w.Run(bg)
			done <- err
		}()
		<-started
		reserved := 0
		for _, r := range f.Rows(t) {
			if r.ReservedAt != nil {
				reserved++
			}
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if reserved != 1 {
			t.Errorf("%d rows reserved while the first of 5 jobs ran one at a time, want 1", reserved)
		}
		f.wantRows(t, 0, 0)
	})
}
