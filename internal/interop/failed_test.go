package interop

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/worker"
)

// TestGoFailurePHPCommands fails jobs under the Go worker and drives PHP's queue:failed, queue:retry
// and queue:forget on them; a retried job then runs again, under PHP or under Go.
func TestGoFailurePHPCommands(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		// App\Jobs\Failing fails its first run under Go, and succeeds when Go runs it again.
		var mu sync.Mutex
		seen := map[string]bool{}
		s.reg.Register(`App\Jobs\Failing`, s.record(func(job *handlers.Job) error {
			mu.Lock()
			defer mu.Unlock()
			if seen[job.UUID] {
				return nil
			}
			seen[job.UUID] = true
			reason, _ := job.Command.Get("reason")
			return errors.New(reason.(string))
		}))
		d := s.app.MustDispatch(ctx, "failing", phpapp.Count(3), phpapp.OnQueue("critical"))
		st := s.drain(t, ctx, func(c *worker.Config) { c.Queues = []string{"critical"} })
		if st.Failed != 3 {
			t.Fatalf("Go failed %d jobs, want 3; stats %+v", st.Failed, st)
		}

		failed := s.failed(t, ctx)
		if len(failed) != 3 {
			t.Fatalf("failed_jobs has %d rows, want 3", len(failed))
		}
		for _, f := range failed {
			if f.Connection != "database" || f.Queue != "critical" || !strings.HasPrefix(f.Exception, "RuntimeException: failing ") ||
				!strings.Contains(f.Exception, "Stack trace:\n#0 ") || f.FailedAt == "" {
				t.Errorf("failed_jobs row %+v", f)
			}
		}
		out := s.artisan(t, ctx, "queue:failed")
		for _, j := range d.Jobs {
			if !strings.Contains(out, j.UUID) {
				t.Errorf("queue:failed does not list %s:\n%s", j.UUID, out)
			}
		}
		if !strings.Contains(out, `App\Jobs\Failing`) || !strings.Contains(out, "critical") || !strings.Contains(out, "database") {
			t.Errorf("queue:failed lacks the class, queue or connection:\n%s", out)
		}

		// Retry one for PHP, forget one, retry one for Go.
		s.artisan(t, ctx, "queue:retry", d.Jobs[0].UUID)
		s.artisan(t, ctx, "queue:forget", d.Jobs[1].UUID)
		rows := s.jobs(t, ctx)
		if len(rows) != 1 || rows[0].UUID() != d.Jobs[0].UUID || rows[0].Queue != "critical" || rows[0].Attempts != 0 {
			t.Fatalf("after queue:retry, jobs = %+v", rows)
		}
		s.phpDrain(t, ctx, "--queue=critical")
		s.artisan(t, ctx, "queue:retry", d.Jobs[2].UUID)
		if st := s.drain(t, ctx, func(c *worker.Config) { c.Queues = []string{"critical"} }); st.Processed != 1 {
			t.Errorf("Go stats after the second retry %+v, want 1 processed", st)
		}

		log := byClass(s.log(t, ctx))
		var phpRun, goRerun bool
		for _, e := range log[`App\Jobs\Failing`] {
			phpRun = phpRun || e.Runner == "php" && e.UUID == d.Jobs[0].UUID && e.Attempts == 1
			goRerun = goRerun || e.Runner == "go" && e.UUID == d.Jobs[2].UUID && e.Attempts == 1
		}
		if !phpRun || !goRerun {
			t.Errorf("after retry: PHP ran the first %v, Go ran the third %v; log %+v", phpRun, goRerun, log[`App\Jobs\Failing`])
		}
		if hook := log[`App\Jobs\Failing@failed`]; len(hook) != 1 || hook[0].Runner != "php" {
			t.Errorf("failed() hooks = %+v, want the one PHP ran when the retried job failed again", hook)
		}
		failed = s.failed(t, ctx)
		if len(failed) != 1 || failed[0].UUID != d.Jobs[0].UUID || !strings.HasPrefix(failed[0].Exception, "RuntimeException: failing 1") {
			t.Errorf("failed_jobs = %+v, want only PHP's new failure of the first job", failed)
		}
		if rows := s.jobs(t, ctx); len(rows) != 0 {
			t.Errorf("%d jobs left", len(rows))
		}
	})
}

// failedHooks is the PHP companion job in testdata/laravel that runs chain catch callbacks and failed()
// for Go.
const failedHooks = `App\Jobs\RunFailedHooks`

// TestGoFailurePHPHooks fails jobs under Go with the failed-hooks companion configured: PHP then runs
// the job's failed() method and the chain's catch callback, once each.
func TestGoFailurePHPHooks(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		s.registerMirrors(`App\Jobs\Secret`)
		failing := s.app.MustDispatch(ctx, "failing")
		chain := s.app.MustDispatch(ctx, "chain", phpapp.Count(3), phpapp.Fail(1))
		secret := s.app.MustDispatch(ctx, "encrypted")
		s.reg.Register(`App\Jobs\Secret`, handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
			job.Fail(errors.New("sealed shut"))
			return nil
		}))
		if st := s.drain(t, ctx, func(c *worker.Config) { c.FailedCompanion = failedHooks }); st.Failed != 3 {
			t.Fatalf("Go stats %+v, want 3 failed", st)
		}
		if rows := s.jobs(t, ctx); len(rows) != 3 {
			t.Fatalf("jobs = %d rows, want one companion per failure", len(rows))
		}
		s.phpDrain(t, ctx)

		log := byClass(s.log(t, ctx))
		if h := log[`App\Jobs\Failing@failed`]; len(h) != 1 || h[0].Runner != "php" || !strings.Contains(h[0].Props["message"].(string), "failing 1") {
			t.Errorf("failed() runs = %+v, want one by PHP with the Go error", h)
		}
		if c := log["chain.catch"]; len(c) != 1 || c[0].Runner != "php" || !strings.Contains(c[0].Props["message"].(string), `App\Jobs\ChainLink fails`) {
			t.Errorf("chain.catch runs = %+v, want one by PHP with the Go error", c)
		}
		if n := len(log[`App\Jobs\ChainLink`]); n != 1 {
			t.Errorf("chain links ran %d times, want only the failed head", n)
		}
		failed := s.failed(t, ctx)
		uuids := map[string]bool{}
		for _, f := range failed {
			uuids[f.UUID] = true
		}
		if len(failed) != 3 || !uuids[failing.Jobs[0].UUID] || !uuids[chain.Jobs[0].UUID] || !uuids[secret.Jobs[0].UUID] {
			t.Errorf("failed_jobs = %+v, want the three jobs Go failed and no companion", failed)
		}
		if rows := s.jobs(t, ctx); len(rows) != 0 {
			t.Errorf("%d jobs left", len(rows))
		}
	})
}
