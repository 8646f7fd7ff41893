package worker

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// stopWhileOneRuns pushes four jobs, runs a worker of one slot over f.Queue until the first job runs
// (the others claimed ahead by a batch queue), and stops it with a signal. The job runs until release
// is closed; done is closed when Run returns.
func stopWhileOneRuns(t *testing.T, f *fixture) (release, done chan struct{}) {
	t.Helper()
	started := make(chan struct{})
	release, done = make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		once.Do(func() { close(started) })
		<-release
		return nil
	}))
	for range 4 {
		f.push(t, "default", envelope(t, jobClass, "", nil))
	}
	w := f.worker(t, func(c *Config) { c.Concurrency, c.ShutdownGrace = 1, time.Minute })
	ctx, cancel := context.WithCancel(bg)
	go func() {
		defer close(done)
		_, _ = w.Run(ctx)
	}()
	<-started
	cancel()
	return release, done
}

// TestStopGivesBackUnstartedAtOnce: on a stop signal, rows claimed ahead (the batch strategy's
// prefetch) are given back at once, while a running job still runs, not after it finishes.
func TestStopGivesBackUnstartedAtOnce(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		q, err := laravel.NewQueue(f.Conn, laravel.QueueParams{Strategy: "batch", Batch: 8})
		if err != nil {
			t.Fatal(err)
		}
		f.Queue = q
		release, done := stopWhileOneRuns(t, f)
		deadline := time.Now().Add(10 * time.Second)
		for unreserved := 0; unreserved != 3; {
			unreserved = 0
			for _, r := range f.Rows(t) {
				if r.ReservedAt == nil {
					unreserved++
				}
			}
			if time.Now().After(deadline) {
				close(release)
				t.Fatalf("%d rows given back while a job still runs, want 3", unreserved)
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(release)
		<-done
		f.wantRows(t, 3, 0)
	})
}

// flakyReturns is a prefetching queue whose first give-backs fail as a lost connection does, before
// reaching the database.
type flakyReturns struct {
	laravel.Queue
	p     laravel.Prefetcher
	mu    sync.Mutex
	fails int
}

func (q *flakyReturns) JobReturnPrefetched(ctx context.Context) error {
	q.mu.Lock()
	fail := q.fails > 0
	q.fails--
	q.mu.Unlock()
	if fail {
		return fmt.Errorf("give back: %w", driver.ErrBadConn)
	}
	return q.p.JobReturnPrefetched(ctx)
}

// TestStopGivesBackUnstartedOnceConnected: rows claimed ahead whose give-back on a stop signal meets a
// lost connection are given back once it answers again, not left to expire (and, with --tries 1, fail
// unrun at the next worker's claim).
func TestStopGivesBackUnstartedOnceConnected(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	q, err := laravel.NewQueue(f.Conn, laravel.QueueParams{Strategy: "batch", Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	f.Queue = &flakyReturns{Queue: q, p: q.(laravel.Prefetcher), fails: 3}
	release, done := stopWhileOneRuns(t, f)
	close(release)
	<-done // Run waits for the give-back
	f.wantRows(t, 3, 0)
	for _, r := range f.Rows(t) {
		if r.ReservedAt != nil || r.Attempts != 0 {
			t.Fatalf("row %+v after the stop: want the 3 rows claimed ahead given back, their attempt undone", r)
		}
	}
}
