package worker

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

const guardedClass = `App\Jobs\Guarded`

// middlewareFixture reads a payload from testdata/middleware (see its README).
func middlewareFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/middleware/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestXXH128 checks the hash against PHP 8.2's hash('xxh128', ...), printed by PHP itself.
func TestXXH128(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                "99aa06d3014798d86001c324468d497f",
		`App\Jobs\Report`: "f9cc3ac83e295949967413eee896636a",
		strings.Repeat("a much longer string that is more than one hundred and twenty eight bytes long so that the long path of the algorithm is exercised, yes indeed, more bytes here!!", 1): "c14a49c0186482d4aeb0e652b22047cf",
	} {
		if got := XXH128(in); got != want {
			t.Errorf("XXH128(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestWithoutOverlapping runs Laravel 8.83's serialized WithoutOverlapping: a held lock releases the
// job after releaseAfter with its attempt kept, or with dontRelease completes it without running it;
// a free lock is taken for the handler and released after it.
func TestWithoutOverlapping(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		run := func() error { calls.Add(1); return nil }
		f.reg.Register(guardedClass, handlerFunc(func() error { return run() }))
		w := f.worker(t, nil)
		lock := `laravel-queue-overlap:App\Jobs\Guarded:k1`
		if ok, err := f.Conn.CacheLockAcquire(bg, &laravel.CacheLockParams{Key: lock, Owner: "php", TTL: time.Minute}); err != nil || !ok {
			t.Fatalf("take the lock as PHP would: %v, %v", ok, err)
		}
		f.push(t, "default", middlewareFixture(t, "8.83-overlap"))
		runOnce(t, w)
		row := f.onlyRow(t)
		if now := f.clock.Unix(); calls.Load() != 0 || row.Attempts != 1 || row.AvailableAt < now+6 || row.AvailableAt > now+7 || row.ReservedAt != nil {
			t.Fatalf("with the lock held: %d calls, attempts %d, available in %d; want released for 7s with attempts 1", calls.Load(), row.Attempts, row.AvailableAt-now)
		}
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))

		f.push(t, "default", middlewareFixture(t, "8.83-overlap-dont-release"))
		runOnce(t, w)
		f.wantRows(t, 0, 0)
		if calls.Load() != 0 {
			t.Fatal("dontRelease ran the handler while the lock was held")
		}

		if ok, err := f.Conn.CacheLockRelease(bg, &laravel.CacheLockReleaseParams{Key: lock, Owner: "php"}); err != nil || !ok {
			t.Fatalf("release as PHP: %v, %v", ok, err)
		}
		var owner string
		run = func() error {
			o, held, err := f.Conn.CacheLockOwner(bg, lock)
			if err != nil || !held {
				return errors.New("the handler ran without the lock")
			}
			owner = o
			return nil
		}
		f.push(t, "default", middlewareFixture(t, "8.83-overlap"))
		runOnce(t, w)
		f.wantRows(t, 0, 0)
		if len(owner) != 16 {
			t.Fatalf("lock owner %q, want a 16-character token", owner)
		}
		if _, held, _ := f.Conn.CacheLockOwner(bg, lock); held {
			t.Fatal("the lock was kept after the handler")
		}
	})
}

