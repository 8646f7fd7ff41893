package interop

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/worker"
)

const guardedClass = `App\Jobs\Guarded`

var errFromGo = errors.New("guarded fails in Go")

// stores are the cache stores the middleware tests run on.
var stores = []struct {
	name string
	opts []phpapp.Option
}{
	{"database", nil}, {"redis", []phpapp.Option{phpapp.WithRedisCache()}}, {"file", []phpapp.Option{phpapp.WithFileCache()}},
	{"memcached", []phpapp.Option{phpapp.WithMemcachedCache()}},
}

// eachStore runs test on every database with the app's cache store in the database, in Redis, in
// files and in memcached, and on one database with a Redis Cluster.
func eachStore(t *testing.T, test func(t *testing.T, ctx context.Context, s *side)) {
	for _, store := range stores {
		t.Run(store.name, func(t *testing.T) {
			t.Parallel()
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				ctx := testContext(t)
				test(t, ctx, newSide(t, db, store.opts...))
			})
		})
	}
	t.Run("redis-cluster", func(t *testing.T) {
		t.Parallel()
		test(t, testContext(t), newSide(t, testenv.SQLite(t), redisCluster(t)...))
	})
}

// lockOwner reads a cache lock's owner from the app's cache store.
func (s *side) lockOwner(t *testing.T, ctx context.Context, name string) (string, bool) {
	t.Helper()
	var owner string
	var held bool
	var err error
	switch {
	case s.locks != nil:
		owner, held, err = s.locks.LockOwner(ctx, name)
	case s.files != nil:
		owner, held, err = s.files.LockOwner(ctx, name)
	case s.mc != nil:
		owner, held, err = s.mc.LockOwner(ctx, name)
	default:
		owner, held, err = s.conn.CacheLockOwner(ctx, name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return owner, held
}

// putCache puts a value PHP's Cache::has sees in the app's cache store.
func (s *side) putCache(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	var err error
	switch {
	case s.cache != nil:
		err = s.cache.CachePut(ctx, key, "1", time.Minute)
	case s.files != nil:
		err = s.files.CachePut(ctx, key, laravel.SerializeInt(1), time.Minute)
	case s.mc != nil:
		err = s.mc.CachePut(ctx, key, laravel.SerializeInt(1), time.Minute)
	default:
		err = s.conn.CachePut(ctx, key, laravel.SerializeInt(1), time.Minute)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// waitUntil polls cond until it holds; the test fails after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitUntilWorker(t, what, nil, cond)
}

// waitUntilWorker polls cond, which a PHP worker is to make hold, until it does; the test fails after
// a minute, or at once when the worker has ended first, with what the worker printed.
func waitUntilWorker(t *testing.T, what string, w *phpapp.Worker, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		var ended <-chan struct{}
		if w != nil {
			ended = w.Done()
		}
		select {
		case <-ended:
			if cond() {
				return
			}
			t.Fatalf("PHP's worker ended before %s:\n%s", what, w.Output())
		default:
		}
		if time.Now().After(deadline) {
			out := ""
			if w != nil {
				out = "\nPHP's worker so far:\n" + w.Output()
			}
			t.Fatalf("gave up waiting: %s%s", what, out)
		}
		time.Sleep(20 * time.Millisecond) // polling the state PHP's worker leaves
	}
}

// deleteJobs empties the jobs table.
func (s *side) deleteJobs(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := queuetest.DB(s.conn).ExecContext(ctx, "delete from "+queuetest.Q(s.conn, s.conn.Tables().Jobs)); err != nil {
		t.Fatal(err)
	}
}

// runsOf counts the runs of the job with the given uuid.
func runsOf(entries []phpapp.LogEntry, uuid string) int {
	n := 0
	for _, e := range entries {
		if e.UUID == uuid {
			n++
		}
	}
	return n
}

// rowOf returns the jobs row with the given uuid.
func (s *side) rowOf(t *testing.T, ctx context.Context, uuid string) phpapp.JobRow {
	t.Helper()
	for _, r := range s.jobs(t, ctx) {
		if r.UUID() == uuid {
			return r
		}
	}
	t.Fatalf("no jobs row for %s", uuid)
	return phpapp.JobRow{}
}

// wantReleased checks that a job was released by WithoutOverlapping: its attempt kept, available
// releaseAfter seconds after it was tried, and never run.
func (s *side) wantReleased(t *testing.T, ctx context.Context, uuid string, tried int64, releaseAfter int64) {
	t.Helper()
	r := s.rowOf(t, ctx, uuid)
	if r.Attempts != 1 || r.ReservedAt != nil || r.AvailableAt < tried+releaseAfter || r.AvailableAt > time.Now().Unix()+releaseAfter {
		t.Errorf("job %s: attempts %d, reserved %v, available at %d (tried at %d): want released for %ds with its attempt kept",
			uuid, r.Attempts, r.ReservedAt, r.AvailableAt, tried, releaseAfter)
	}
	for _, e := range s.log(t, ctx) {
		if e.UUID == uuid {
			t.Errorf("job %s ran (%s) while the overlap lock was held", uuid, e.Runner)
		}
	}
}

// TestWithoutOverlappingSharedWithPHP runs WithoutOverlapping jobs of one key under a PHP worker and
// a Go worker at once, with the lock in the database and in the Redis cache store: each releases the
// job the other holds the lock for, and the lock is gone once the holder finished.
func TestWithoutOverlappingSharedWithPHP(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, s *side) {
		var block atomic.Bool
		started, proceed := make(chan struct{}, 1), make(chan struct{})
		record := s.record(nil)
		s.reg.Register(guardedClass, handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
			if block.Load() {
				started <- struct{}{}
				<-proceed
			}
			return record.Handle(ctx, job)
		}))
		overlap := func(key string, opts ...phpapp.DispatchOption) string {
			d := s.app.MustDispatch(ctx, "guarded", append([]phpapp.DispatchOption{phpapp.Middleware("overlap"), phpapp.Key(key), phpapp.ReleaseAfter(30), phpapp.Seconds(0)}, opts...)...)
			return d.Jobs[0].UUID
		}

		// PHP holds the lock: Go releases the second job.
		lock := `laravel-queue-overlap:App\Jobs\Guarded:php`
		first := overlap("php", phpapp.WaitFor("proceed-php"))
		php := s.app.StartWorker(ctx, "--once", "--sleep=0")
		waitUntilWorker(t, "PHP holding "+lock, php, func() bool { _, held := s.lockOwner(t, ctx, lock); return held })
		second := overlap("php")
		tried := time.Now().Unix()
		if st := s.drain(t, ctx, nil); st.Released != 1 || st.Processed != 0 {
			t.Errorf("Go stats %+v: want the job released and nothing run", st)
		}
		s.wantReleased(t, ctx, second, tried, 30)
		s.putCache(t, ctx, "proceed-php")
		if err := php.Wait(); err != nil {
			t.Fatal(err)
		}
		if _, held := s.lockOwner(t, ctx, lock); held {
			t.Error("PHP's lock is still held after its job finished")
		}
		if ran := byClass(s.log(t, ctx))[guardedClass]; len(ran) != 1 || ran[0].UUID != first || ran[0].Runner != "php" {
			t.Errorf("runs %+v: want the first job run by PHP", ran)
		}
		s.deleteJobs(t, ctx)

		// Go holds the lock: PHP releases the second job.
		lock = `laravel-queue-overlap:App\Jobs\Guarded:go`
		block.Store(true)
		overlap("go")
		done := make(chan worker.Stats)
		go func() { done <- s.drain(t, ctx, func(c *worker.Config) { c.Concurrency = 1 }) }()
		<-started
		if _, held := s.lockOwner(t, ctx, lock); !held {
			t.Fatal("Go runs the job without holding " + lock)
		}
		second = overlap("go")
		tried = time.Now().Unix()
		s.artisan(t, ctx, "queue:work", "database", "--once", "--sleep=0")
		s.wantReleased(t, ctx, second, tried, 30)
		close(proceed)
		if st := <-done; st.Processed != 1 {
			t.Errorf("Go stats %+v: want its job processed", st)
		}
		if _, held := s.lockOwner(t, ctx, lock); held {
			t.Error("Go's lock is still held after its job finished")
		}
	})
}

