package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/worker"
)

// TestBookkeepingThroughOutage kills the database server while a batch job's handler runs and starts
// it again a second later: the job's delete is kept and applied once the server is back, and its
// batch's counters after it, so the batch finishes as Bus::findBatch() expects.
func TestBookkeepingThroughOutage(t *testing.T) {
	srv := faults.StartMariaDB(t)
	d := newDrain(t, srv.Database(), laravel.SchemaParams{}, 0)
	const batchID = "a346ab68-af16-4dcc-adb9-10c0f54940f0" // the fixture's
	if _, err := queuetest.DB(d.Conn).Exec("insert into "+d.Conn.Tables().JobBatches+
		" (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, created_at) values (?, 'demo', 1, 1, 0, '[]', 'a:0:{}', ?)",
		batchID, time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	if _, err := d.Queue.JobPush(bg, &laravel.JobPushParams{Queue: "default", Payload: fixtures.Laravel883()["batch"].Payload, Now: now, AvailableAt: now}); err != nil {
		t.Fatal(err)
	}
	killed := make(chan struct{})
	reg := handlers.NewRegistry()
	reg.Register(`App\Jobs\BatchPart`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error {
		srv.Kill(t) // the job succeeds; its completion meets a dead server
		close(killed)
		return nil
	}))
	w := d.worker(t, reg, func(c *worker.Config) { c.Tries = 1; c.BatchCallbacks = worker.BatchCallbacksRun })
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.Run(bg)
	}()
	<-killed
	time.Sleep(time.Second) // the outage
	srv.Start(t)
	<-done
	b, err := d.Conn.BatchFind(bg, batchID)
	if err != nil {
		t.Fatal(err)
	}
	if b.PendingJobs != 0 || b.FinishedAt == nil || len(d.Rows(t)) != 0 || len(d.FailedRows(t)) != 0 {
		t.Errorf("batch pending %d finished_at %v, %d jobs rows, %d failed rows; want the batch finished and the job gone",
			b.PendingJobs, b.FinishedAt, len(d.Rows(t)), len(d.FailedRows(t)))
	}
	if st := w.Stats(); st.Processed != 1 || st.Unapplied != 0 {
		t.Errorf("stats %+v", st)
	}
}