// holdUntil keeps a handler running until cond holds (10 s at most, for a test that fails).
func holdUntil(cond func() bool) {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// overlapWaiting is how many jobs of w wait for the overlap lock named lock.
func overlapWaiting(w *Worker, lock string) int {
	w.overlapWaits.mu.Lock()
	defer w.overlapWaits.mu.Unlock()
	return len(w.overlapWaits.keys[lock])
}

// TestWithoutOverlappingWaitsInProcess runs jobs of one overlap key claimed together by one worker
// with several slots: as under one PHP worker, which runs them one after another, each waits for the
// one holding the lock in this process and then runs; none is released or run twice, and never two
// at once.
func TestWithoutOverlappingWaitsInProcess(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		const n = 6
		var w *Worker
		var calls, running, most atomic.Int32
		var mu sync.Mutex
		var order []int64
		lock := `laravel-queue-overlap:App\Jobs\Guarded:k1`
		f.reg.Register(guardedClass, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error {
			now := running.Add(1)
			defer running.Add(-1)
			if now > most.Load() {
				most.Store(now)
			}
			mu.Lock()
			order = append(order, j.ID)
			mu.Unlock()
			if calls.Add(1) == 1 {
				// The first holds the lock until every other job waits for it, so that they meet it.
				holdUntil(func() bool { return overlapWaiting(w, lock) == n-1 })
			}
			return nil
		}))
		w = f.worker(t, func(c *Config) { c.Concurrency = 4 * n; c.StopWhenEmpty = true })
		for range n {
			f.push(t, "default", middlewareFixture(t, "8.83-overlap"))
		}
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		st := w.Stats()
		if calls.Load() != n || most.Load() != 1 || st.Released != 0 || st.Claimed != n {
			t.Fatalf("%d runs, at most %d at once, stats %+v: want %d runs one at a time, none released", calls.Load(), most.Load(), st, n)
		}
		// They ran lowest id first, as one PHP worker takes them.
		if !slices.IsSorted(order) {
			t.Fatalf("ran in the order %v: want the ids in ascending order", order)
		}
		f.wantRows(t, 0, 0)
	})
}

// TestWithoutOverlappingQueuePriority: jobs of one overlap key on the queues --queue names run in
// that order, the higher queue's first though their ids are higher, as one PHP worker pops them.
func TestWithoutOverlappingQueuePriority(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var mu sync.Mutex
		var order []string
		f.reg.Register(guardedClass, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, fmt.Sprintf("%s:%d", j.Queue, j.ID))
			return nil
		}))
		w := f.worker(t, func(c *Config) { c.Concurrency = 32; c.StopWhenEmpty = true; c.Queues = []string{"high", "default"} })
		var want []string
		var high []string
		for i := range 4 {
			id := f.push(t, "default", middlewareFixture(t, "8.83-overlap"))
			want = append(want, fmt.Sprintf("default:%d", id))
			if i%2 == 1 {
				id = f.push(t, "high", middlewareFixture(t, "8.83-overlap"))
				high = append(high, fmt.Sprintf("high:%d", id))
			}
		}
		want = append(high, want...)
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		if strings.Join(order, " ") != strings.Join(want, " ") {
			t.Fatalf("ran %v, want %v", order, want)
		}
	})
}

// TestWithoutOverlappingWaitersBounded: no more than a quarter of a worker's slots wait for one
// overlap lock, so that a key with a long backlog leaves the other slots to other jobs; the jobs
// beyond find the lock taken and are released after releaseAfter, their attempt spent, as between
// PHP workers.
func TestWithoutOverlappingWaitersBounded(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		const slots = 8
		var w *Worker
		var calls atomic.Int32
		f.reg.Register(guardedClass, handlerFunc(func() error {
			if calls.Add(1) == 1 {
				// The first holds the lock until every other job waits for it or was released.
				holdUntil(func() bool {
					return overlapWaiting(w, `laravel-queue-overlap:App\Jobs\Guarded:k1`) == slots/4 && w.stats.released.Load() == slots-1-slots/4
				})
			}
			return nil
		}))
		w = f.worker(t, func(c *Config) { c.Concurrency = slots; c.StopWhenEmpty = true })
		for range slots {
			f.push(t, "default", middlewareFixture(t, "8.83-overlap"))
		}
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		if st := w.Stats(); calls.Load() != 1+slots/4 || st.Released != slots-1-slots/4 {
			t.Fatalf("%d runs, stats %+v: want %d run and %d released", calls.Load(), st, 1+slots/4, slots-1-slots/4)
		}
		for _, r := range f.Rows(t) {
			if now := f.clock.Unix(); r.Attempts != 1 || r.AvailableAt < now+6 || r.AvailableAt > now+7 {
				t.Errorf("released row: attempts %d, available in %d s; want 1 and 7 s", r.Attempts, r.AvailableAt-f.clock.Unix())
			}
		}
	})
}

