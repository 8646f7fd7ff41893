package worker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// claimRounds is n rounds of claims that each took took and brought rows rows.
type claimRounds struct {
	n    int
	took time.Duration
	rows int
}

func TestClaimLimiter(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		rounds []claimRounds
		want   int // claims at once for 8 free slots afterwards
	}{
		{"claims within claimSlowdown of their least cost keep every claim", []claimRounds{{1, ms, 1}, {50, 1900 * time.Microsecond, 1}}, 8},
		{"slow claims back off to one", []claimRounds{{1, ms, 1}, {10, 30 * ms, 1}}, 1},
		// The cost is per row: one claim bringing 8 rows in 8 ms costs what a claim of a row in 1 ms does.
		{"claims cheap again recover", []claimRounds{{1, ms, 1}, {10, 30 * ms, 1}, {20, 8 * ms, 8}}, 8},
		// An empty claim writes and commits nothing: quick, and no measure of what a claim costs.
		{"empty claims are not the least cost", []claimRounds{{1, 10 * ms, 1}, {5, 50 * time.Microsecond, 0}, {20, 12 * ms, 1}}, 8},
		{"rounds without a claim measured change nothing", []claimRounds{{1, ms, 1}, {10, 30 * ms, 1}, {30, 0, 0}}, 1},
		// A server that became slower for good: the least cost drifts up until these claims are within
		// claimSlowdown of it, and the worker claims in parallel again.
		{"soon after a lasting slowdown", []claimRounds{{1, ms, 1}, {1000, 3 * ms, 1}}, 1},
		{"long after a lasting slowdown", []claimRounds{{1, ms, 1}, {16000, 3 * ms, 1}}, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newClaimLimiter(8)
			for _, r := range tt.rounds {
				for range r.n {
					round := make([]claimSample, l.parallel(8))
					for i := range round {
						round[i] = claimSample{took: r.took, rows: r.rows}
					}
					l.observe(round)
				}
			}
			if got := l.parallel(8); got != tt.want {
				t.Fatalf("parallel(8) = %d, want %d", got, tt.want)
			}
			if got := l.parallel(3); got != min(3, tt.want) {
				t.Fatalf("parallel(3) = %d: more claims than free slots", got)
			}
		})
	}
}

// TestClaimLimiterMeasuresRealClaims runs a worker with 8 slots on every strategy and database: the
// strategies whose parallel claims are transactions of their own feed the limit with what their
// claimed rows cost; batch (whose parallel claims share one round trip) and servers that claim one at
// a time leave it unmeasured.
func TestClaimLimiterMeasuresRealClaims(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		seen := f.countRuns(jobClass)
		for range 40 {
			f.push(t, "default", envelope(t, jobClass, "", nil))
		}
		w := f.worker(t, func(c *Config) { c.Concurrency, c.StopWhenEmpty = 8, true })
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		seen.wantEachOnce(t, 40)
		_, shared := w.queue.(laravel.Prefetcher)
		pc, ok := w.queue.(laravel.ParallelClaimer)
		measured := !shared && ok && pc.ClaimsInParallel()
		w.claims.mu.Lock()
		base, limit := w.claims.base, w.claims.limit
		w.claims.mu.Unlock()
		if measured != (base > 0) {
			t.Fatalf("least cost per claimed row %v, want it measured: %v", time.Duration(base*float64(time.Second)), measured)
		}
		if limit < 1 || limit > maxParallelClaims {
			t.Fatalf("limit %v outside 1..%d", limit, maxParallelClaims)
		}
	})
}

// inFlight wraps a queue and records the most JobClaim calls that ran at once through any of the
// queues sharing it. It passes on what the worker asks of a claiming queue; the others of the queue's
// optional interfaces are left out, which only changes how the worker completes jobs.
type inFlight struct {
	laravel.Queue
	mu        *sync.Mutex
	now, most *int
}

func (q inFlight) JobClaim(ctx context.Context, p *laravel.JobClaimParams) ([]*laravel.Job, error) {
	q.mu.Lock()
	*q.now++
	*q.most = max(*q.most, *q.now)
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		*q.now--
		q.mu.Unlock()
	}()
	return q.Queue.JobClaim(ctx, p)
}

func (q inFlight) ClaimsInParallel() bool {
	pc, ok := q.Queue.(laravel.ParallelClaimer)
	return ok && pc.ClaimsInParallel()
}

func (q inFlight) ClaimScope(queue string) string {
	if cs, ok := q.Queue.(laravel.ClaimScoper); ok {
		return cs.ClaimScope(queue)
	}
	return ""
}

// TestWorkersOfOneProcessShareTheClaimBound runs four workers of 8 slots in one process, each on its
// own connection, over one queue: where the server's claims are bounded (MySQL, MariaDB and
// PostgreSQL), no more than maxParallelClaims claims run at once between them, and every job still
// runs once.
func TestWorkersOfOneProcessShareTheClaimBound(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		_, shared := f.Queue.(laravel.Prefetcher)
		cs, ok := f.Queue.(laravel.ClaimScoper)
		if shared || !ok || cs.ClaimScope("default") == "" || !(inFlight{Queue: f.Queue}).ClaimsInParallel() {
			return // claims one at a time, in one round trip per worker, or with no bound to share
		}
		seen := f.countRuns(jobClass)
		const jobs = 400
		for range jobs {
			f.push(t, "default", envelope(t, jobClass, "", nil))
		}
		var mu sync.Mutex
		var now, most int
		var wg sync.WaitGroup
		// Four connections per worker still let the four run twice the bound's claims at once without
		// it; unbounded, the pools of this test's strategies held up to 93 PostgreSQL connections, and
		// tests of other packages beside it were refused ("too many clients already").
		p := f.Params
		p.MaxOpenConns = 4
		for range 4 {
			g := *f
			setup := *f.Setup
			setup.Queue = inFlight{Queue: f.NewQueue(t, queuetest.Open(t, p)), mu: &mu, now: &now, most: &most}
			g.Setup = &setup
			w := g.worker(t, func(c *Config) { c.Concurrency, c.StopWhenEmpty = 8, true })
			wg.Go(func() {
				if _, err := w.Run(bg); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		seen.wantEachOnce(t, jobs)
		if most > maxParallelClaims {
			t.Fatalf("%d claims ran at once, want at most %d", most, maxParallelClaims)
		}
		t.Logf("at most %d claims at once", most)
	})
}
