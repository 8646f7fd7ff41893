package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/worker"
)

// TestPHPDispatchGoWorks dispatches every kind of job from PHP. The Go worker runs those it has
// handlers for, by Laravel's rules; the rest (closures, listeners, notifications, mailables) it
// leaves, and PHP's own worker then runs them. Nothing is lost, nothing runs twice.
func TestPHPDispatchGoWorks(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		s.registerMirrors()
		a := s.app
		queued := map[string]*phpapp.Dispatched{
			"plain":      a.MustDispatch(ctx, "plain"),
			"delayed":    a.MustDispatch(ctx, "delayed"),
			"flaky":      a.MustDispatch(ctx, "flaky", phpapp.Fail(2), phpapp.Tries(3), phpapp.Backoff(0)),
			"maxexc":     a.MustDispatch(ctx, "flaky", phpapp.Fail(5), phpapp.Tries(10), phpapp.MaxExceptions(2), phpapp.Backoff(0)),
			"retryuntil": a.MustDispatch(ctx, "retry-until", phpapp.Seconds(600), phpapp.Fail(1)),
			"slow":       a.MustDispatch(ctx, "slow", phpapp.Seconds(30), phpapp.Timeout(time.Second)),
			"unique":     a.MustDispatch(ctx, "unique", phpapp.Key("k1")),
			"encrypted":  a.MustDispatch(ctx, "encrypted"),
			"model":      a.MustDispatch(ctx, "model"),
			"raw":        a.MustDispatch(ctx, "raw"),
			"typed":      a.MustDispatch(ctx, "typed"),
			// Only PHP can run these.
			"closure":      a.MustDispatch(ctx, "closure"),
			"listener":     a.MustDispatch(ctx, "listener"),
			"notification": a.MustDispatch(ctx, "notification"),
			"mail":         a.MustDispatch(ctx, "mail"),
		}
		if again := a.MustDispatch(ctx, "unique", phpapp.Key("k1")); len(again.Jobs) != 0 {
			t.Fatalf("PHP accepted a second unique dispatch while the first is queued")
		}

		st := s.drain(t, ctx, nil)
		// A job handed back can be claimed once more by a claim that started before it was handed back;
		// it is then handed back again, never run.
		if st.LeftForPHP < 4 || st.Processed != 8 || st.Failed != 2 {
			t.Errorf("Go stats %+v, want 4 or more left for PHP (closure, listener, notification, mail), 8 processed, 2 failed", st)
		}
		log := byClass(s.log(t, ctx))
		wantRuns := map[string]int{`App\Jobs\Plain`: 1, `App\Jobs\Flaky`: 3 + 2, `App\Jobs\RetryUntil`: 2, `App\Jobs\Unique`: 1,
			`App\Jobs\Secret`: 1, `App\Jobs\WithModel`: 1, `App\Jobs\RawHandler@handle`: 1, `App\Jobs\Typed`: 1}
		for class, n := range wantRuns {
			if len(log[class]) != n {
				t.Errorf("Go ran %s %d times, want %d", class, len(log[class]), n)
			}
			for _, e := range log[class] {
				if e.Runner != "go" {
					t.Errorf("%s ran under %s", class, e.Runner)
				}
			}
		}
		if len(log[`App\Jobs\Slow`]) != 0 {
			t.Errorf("the slow job finished despite its 1 s timeout")
		}
		plain := log[`App\Jobs\Plain`][0]
		if plain.UUID != queued["plain"].Jobs[0].UUID || plain.Props["name"] != "plain-1" || plain.Props["note"] != "protected ünïcode" || plain.Props["secret"] != "private" {
			t.Errorf("Go saw Plain as %+v", plain)
		}
		if sec := log[`App\Jobs\Secret`][0]; sec.Props["password"] != "hunter2" {
			t.Errorf("Go saw the encrypted job as %+v", sec.Props)
		}
		if m := log[`App\Jobs\WithModel`][0]; !strings.Contains(m.RawProps, `Illuminate\\Contracts\\Database\\ModelIdentifier`) {
			t.Errorf("Go saw the model job as %s", m.RawProps)
		}
		if raw := log[`App\Jobs\RawHandler@handle`][0]; raw.Props["data"].(map[string]any)["path"] != "a/b" {
			t.Errorf("Go saw the raw job as %s", raw.RawProps)
		}

		// What PHP sees: the failures in failed_jobs, the delayed job and the PHP-only jobs queued, the
		// unique lock free.
		failed := map[string]phpapp.FailedRow{}
		for _, f := range s.failed(t, ctx) {
			failed[f.UUID] = f
		}
		if len(failed) != 2 {
			t.Errorf("failed_jobs has %d rows, want 2 (maxExceptions, timeout)", len(failed))
		}
		if f, ok := failed[queued["maxexc"].Jobs[0].UUID]; !ok || !strings.Contains(f.Exception, "attempt 2") || f.Connection != "database" || f.Queue != "default" {
			t.Errorf("maxExceptions failure row = %+v", f)
		}
		if f, ok := failed[queued["slow"].Jobs[0].UUID]; !ok || !strings.Contains(f.Exception, "timed out") {
			t.Errorf("timeout failure row = %+v", f)
		}
		if d := a.MustDispatch(ctx, "unique", phpapp.Key("k1")); len(d.Jobs) != 1 {
			t.Errorf("after Go ran the unique job, PHP's dispatch queued %d jobs: the lock was not released", len(d.Jobs))
		}
		rows := s.jobs(t, ctx)
		if len(rows) != 6 {
			t.Errorf("jobs has %d rows, want 6 (delayed, 4 for PHP, the new unique)", len(rows))
		}
		for _, r := range rows {
			if r.Attempts != 0 || r.ReservedAt != nil {
				t.Errorf("row %d left with attempts %d reserved %v", r.ID, r.Attempts, r.ReservedAt)
			}
		}

		// The delayed job is not taken before its time; a worker whose clock is past it takes it.
		s.drain(t, ctx, func(c *worker.Config) { c.Queues = []string{"default"} })
		if n := len(byClass(s.log(t, ctx))[`App\Jobs\Plain`]); n != 1 {
			t.Fatalf("Go ran the delayed job before its time")
		}
		s.run(t, ctx, nil, func() time.Time { return time.Now().Add(61 * time.Second) })
		if n := len(byClass(s.log(t, ctx))[`App\Jobs\Plain`]); n != 2 {
			t.Errorf("Go ran Plain %d times after the delay passed, want 2", n)
		}

		// PHP's worker runs what Go left.
		s.phpDrain(t, ctx)
		log = byClass(s.log(t, ctx))
		for _, class := range []string{"Closure", `App\Listeners\RecordShipment`, `App\Notifications\Shipped`, `App\Mail\ShippedMail`} {
			if len(log[class]) != 1 || log[class][0].Runner != "php" || log[class][0].Attempts != 1 {
				t.Errorf("%s runs = %+v, want one by php at attempt 1", class, log[class])
			}
		}
		if rows := s.jobs(t, ctx); len(rows) != 0 {
			t.Errorf("%d jobs left after both workers", len(rows))
		}
	})
}