// TestWithoutOverlappingWaiterAtShutdown stops a worker while one job holds the overlap lock and
// another of the same key waits for it: once the grace period is over both are released, the one
// that waited never runs, and the lock is free.
func TestWithoutOverlappingWaiterAtShutdown(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		started := make(chan struct{}, 2)
		f.reg.Register(guardedClass, handlers.HandlerFunc(func(ctx context.Context, _ *handlers.Job) error {
			calls.Add(1)
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}))
		w := f.worker(t, func(c *Config) { c.Concurrency = 2; c.ShutdownGrace = 50 * time.Millisecond })
		f.push(t, "default", middlewareFixture(t, "8.83-overlap"))
		f.push(t, "default", middlewareFixture(t, "8.83-overlap"))
		ctx, stop := context.WithCancel(bg)
		done := make(chan error, 1)
		go func() { _, err := w.Run(ctx); done <- err }()
		<-started
		for w.stats.claimed.Load() < 2 {
			time.Sleep(time.Millisecond)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 1 {
			t.Fatalf("%d runs: want only the lock's holder run", calls.Load())
		}
		wantGivenBack(t, f, 2)
		if rows := f.Rows(t); rows[0].Attempts+rows[1].Attempts != 1 {
			t.Fatalf("attempts %d and %d: want the holder's spent and the waiter's untouched", rows[0].Attempts, rows[1].Attempts)
		}
		if _, held, err := f.Conn.CacheLockOwner(bg, `laravel-queue-overlap:App\Jobs\Guarded:k1`); err != nil || held {
			t.Fatalf("lock held %v (%v) after the stop", held, err)
		}
	})
}

// TestThrottlesExceptionsInFlight runs six jobs of ThrottlesExceptions(2, 1) whose handler always
// throws, claimed together by one worker with six slots: no more run at once than exceptions are left
// before the limiter stops them, so the handler runs twice, as under one PHP worker, and the other four
// are released by the limiter without running; every attempt spent is one PHP would spend.
func TestThrottlesExceptionsInFlight(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		const n = 6
		var calls atomic.Int32
		f.reg.Register(guardedClass, handlerFunc(func() error { calls.Add(1); return errors.New("upstream down") }))
		w := f.worker(t, func(c *Config) { c.Concurrency = n; c.StopWhenEmpty = true })
		for range n {
			f.push(t, "default", middlewareFixture(t, "8.83-throttle"))
		}
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		rows := f.Rows(t)
		for _, r := range rows {
			if r.Attempts != 1 || r.ReservedAt != nil || r.AvailableAt <= f.clock.Unix() {
				t.Errorf("row %+v: want released with its one attempt", r)
			}
		}
		if calls.Load() != 2 || len(rows) != n || w.Stats().Released != n {
			t.Fatalf("%d runs, %d rows, stats %+v: want 2 runs and %d jobs released", calls.Load(), len(rows), w.Stats(), n)
		}
	})
}

// TestWithoutOverlappingWaitersAtWorkerStop: when queue:restart (as --max-time, a signal or --memory)
// stops a worker whose WithoutOverlapping jobs wait for the one holding their lock, the waiting ones
// are handed back untouched, as PHP's worker stops after its job; --max-jobs runs every job it
// claimed, as PHP's worker runs that many.
func TestWithoutOverlappingWaitersAtWorkerStop(t *testing.T) {
	t.Parallel()
	const n = 4
	for _, c := range []struct {
		name      string
		mod       func(*Config)
		held      func(w *Worker) bool // until when the first job holds the lock
		runs      int
		untouched int
	}{
		{"restart", func(c *Config) {},
			func(w *Worker) bool {
				return w.stats.returned.Load() > 0 && w.stats.returned.Load() == w.stats.claimed.Load()-1
			}, 1, n - 1},
		{"max-jobs", func(c *Config) { c.MaxJobs = n - 1 },
			func(w *Worker) bool { return overlapWaiting(w, `laravel-queue-overlap:App\Jobs\Guarded:k1`) == n-2 }, n - 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				f := newFixture(t, db)
				var w *Worker
				var calls atomic.Int32
				f.reg.Register(guardedClass, handlerFunc(func() error {
					if calls.Add(1) == 1 {
						if c.name == "restart" {
							if err := f.Conn.CacheForever(bg, restartKey, "i:1800000000;"); err != nil {
								return err
							}
						}
						// The first holds the lock until the others wait for it, or were handed back.
						holdUntil(func() bool { return c.held(w) })
					}
					return nil
				}))
				w = f.worker(t, func(cfg *Config) { cfg.Concurrency = 4 * n; c.mod(cfg) })
				for range n {
					f.push(t, "default", middlewareFixture(t, "8.83-overlap"))
				}
				if _, err := w.Run(bg); err != nil {
					t.Fatal(err)
				}
				rows := f.Rows(t)
				untouched := 0
				for _, r := range rows {
					if r.Attempts == 0 && r.ReservedAt == nil {
						untouched++
					}
				}
				if int(calls.Load()) != c.runs || len(rows) != c.untouched || untouched != c.untouched {
					t.Fatalf("%d runs, %d rows of which %d untouched: want %d runs and %d rows left untouched", calls.Load(), len(rows), untouched, c.runs, c.untouched)
				}
			})
		})
	}
}

