package interop

import (
	"fmt"
	"testing"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/worker"
)

// TestGoChainPHPContinues runs the first link of PHP-dispatched chains under Go (their catch callback
// makes Go leave them to PHP until the failed-hooks companion is set); PHP's worker runs the next
// links, which see their step, the rest of the chain, the chain's queue, and the chain's catch
// callback, which PHP runs when a later link fails.
func TestGoChainPHPContinues(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		s.registerMirrors()
		heads := map[string]bool{}
		for _, fail := range []int{0, 2} {
			d := s.app.MustDispatch(ctx, "chain", phpapp.Count(3), phpapp.OnQueue("chainq"), phpapp.Fail(fail))
			heads[d.Jobs[0].UUID] = true
		}
		// The chains have a catch callback: without a companion to run it, Go leaves their links to PHP.
		if st := s.drain(t, ctx, func(c *worker.Config) { c.Queues = []string{"chainq"} }); st.LeftForPHP != 2 || st.Processed != 0 {
			t.Fatalf("Go stats without a companion %+v, want the two heads left for PHP", st)
		}
		st := s.drain(t, ctx, func(c *worker.Config) {
			c.Queues, c.MaxJobs, c.StopWhenEmpty, c.FailedCompanion = []string{"chainq"}, 2, false, failedHooks
		})
		if st.Processed != 2 || st.ChainDispatched != 2 {
			t.Fatalf("Go stats %+v, want the two heads processed and their next links queued", st)
		}
		rows := s.jobs(t, ctx)
		if len(rows) != 2 || rows[0].Queue != "chainq" || rows[1].Queue != "chainq" {
			t.Fatalf("jobs after the heads = %+v, want two next links on chainq", rows)
		}
		s.phpDrain(t, ctx, "--queue=chainq")

		var steps []phpapp.LogEntry
		for _, e := range s.log(t, ctx) {
			if e.Class == `App\Jobs\ChainLink` {
				steps = append(steps, e)
			}
		}
		// ok: go 1, php 2, php 3; bad: go 1, php 2 (throws), no 3.
		if len(steps) != 5 {
			t.Fatalf("chain links ran %d times, want 5: %+v", len(steps), steps)
		}
		runners := map[string]int{}
		for _, e := range steps {
			step := int(e.Props["step"].(float64))
			runners[fmt.Sprintf("%s:%d", e.Runner, step)]++
			if step == 1 && !heads[e.UUID] {
				t.Errorf("step 1 ran with uuid %s, not a dispatched head", e.UUID)
			}
			if e.Runner == "php" && e.Props["chainedCount"] != float64(3-step) {
				t.Errorf("PHP ran step %d with %v links left, want %d", step, e.Props["chainedCount"], 3-step)
			}
			if e.Queue != "chainq" || (e.Runner == "php" && (e.Props["queue"] != "chainq" || e.Props["chainQueue"] != "chainq")) {
				t.Errorf("step %d ran on %q with queue %v, chainQueue %v", step, e.Queue, e.Props["queue"], e.Props["chainQueue"])
			}
			if e.Attempts != 1 {
				t.Errorf("step %d ran at attempt %d", step, e.Attempts)
			}
		}
		if runners["go:1"] != 2 || runners["php:2"] != 2 || runners["php:3"] != 1 {
			t.Errorf("chain runs by runner:step = %v", runners)
		}
		log := byClass(s.log(t, ctx))
		if c := log["chain.catch"]; len(c) != 1 || c[0].Runner != "php" || c[0].Props["message"] != "chain step 2 fails" {
			t.Errorf("chain.catch runs = %+v, want one by PHP for the failed step", c)
		}
		if f := s.failed(t, ctx); len(f) != 1 {
			t.Errorf("failed_jobs = %d rows, want the failed step", len(f))
		}
		if rows := s.jobs(t, ctx); len(rows) != 0 {
			t.Errorf("%d jobs left", len(rows))
		}
	})
}
