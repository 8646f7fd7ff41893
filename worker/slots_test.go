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
	if len(q.atClaim) < 2 || q.atClaim[0] != 3 || q.atClaim[len(q.atClaim)-1] != 1 {
		t.Errorf("slots at each claim %v, want 3 while the first worker ran, then 1 (RunOnce runs one job)", q.atClaim)
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
		h := startHeld(t, f, 5, func(c *Config) { c.StopWhenEmpty = true }, runAll)
		if reserved := h.reservedOnceStarted(t, f, 1); reserved != 1 {
			t.Errorf("%d rows reserved while the first of 5 jobs ran one at a time, want 1", reserved)
		}
		f.wantRows(t, 0, 0)
	})
}

// heldRun is a worker running jobs that each wait for a release.
type heldRun struct {
	started chan struct{} // a job started
	release chan struct{} // a send lets one job finish; closing it, every job
	done    chan error    // run's result
}

// startHeld registers a handler for the welcome fixture's class that reports its start and waits for a
// release, pushes n such jobs, and starts run on a worker configured by mod.
func startHeld(t *testing.T, f *fixture, n int, mod func(*Config), run func(*Worker) error) heldRun {
	t.Helper()
	h := heldRun{started: make(chan struct{}, 16), release: make(chan struct{}), done: make(chan error, 1)}
	f.reg.Register(`App\Jobs\SendWelcomeEmail`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		h.started <- struct{}{}
		<-h.release
		return nil
	}))
	for range n {
		f.push(t, "default", fixture883(t, "welcome"))
	}
	w := f.worker(t, mod)
	go func() { h.done <- run(w) }()
	return h
}

// finish lets every job finish and waits for the run.
func (h heldRun) finish(t *testing.T) {
	t.Helper()
	close(h.release)
	if err := <-h.done; err != nil {
		t.Fatal(err)
	}
}

// reservedOnceStarted waits for n jobs to start, counts the reserved rows, then lets every job finish
// and waits for the run.
func (h heldRun) reservedOnceStarted(t *testing.T, f *fixture, n int) int {
	t.Helper()
	for range n {
		<-h.started
	}
	reserved := reservedRows(t, f)
	h.finish(t)
	return reserved
}

// runAll runs w until it stops.
func runAll(w *Worker) error {
	_, err := w.Run(bg)
	return err
}

// wantGivenBack settles the queue, as a worker's process does on exit, and checks that rows rows are
// left, none of them reserved.
func wantGivenBack(t *testing.T, f *fixture, rows int) {
	t.Helper()
	if err := laravel.Settle(bg, f.Queue); err != nil {
		t.Fatal(err)
	}
	if n, r := len(f.Rows(t)), reservedRows(t, f); n != rows || r != 0 {
		t.Errorf("after the worker returned: %d rows, %d of them reserved; want %d, none reserved", n, r, rows)
	}
}

// reservedRows counts the rows of the jobs table that are reserved.
func reservedRows(t *testing.T, f *fixture) int {
	t.Helper()
	n := 0
	for _, r := range f.Rows(t) {
		if r.ReservedAt != nil {
			n++
		}
	}
	return n
}

// TestSlowJobsReserveNoMoreRowsThanSlots: on the batch strategy at its default claim size, a worker
// whose jobs finish one at a time while the others still run reserves only as many rows as it runs:
// the rows claimed for the slot a finished job frees, not a whole batch that would wait behind the
// busy slots, out of reach of every other worker (PHP's included).
func TestSlowJobsReserveNoMoreRowsThanSlots(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newStrategyFixture(t, testenv.Apart(t, db), "batch")
		if reserved := reservedWhileOneOfFourFinished(t, f); reserved != 4 {
			t.Errorf("%d rows reserved while 4 jobs ran at concurrency 4, want 4", reserved)
		}
		f.wantRows(t, 0, 0)
	})
}