// TestThrottlesExceptions runs Laravel 8.83's serialized ThrottlesExceptions(2, 1)->backoff(1): an
// exception is counted and releases the job for a minute instead of failing it; a success clears the
// count; after two exceptions within the decay the job is released until the timer runs out (plus 3
// seconds), and its next attempt past maxTries fails it as PHP's worker does.
func TestThrottlesExceptions(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		fail := true
		f.reg.Register(guardedClass, handlerFunc(func() error {
			calls.Add(1)
			if fail {
				return errors.New("upstream down")
			}
			return nil
		}))
		w := f.worker(t, nil)
		key := "laravel_throttles_exceptions:" + md5hex(guardedClass)
		jobs := queuetest.Q(f.Conn, f.Conn.Tables().Jobs)
		start := f.clock.Unix()
		f.push(t, "default", middlewareFixture(t, "8.83-throttle"))
		for attempt := 1; attempt <= 2; attempt++ {
			runOnce(t, w)
			row := f.onlyRow(t)
			if now := f.clock.Unix(); row.Attempts != attempt || row.AvailableAt < now+59 || row.AvailableAt > now+60 {
				t.Fatalf("attempt %d: attempts %d, available at %d; want released for 60s", attempt, row.Attempts, row.AvailableAt-now)
			}
			if v, _, _ := f.Conn.CacheGet(bg, key); v != laravel.SerializeInt(int64(attempt)) {
				t.Fatalf("attempt %d: counter %q", attempt, v)
			}
			// Available at once, as another job under the same key would be, within the decay.
			f.exec(t, "update "+jobs+" set available_at = ?", f.clock.Unix())
		}
		runOnce(t, w)
		row := f.onlyRow(t)
		timer, _, _ := f.Conn.CacheGet(bg, key+":timer")
		ends, _ := laravel.UnserializeNumber(timer)
		if calls.Load() != 2 || row.Attempts != 3 || ends < start+60 || ends > start+61 {
			t.Fatalf("throttled: %d calls, attempts %d, timer %q; want the timer a minute after the first hit", calls.Load(), row.Attempts, timer)
		}
		if row.AvailableAt != ends+3 {
			t.Fatalf("throttled job available at %d, want %d (timer + 3)", row.AvailableAt, ends+3)
		}
		f.clock.Advance(2 * time.Minute)
		runOnce(t, w)
		f.wantRows(t, 0, 1)
		if got := f.onlyFailed(t).Exception; !strings.HasPrefix(got, MaxAttemptsExceededClass) {
			t.Fatalf("exception %q", firstLine(got))
		}

		// One exception, then a success: the count is cleared.
		f.push(t, "default", middlewareFixture(t, "8.83-throttle"))
		runOnce(t, w)
		f.exec(t, "update "+jobs+" set available_at = ?", f.clock.Unix())
		fail = false
		runOnce(t, w)
		f.wantRows(t, 0, 1)
		if _, ok, _ := f.Conn.CacheGet(bg, key); ok {
			t.Fatal("the counter was kept after a success")
		}
	})
}

