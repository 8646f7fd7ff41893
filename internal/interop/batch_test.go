package interop

import (
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/worker"
)

// batchCallbacks is the PHP companion job in testdata/laravel that runs batch callbacks for Go.
const batchCallbacks = `App\Jobs\RunBatchCallbacks`

// TestGoBatchPHPCallbacks runs PHP-dispatched batches with the Go worker. PHP's Bus::findBatch then
// reports the counts, finished_at, cancellation and failed job ids, and the batch's then, catch and
// finally callbacks each run exactly once, under PHP, through the companion job Go queues.
func TestGoBatchPHPCallbacks(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		s.registerMirrors()
		ok := s.app.MustDispatch(ctx, "batch", phpapp.Count(4))
		bad := s.app.MustDispatch(ctx, "batch", phpapp.Count(3), phpapp.Fail(2))
		st := s.drain(t, ctx, func(c *worker.Config) { c.BatchCompanion = batchCallbacks })
		if st.Processed != 6 || st.Failed != 1 {
			t.Errorf("Go stats %+v, want 6 processed and 1 failed", st)
		}
		if n := len(byClass(s.log(t, ctx))[`App\Jobs\BatchMember`]); n != 7 {
			t.Errorf("Go ran %d batch members, want 7", n)
		}

		b, err := s.app.FindBatch(ctx, ok.Batch)
		if err != nil {
			t.Fatal(err)
		}
		if b.TotalJobs != 4 || b.PendingJobs != 0 || b.ProcessedJobs != 4 || b.FailedJobs != 0 || !b.Finished || b.FinishedAt == nil || b.Cancelled {
			t.Errorf("PHP sees the successful batch as %+v", b)
		}
		b, err = s.app.FindBatch(ctx, bad.Batch)
		if err != nil {
			t.Fatal(err)
		}
		failedUUID := bad.Jobs[1].UUID
		if b.TotalJobs != 3 || b.PendingJobs != 1 || b.FailedJobs != 1 || len(b.FailedJobIDs) != 1 || b.FailedJobIDs[0] != failedUUID ||
			!b.Cancelled || !b.HasFailures || b.FinishedAt == nil {
			t.Errorf("PHP sees the failed batch as %+v, want 1 pending, failed id %s, cancelled", b, failedUUID)
		}

		// The callbacks wait for a PHP worker: one companion for the first batch (then and finally); for
		// the second, catch and finally come with one companion when the failure was the last job to
		// run, else with two.
		rows := s.jobs(t, ctx)
		if len(rows) < 2 || len(rows) > 3 {
			t.Fatalf("jobs = %+v, want two or three companion jobs", rows)
		}
		for _, r := range rows {
			if !strings.Contains(r.Payload, `"displayName":"App\\Jobs\\RunBatchCallbacks"`) {
				t.Errorf("left in jobs: %s", r.Payload)
			}
		}
		// As a Go worker killed while it held the companions (claimed, no handler, not yet handed
		// back) leaves them: an attempt spent. PHP must still run them.
		jobs := s.app.Table("jobs")
		if db.Schema != "" {
			jobs = db.Schema + "." + jobs
		}
		if _, err := db.Open(t).Exec("update " + jobs + " set attempts = 1"); err != nil {
			t.Fatal(err)
		}
		s.phpDrain(t, ctx)
		log := byClass(s.log(t, ctx))
		count := func(kind, batch string) int {
			n := 0
			for _, e := range log[kind] {
				if e.Props["batch"] == batch {
					if e.Runner != "php" {
						t.Errorf("%s ran under %s", kind, e.Runner)
					}
					n++
				}
			}
			return n
		}
		for _, c := range []struct {
			kind, batch string
			want        int
		}{
			{"batch.then", ok.Batch, 1}, {"batch.finally", ok.Batch, 1}, {"batch.catch", ok.Batch, 0},
			{"batch.then", bad.Batch, 0}, {"batch.finally", bad.Batch, 1}, {"batch.catch", bad.Batch, 1},
		} {
			if got := count(c.kind, c.batch); got != c.want {
				t.Errorf("%s ran %d times for batch %s, want %d", c.kind, got, c.batch, c.want)
			}
		}
		if e := log["batch.catch"]; len(e) == 1 && e[0].Props["message"] == "" {
			t.Errorf("catch saw no exception message: %+v", e[0].Props)
		}
		if rows := s.jobs(t, ctx); len(rows) != 0 {
			t.Errorf("%d jobs left", len(rows))
		}
		if f := s.failed(t, ctx); len(f) != 1 || f[0].UUID != failedUUID {
			t.Errorf("failed_jobs = %+v, want the failed member only", f)
		}
	})
}