// TestThrottleAndRateLimitSharedWithPHP counts ThrottlesExceptions' exceptions and RateLimited's
// hits in the cache store PHP uses, and with Redis as the cache store also those of the *WithRedis
// variants in PHP's Redis DurationLimiter: PHP's first exception and Go's second throttle the job for
// PHP, and two jobs a minute run whether PHP or Go takes them.
func TestThrottleAndRateLimitSharedWithPHP(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, s *side) {
		s.reg.Register(guardedClass, s.record(func(job *handlers.Job) error {
			if v, _ := job.Command.Get("failTimes"); v != int64(0) {
				return errFromGo
			}
			return nil
		}))
		variants := []string{""}
		if s.locks != nil {
			variants = append(variants, ":redis")
		}
		for _, variant := range variants {
			s.throttleAndRateLimit(t, ctx, variant)
		}
	})
}

// throttleAndRateLimit is TestThrottleAndRateLimitSharedWithPHP for one variant of the middleware
// ("" or ":redis").
func (s *side) throttleAndRateLimit(t *testing.T, ctx context.Context, variant string) {
	t.Helper()
	t.Log("variant", variant)
	jobs := queuetest.Q(s.conn, s.conn.Tables().Jobs)
	now := func() { // make every row available again, as the next job under the key would be
		if _, err := queuetest.DB(s.conn).ExecContext(ctx, queuetest.Rebind(s.conn, "update "+jobs+" set available_at = ?"), time.Now().Unix()); err != nil {
			t.Fatal(err)
		}
	}

	// ThrottlesExceptions(2, 1): PHP's exception, then Go's; then PHP finds it throttled.
	d := s.app.MustDispatch(ctx, "guarded", phpapp.Middleware("throttle"+variant), phpapp.Throttle(2, 1, 1), phpapp.Fail(5), phpapp.Tries(5), phpapp.Seconds(0))
	uuid := d.Jobs[0].UUID
	s.artisan(t, ctx, "queue:work", "database", "--once", "--sleep=0")
	if r := s.rowOf(t, ctx, uuid); r.Attempts != 1 || r.AvailableAt < time.Now().Unix()+55 {
		t.Fatalf("after PHP's exception: attempts %d, available in %ds", r.Attempts, r.AvailableAt-time.Now().Unix())
	}
	now()
	if st := s.run(t, ctx, func(c *worker.Config) { c.Once = true; c.StopWhenEmpty = false }, nil); st.Released != 1 || st.Failed != 0 {
		t.Fatalf("Go stats %+v: want the exception throttled into a release", st)
	}
	now()
	tried := time.Now().Unix()
	s.artisan(t, ctx, "queue:work", "database", "--once", "--sleep=0")
	r := s.rowOf(t, ctx, uuid)
	if r.Attempts != 3 || r.AvailableAt < tried+50 {
		t.Errorf("after two exceptions PHP did not throttle: attempts %d, available in %ds", r.Attempts, r.AvailableAt-tried)
	}
	if n := runsOf(s.log(t, ctx), uuid); n != 2 {
		t.Errorf("the job ran %d times, want 2 (PHP, Go)", n)
	}
	s.deleteJobs(t, ctx)

	// RateLimited('interop'), 2 a minute: one by PHP, one by Go, then both release.
	limited := func() string {
		return s.app.MustDispatch(ctx, "guarded", phpapp.Middleware("rate-limited"+variant), phpapp.Seconds(0)).Jobs[0].UUID
	}
	limits := func(c *worker.Config) {
		c.Once, c.StopWhenEmpty = true, false
		c.RateLimiters = map[string][]worker.RateLimit{"interop": {{Allow: 2, Per: time.Minute}}}
	}
	limited()
	s.artisan(t, ctx, "queue:work", "database", "--once", "--sleep=0")
	limited()
	if st := s.run(t, ctx, limits, nil); st.Processed != 1 {
		t.Fatalf("Go stats %+v: want the second job run", st)
	}
	third := limited()
	s.artisan(t, ctx, "queue:work", "database", "--once", "--sleep=0")
	if r := s.rowOf(t, ctx, third); r.Attempts != 1 || r.AvailableAt <= time.Now().Unix() {
		t.Errorf("PHP ran or kept the third job a minute: attempts %d, available in %ds", r.Attempts, r.AvailableAt-time.Now().Unix())
	}
	fourth := limited()
	if st := s.run(t, ctx, limits, nil); st.Released != 1 || st.Processed != 0 {
		t.Errorf("Go stats %+v: want the fourth job released", st)
	}
	if r := s.rowOf(t, ctx, fourth); r.Attempts != 1 || r.AvailableAt <= time.Now().Unix() {
		t.Errorf("fourth job: attempts %d, available in %ds", r.Attempts, r.AvailableAt-time.Now().Unix())
	}
	s.deleteJobs(t, ctx)
}