// TestThrottlesExceptionsFractions: ThrottlesExceptions(2, 0.5)->backoff(0.25) counts an exception
// for 30 s and releases the job for 15 s, as PHP multiplies the fractions by 60 (a probe against PHP
// 8.83); they were read as whole minutes, 0, so nothing was counted and the job came back at once.
func TestThrottlesExceptionsFractions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	f.reg.Register(guardedClass, handlerFunc(func() error { return errors.New("upstream down") }))
	body := strings.Replace(string(middlewareFixture(t, "8.83-throttle")), `decayMinutes\";i:1;`, `decayMinutes\";d:0.5;`, 1)
	body = strings.Replace(body, `retryAfterMinutes\";i:1;`, `retryAfterMinutes\";d:0.25;`, 1)
	f.push(t, "default", []byte(body))
	start := f.clock.Unix()
	runOnce(t, f.worker(t, nil))
	end := f.clock.Unix() // the seconds may turn while it runs
	row := f.onlyRow(t)
	if row.AvailableAt < start+15 || row.AvailableAt > end+15 {
		t.Fatalf("released until %d, want 15 s after the run (%d..%d)", row.AvailableAt, start, end)
	}
	key := "laravel_throttles_exceptions:" + md5hex(guardedClass)
	timer, _, _ := f.Conn.CacheGet(bg, key+":timer")
	ends, _ := laravel.UnserializeNumber(timer)
	if v, _, _ := f.Conn.CacheGet(bg, key); v != laravel.SerializeInt(1) || ends < start+30 || ends > end+30 {
		t.Fatalf("counter %q, timer ends %d; want 1 for 30 s after the run (%d..%d)", v, ends, start, end)
	}
}

// TestThrottlesExceptionsByJob counts a byJob ThrottlesExceptions under the job's uuid.
func TestThrottlesExceptionsByJob(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(guardedClass, failing(&calls, errors.New("upstream down")))
	b := middlewareFixture(t, "8.83-throttle-by-job")
	f.push(t, "default", b)
	runOnce(t, f.worker(t, nil))
	var env struct{ UUID string }
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := f.Conn.CacheGet(bg, "laravel_throttles_exceptions:"+env.UUID); !ok || v != "i:1;" {
		t.Fatalf("counter under the uuid = %q, %v", v, ok)
	}
}

// TestRateLimited applies the configured limits of Laravel's named limiter: two jobs a minute, the
// third released until the timer runs out (plus 3 seconds), or with dontRelease completed unrun.
func TestRateLimited(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(guardedClass, ok(&calls))
		w := f.worker(t, func(c *Config) {
			c.RateLimiters = map[string][]RateLimit{"interop": {{Allow: 2, Per: time.Minute}}}
		})
		start := f.clock.Unix()
		for i := 0; i < 2; i++ {
			f.push(t, "default", middlewareFixture(t, "8.83-rate-limited"))
			runOnce(t, w)
		}
		f.push(t, "default", middlewareFixture(t, "8.83-rate-limited"))
		runOnce(t, w)
		row := f.onlyRow(t)
		timer, _, _ := f.Conn.CacheGet(bg, md5hex("interop")+":timer")
		ends, _ := laravel.UnserializeNumber(timer)
		if calls.Load() != 2 || ends < start+60 || ends > start+61 || row.AvailableAt != ends+3 {
			t.Fatalf("%d calls, available at %d, timer %q; want the third released until the timer + 3", calls.Load(), row.AvailableAt, timer)
		}
		if v, _, _ := f.Conn.CacheGet(bg, md5hex("interop")); v != "i:2;" {
			t.Fatalf("counter %q", v)
		}
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
		f.push(t, "default", middlewareFixture(t, "8.83-rate-limited-dont-release"))
		runOnce(t, w)
		f.wantRows(t, 0, 0)
		if calls.Load() != 2 {
			t.Fatal("dontRelease ran a limited job")
		}

		// Without configured limits the job is PHP's.
		w2 := f.worker(t, nil)
		f.push(t, "default", middlewareFixture(t, "8.83-rate-limited"))
		runOnce(t, w2)
		if row := f.onlyRow(t); row.Attempts != 0 || row.ReservedAt != nil || w2.Stats().LeftForPHP != 1 {
			t.Fatalf("row %+v, stats %+v: want left for PHP", row, w2.Stats())
		}
	})
}

