package faults_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/worker"
)

// TestDeadlockStormLegacyIndex drains one queue with PHP workers and Go workers of two claim
// strategies together, on MariaDB with Laravel 5.4's (queue, reserved_at) index, jobs that release
// themselves once among jobs that succeed: deadlocks the server picks are retried, so no job is
// failed by one, lost or run twice. Go claims as before MariaDB 10.6 (plain FOR UPDATE, for
// Laravel's claim and for batch's), and with the server's SKIP LOCKED, where batch takes a plain FOR
// UPDATE on this index too; either locks the index ranges concurrent claims, releases and deletes
// fight over.
func TestDeadlockStormLegacyIndex(t *testing.T) {
	for _, version := range []string{"10.5.0-MariaDB", ""} {
		name := version
		if name == "" {
			name = "server"
		}
		t.Run(name, func(t *testing.T) { deadlockStormLegacyIndex(t, version) })
	}
}

func deadlockStormLegacyIndex(t *testing.T, version string) {
	db := testenv.MySQL(t)
	app := phpapp.New(t, db)
	ctx, cancel := context.WithTimeout(bg, 5*time.Minute)
	defer cancel()
	conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.MySQL, DSN: db.DSN, ServerVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := app.DB().ExecContext(ctx, "alter table jobs drop index jobs_queue_index, add index jobs_queue_reserved_at_index (queue, reserved_at)"); err != nil {
		t.Fatal(err)
	}
	plain := app.MustDispatch(ctx, "plain", phpapp.Count(size(150, 1500)), phpapp.OnQueue("storm"))
	releasing := app.MustDispatch(ctx, "releasing", phpapp.Count(size(50, 500)), phpapp.OnQueue("storm"))

	ledger := faults.NewLedger()
	reg := handlers.NewRegistry()
	reg.Register(`App\Jobs\Plain`, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error {
		ledger.Record(j.UUID)
		return nil
	}))
	reg.Register(`App\Jobs\Releasing`, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error {
		if j.Attempts == 1 {
			j.Release(0)
		}
		return nil
	}))
	var php []*phpapp.Worker
	for range 3 {
		php = append(php, app.StartWorker(ctx, "--queue=storm", "--stop-when-empty", "--sleep=0", "--tries=3"))
	}
	var wg sync.WaitGroup
	for _, strategy := range []string{"delete-retry", "batch"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q, err := laravel.NewQueue(conn, laravel.QueueParams{Strategy: strategy, Batch: 8})
			if err != nil {
				t.Error(err)
				return
			}
			cfg := worker.Defaults()
			cfg.Queues, cfg.Concurrency, cfg.Tries, cfg.Timeout, cfg.StopWhenEmpty, cfg.Sleep, cfg.CacheEnabled = []string{"storm"}, 8, 3, 0, true, 20*time.Millisecond, false
			w, err := worker.New(worker.Params{Queue: q, Conn: conn, Registry: reg, Config: cfg, Logger: testLogger()})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := w.Run(ctx); err != nil {
				t.Error(err)
			}
			_ = laravel.Settle(bg, q)
		}()
	}
	wg.Wait()
	for _, p := range php {
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	log, err := app.Log(ctx)
	if err != nil {
		t.Fatal(err)
	}
	phpRuns := 0
	for _, e := range log {
		if e.Runner == "php" && e.Class == `App\Jobs\Plain` {
			ledger.Record(e.UUID)
			phpRuns++
		}
	}
	var uuids, failed, left []string
	for _, j := range plain.Jobs {
		uuids = append(uuids, j.UUID)
	}
	fails, err := app.FailedJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadlocked := 0
	for _, f := range fails {
		failed = append(failed, f.UUID)
		if strings.Contains(strings.ToLower(f.Exception), "deadlock") {
			deadlocked++
		}
	}
	rows, err := app.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		left = append(left, r.UUID())
	}
	r := ledger.Check(uuids, failed, left)
	r.WronglyFailed = len(fails) // no job of this storm should fail at all
	faults.Report(t, "deadlock storm, legacy index, PHP and Go workers (mysql)", r)
	t.Logf("plain jobs run by PHP %d, releasing jobs %d, failed rows %d (deadlock %d), rows left %d, server deadlocks %d",
		phpRuns, len(releasing.Jobs), len(fails), deadlocked, len(rows), conn.Stats().Deadlocks)
	if r.Lost != 0 || r.Duplicated != 0 || len(fails) != 0 || len(rows) != 0 {
		t.Errorf("%v, %d failed by a deadlock, %d rows left; want none", r, deadlocked, len(rows))
	}
}
