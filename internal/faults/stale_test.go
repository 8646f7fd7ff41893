package faults_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/worker"
)

// TestStaleWorker stops a worker process (SIGSTOP) while it runs two jobs, lets their reservations
// expire and another worker claim them, then lets the first one continue (SIGCONT): its delete and
// its fail find the claims gone, so the rows the second worker holds stay untouched and nothing lands
// in failed_jobs.
func TestStaleWorker(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		const retryAfter = 1
		d := newDrain(t, db, laravel.SchemaParams{}, 0)
		ok, failing := d.pushClass(t, slowClass), d.pushClass(t, slowFailClass)
		d.uuids = []string{ok, failing}
		ledger := filepath.Join(t.TempDir(), "ledger")
		// The second worker's short retry_after lets it take the stale worker's jobs soon; the stale
		// worker's long one keeps it from taking them back (its grouped delete may claim ahead) when
		// a loaded machine delays the second worker's renewals. Once continued, it completes its two
		// jobs and stops (--max-jobs 2).
		stale := startWorker(t, d, ledger, "--concurrency", "2", "--tries", "1", "--retry-after", "60",
			"--sleep", "0.05", "--timeout", "0", "--stop-when-empty", "--max-jobs", "2")
		waitLedger(t, stale, ledger, 2)
		stale.signal(syscall.SIGSTOP)

		// Another worker takes both jobs once their reservations expire, and holds them.
		hold, took := make(chan struct{}), make(chan struct{}, 2)
		reg := handlers.NewRegistry()
		holding := handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			d.ledger.Record(j.UUID)
			took <- struct{}{}
			<-hold
			return nil
		})
		reg.Register(slowClass, holding)
		reg.Register(slowFailClass, holding)
		cfg := worker.Defaults()
		cfg.Concurrency, cfg.Tries, cfg.RetryAfter, cfg.Timeout, cfg.Sleep = 2, 0, retryAfter*time.Second, 0, 50*time.Millisecond
		w, err := worker.New(worker.Params{Queue: d.Queue, Conn: d.Conn, Registry: reg, Config: cfg, Logger: testLogger()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(bg)
		defer stop()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = w.Run(ctx)
		}()
		<-took
		<-took

		// The stale worker continues: its completions must not touch the rows held now.
		stale.signal(syscall.SIGCONT)
		<-stale.done
		rows := d.Rows(t)
		if len(rows) != 2 || len(d.FailedRows(t)) != 0 {
			t.Fatalf("after the stale worker: %d jobs rows, %d failed rows; want both rows still held, none failed", len(rows), len(d.FailedRows(t)))
		}
		for _, r := range rows {
			if r.ReservedAt == nil || r.Attempts != 2 {
				t.Errorf("row %d: reserved_at %v attempts %d; want held by the second worker (attempt 2)", r.ID, r.ReservedAt, r.Attempts)
			}
		}
		close(hold)
		stop() // the running jobs finish first
		<-done
		if err := d.ledger.Load(ledger); err != nil {
			t.Fatal(err)
		}
		r := d.result(t)
		// Each job ran twice by design (the stale run and the new one): only the tables are judged.
		faults.Report(t, "stale worker, SIGSTOP past retry_after ("+db.Dialect+")", faults.Result{Jobs: r.Jobs, Lost: r.Lost, WronglyFailed: r.WronglyFailed, Duplicated: r.Duplicated - 2})
		if r.Lost != 0 || r.WronglyFailed != 0 || len(d.Rows(t)) != 0 {
			t.Errorf("%v; want none lost or failed and the table empty", r)
		}
	})
}