// TestRateLimitedJobsAtOnce starts more jobs of one limiter at once than it allows: as many run as
// the limit, as under one PHP worker that runs them in turn, and the others are released.
func TestRateLimitedJobsAtOnce(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(guardedClass, ok(&calls))
		for range 8 {
			f.push(t, "default", middlewareFixture(t, "8.83-rate-limited"))
		}
		w := f.worker(t, func(c *Config) {
			c.RateLimiters = map[string][]RateLimit{"interop": {{Allow: 2, Per: time.Minute}}}
			c.Concurrency, c.StopWhenEmpty = 8, true
		})
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		v, _, _ := f.Conn.CacheGet(bg, md5hex("interop"))
		if calls.Load() != 2 || len(f.Rows(t)) != 6 || v != "i:2;" {
			t.Fatalf("%d ran, %d rows left, counter %q; want 2 run, 6 released, i:2;", calls.Load(), len(f.Rows(t)), v)
		}
	})
}

// TestUnknownMiddlewareLeftForPHP leaves a job whose middleware the worker does not apply to PHP,
// unless its class is configured to run without them.
func TestUnknownMiddlewareLeftForPHP(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(guardedClass, ok(&calls))
		p := strings.Replace(string(middlewareFixture(t, "8.83-rate-limited")), `O:39:\"Illuminate\\Queue\\Middleware\\RateLimited\"`, `O:37:\"Illuminate\\Queue\\Middleware\\Skippable\"`, 1)
		f.push(t, "default", []byte(p))
		w := f.worker(t, nil)
		runOnce(t, w)
		if calls.Load() != 0 || w.Stats().LeftForPHP != 1 {
			t.Fatalf("%d calls, stats %+v: want left for PHP", calls.Load(), w.Stats())
		}
		w2 := f.worker(t, func(c *Config) { c.RunUnknownMiddleware = map[string]bool{guardedClass: true} })
		runOnce(t, w2)
		if calls.Load() != 1 {
			t.Fatal("a class configured to run without unknown middleware did not run")
		}
	})
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func handlerFunc(fn func() error) handlers.Handler {
	return handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return fn() })
}

// TestCleanKey cleans rate limiter keys as RateLimiter::cleanRateLimiterKey does on PHP 8.2 (each
// want is what PHP printed for preg_replace('/&([a-z])[a-z]+;/i', '$1', htmlentities($key))). Keys with
// an apostrophe or a character outside ASCII used to be refused, and the refusal failed their jobs.
func TestCleanKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"café":              "cafe",
		"O'Brien":           "O&#039;Brien",
		"Ærø &amp; ¼ € ∑ α": "Aro aamp; &frac14; e s a",
		`a"b<c>d`:           "aqblcgd",
		"日本":                "日本",
		"x²":                "x&sup2;",
		"a\xffb":            "a\ufffdb",
	} {
		if got := cleanKey(key); got != want {
			t.Errorf("cleanKey(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestUniqueUntilProcessingBehindMiddleware: a ShouldBeUniqueUntilProcessing job's lock is released
// before its middleware up to 11.39; from 11.40 just before the handler, so a middleware that stops
// the job leaves the lock; from 12.21 also when a middleware stopped it without releasing it.
func TestUniqueUntilProcessingBehindMiddleware(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(guardedClass, untilProcessingHandler{ok(&calls)})
		f.lockAs(t, `laravel-queue-overlap:App\Jobs\Guarded:k1`, "php") // the overlap middleware stops every job
		unique := `laravel_unique_job:App\Jobs\Guarded:`                // the key of 11.x and later
		for _, c := range []struct {
			version, fixture string
			released         bool
		}{
			{"11.39", "8.83-overlap-dont-release", true},
			{"11.39", "8.83-overlap", true},
			{"11.40", "8.83-overlap-dont-release", false},
			{"12.20", "8.83-overlap-dont-release", false},
			{"12.21", "8.83-overlap-dont-release", true},
			{"12.21", "8.83-overlap", false}, // released by the middleware: the lock stays
		} {
			f.lockAs(t, unique, "dispatch")
			f.push(t, "default", middlewareFixture(t, c.fixture))
			runOnce(t, f.worker(t, func(cfg *Config) { cfg.LaravelVersion = c.version }))
			if released := f.lockHeld(t, unique) == ""; released != c.released {
				t.Errorf("%s, %s: unique lock released %v, want %v", c.version, c.fixture, released, c.released)
			}
			f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
			if err := f.Conn.CacheLockForceRelease(bg, unique); err != nil {
				t.Fatal(err)
			}
		}
		if calls.Load() != 0 {
			t.Errorf("the handler ran %d times behind a held overlap lock", calls.Load())
		}
	})
}
