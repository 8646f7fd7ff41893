package laravel_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestPHPInterop shares the tables Laravel 8.83's own migrations created with a real PHP application:
// rows PHP dispatched are claimed here; a row released here is run by PHP's worker; a row failed here
// is listed and retried by PHP's queue:failed and queue:retry; PHP's queue:restart signal, unique
// locks and batches are read and written here.
func TestPHPInterop(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		app := phpapp.New(t, db)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		prefix := app.Getenv("CACHE_PREFIX")
		c := queuetest.Open(t, laravel.OpenParams{Dialect: laravel.Dialect(db.Dialect), DSN: db.DSN, CachePrefix: prefix})
		q, err := laravel.NewQueue(c, laravel.QueueParams{})
		if err != nil {
			t.Fatal(err)
		}
		s := &queuetest.Setup{DB: db, Conn: c, Queue: q, Strategy: q.Strategy()}

		d, err := app.Dispatch(ctx, "plain", phpapp.Count(2))
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().Unix()
		jobs, err := q.JobClaim(ctx, &laravel.JobClaimParams{Queue: d.Jobs[0].Queue, Now: now, RetryAfter: 90, Limit: 2})
		if err != nil || len(jobs) != 2 || jobs[0].ID != d.Jobs[0].ID || jobs[1].ID != d.Jobs[1].ID {
			t.Fatalf("claimed %v, %v; want PHP's rows %d and %d", jobs, err, d.Jobs[0].ID, d.Jobs[1].ID)
		}
		if err := q.JobRelease(ctx, jobs[0], &laravel.JobReleaseParams{Now: now}); err != nil {
			t.Fatal(err)
		}
		if err := q.JobFail(ctx, jobs[1], &laravel.JobFailParams{
			Connection: "database", Queue: jobs[1].Queue, FailedAt: time.Now().UTC(),
			Exception: "RuntimeException: failed in Go in worker.go:1\nStack trace:\n#0 {main}",
		}); err != nil {
			t.Fatal(err)
		}
		failed := s.FailedRows(t)
		if len(failed) != 1 || failed[0].UUID != d.Jobs[1].UUID {
			t.Fatalf("failed_jobs = %+v, want the row of %s", failed, d.Jobs[1].UUID)
		}
		out, err := app.Artisan(ctx, "queue:failed")
		if err != nil || !strings.Contains(out, d.Jobs[1].UUID) || !strings.Contains(out, "App\\Jobs\\Plain") {
			t.Fatalf("PHP's queue:failed does not list the job failed here: %v\n%s", err, out)
		}
		if out, err := app.Artisan(ctx, "queue:retry", "all"); err != nil {
			t.Fatalf("queue:retry all: %v\n%s", err, out)
		}
		rows := s.Rows(t)
		if len(rows) != 2 || rows[0].Attempts != 1 || rows[1].Attempts != 0 || !strings.Contains(string(rows[1].Payload), d.Jobs[1].UUID) {
			t.Fatalf("after release here and retry in PHP: rows %+v", rows)
		}
		if out, err := app.Artisan(ctx, "queue:work", "database", "--stop-when-empty", "--tries=3", "--queue="+d.Jobs[0].Queue); err != nil {
			t.Fatalf("PHP worker: %v\n%s", err, out)
		}
		entries, err := app.Log(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ran := map[string]int{}
		for _, e := range entries {
			ran[e.UUID] = e.Attempts
		}
		if len(s.Rows(t)) != 0 || ran[d.Jobs[0].UUID] != 2 || ran[d.Jobs[1].UUID] != 1 {
			t.Fatalf("PHP ran %v; want %s at attempt 2 (released here) and %s at attempt 1 (retried)", ran, d.Jobs[0].UUID, d.Jobs[1].UUID)
		}

		if _, err := app.Artisan(ctx, "queue:restart"); err != nil {
			t.Fatal(err)
		}
		v, ok, err := c.CacheGet(ctx, "illuminate:queue:restart")
		if n, isNum := laravel.UnserializeNumber(v); err != nil || !ok || !isNum || n < now-60 {
			t.Fatalf("restart signal written by PHP = %q, %v, %v", v, ok, err)
		}

		if _, err := app.Dispatch(ctx, "unique", phpapp.Key("k1")); err != nil {
			t.Fatal(err)
		}
		lock := `laravel_unique_job:App\Jobs\Uniquek1`
		if !lockHeld(t, c, prefix+lock) {
			t.Fatalf("PHP did not take the unique lock %s", prefix+lock)
		}
		if err := c.CacheLockForceRelease(ctx, lock); err != nil {
			t.Fatal(err)
		}
		if lockHeld(t, c, prefix+lock) {
			t.Fatal("unique lock still held after force release")
		}

		d, err = app.Dispatch(ctx, "batch", phpapp.Count(2), phpapp.AllowFailures())
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.BatchFind(ctx, d.Batch)
		if err != nil || b.TotalJobs != 2 || b.PendingJobs != 2 || !strings.HasPrefix(string(b.Options), "a:") {
			t.Fatalf("batch written by PHP = %+v, %v", b, err)
		}
		// A member fails here; PHP's queue:retry-batch finds it through failed_job_ids and pushes it again.
		var others []int64 // the unique job is still queued ahead of the batch
		for _, r := range s.Rows(t) {
			if r.ID != d.Jobs[0].ID {
				others = append(others, r.ID)
			}
		}
		member, err := q.JobClaim(ctx, &laravel.JobClaimParams{Queue: d.Jobs[0].Queue, Now: time.Now().Unix(), RetryAfter: 90, Limit: 1, ExcludeIDs: others})
		if err != nil || len(member) != 1 || member[0].ID != d.Jobs[0].ID {
			t.Fatalf("claim batch member: %v, %v", member, err)
		}
		if err := q.JobFail(ctx, member[0], &laravel.JobFailParams{Connection: "database", Queue: member[0].Queue, Exception: "E", FailedAt: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
		counts, err := c.BatchRecordFailure(ctx, d.Batch, d.Jobs[0].UUID)
		if err != nil || counts.PendingJobs != 2 || counts.FailedJobs != 1 {
			t.Fatalf("record failure: %+v, %v", counts, err)
		}
		if out, err := app.Artisan(ctx, "queue:retry-batch", d.Batch); err != nil {
			t.Fatalf("PHP's queue:retry-batch on a batch updated here: %v\n%s", err, out)
		}
		rows = s.Rows(t)
		last := rows[len(rows)-1]
		if len(rows) != 3 || !strings.Contains(string(last.Payload), d.Jobs[0].UUID) || last.Attempts != 0 || len(s.FailedRows(t)) != 0 {
			t.Fatalf("after queue:retry-batch: rows %+v", rows)
		}
	})
}

func lockHeld(t *testing.T, c *laravel.Conn, key string) bool {
	t.Helper()
	var n int
	q := queuetest.Rebind(c, "select count(*) from "+queuetest.Q(c, c.Tables().CacheLocks)+" where "+queuetest.Q(c, "key")+" = ?")
	if err := queuetest.DB(c).QueryRow(q, key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}