// reservedWhileOneOfFourFinished runs 4 held jobs at concurrency 4, pushes 12 more, lets one job finish,
// and counts the rows reserved once the next job started in its slot; then lets every job finish.
func reservedWhileOneOfFourFinished(t *testing.T, f *fixture) int {
	t.Helper()
	h := startHeld(t, f, 4, func(c *Config) { c.Concurrency = 4; c.StopWhenEmpty = true }, runAll)
	for range 4 {
		<-h.started
	}
	for range 12 {
		f.push(t, "default", fixture883(t, "welcome"))
	}
	h.release <- struct{}{} // one job finishes; the other three keep running
	<-h.started             // the job that took its slot
	reserved := reservedRows(t, f)
	h.finish(t)
	return reserved
}

// TestRunOnceReservesOneRow: RunOnce (queue:work --once) runs one job, and reserves one row for it
// whatever the worker's concurrency.
func TestRunOnceReservesOneRow(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newStrategyFixture(t, testenv.Apart(t, db), "batch")
		h := startHeld(t, f, 5, func(c *Config) { c.Concurrency = 8 }, func(w *Worker) error {
			_, err := w.RunOnce(bg)
			return err
		})
		if reserved := h.reservedOnceStarted(t, f, 1); reserved != 1 {
			t.Errorf("%d rows reserved while RunOnce ran its job, want 1", reserved)
		}
		wantGivenBack(t, f, 4)
	})
}

// TestMaxJobsBoundsTheRowsReserved: a worker that stops after MaxJobs jobs reserves no more rows than
// that, whatever its concurrency.
func TestMaxJobsBoundsTheRowsReserved(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newStrategyFixture(t, testenv.Apart(t, db), "batch")
		h := startHeld(t, f, 6, func(c *Config) { c.Concurrency = 8; c.MaxJobs = 2 }, runAll)
		if reserved := h.reservedOnceStarted(t, f, 2); reserved != 2 {
			t.Errorf("%d rows reserved while the 2 jobs of MaxJobs 2 ran at concurrency 8, want 2", reserved)
		}
		wantGivenBack(t, f, 4)
	})
}

// withLanes gives the fixture's worker the batch strategy in two lanes.
func withLanes(t *testing.T, f *fixture) {
	t.Helper()
	q, err := laravel.NewQueue(f.Conn, laravel.QueueParams{Strategy: "batch", Lanes: 2})
	if err != nil {
		t.Fatal(err)
	}
	f.Queue = q
}

// TestLanesRunEveryJobOnce: a worker on the batch strategy in two lanes runs every job once, each
// completion deleted by the lane that claimed it, and leaves nothing behind.
func TestLanesRunEveryJobOnce(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newStrategyFixture(t, testenv.Apart(t, db), "batch")
		withLanes(t, f)
		var mu sync.Mutex
		runs := map[int64]int{}
		f.reg.Register(`App\Jobs\SendWelcomeEmail`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			mu.Lock()
			runs[j.ID]++
			mu.Unlock()
			return nil
		}))
		const n = 300
		for range n {
			f.push(t, "default", fixture883(t, "welcome"))
		}
		if _, err := f.worker(t, func(c *Config) { c.Concurrency = 16; c.StopWhenEmpty = true }).Run(bg); err != nil {
			t.Fatal(err)
		}
		if len(runs) != n {
			t.Errorf("%d of %d jobs ran", len(runs), n)
		}
		for id, k := range runs {
			if k != 1 {
				t.Errorf("job %d ran %d times", id, k)
			}
		}
		f.wantRows(t, 0, 0)
	})
}

// TestLanesReserveNoMoreRowsThanSlots: in two lanes too, a worker whose jobs finish one at a time
// reserves only as many rows as it runs.
func TestLanesReserveNoMoreRowsThanSlots(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newStrategyFixture(t, testenv.Apart(t, db), "batch")
		withLanes(t, f)
		if reserved := reservedWhileOneOfFourFinished(t, f); reserved != 4 {
			t.Errorf("%d rows reserved while 4 jobs ran at concurrency 4 in two lanes, want 4", reserved)
		}
		f.wantRows(t, 0, 0)
	})
}
