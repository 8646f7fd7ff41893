package worker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/arraycache"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/redislock"
)

var errFromHandler = errors.New("upstream down")

// versionFixture reads a payload from testdata/versions (see its README).
func versionFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/versions/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lockAs takes a cache lock as PHP would, for owner.
func (f *fixture) lockAs(t *testing.T, name, owner string) {
	t.Helper()
	if ok, err := f.Conn.CacheLockAcquire(bg, &laravel.CacheLockParams{Key: name, Owner: owner, TTL: time.Hour}); err != nil || !ok {
		t.Fatalf("take %s for %s: %v, %v", name, owner, ok, err)
	}
}

func (f *fixture) lockHeld(t *testing.T, name string) string {
	t.Helper()
	owner, _, err := f.Conn.CacheLockOwner(bg, name)
	if err != nil {
		t.Fatal(err)
	}
	return owner
}

// TestUniqueLockKeyHashesDisplayName: from 12.54 the class segment of a unique lock key is the
// xxh128 of the job's own displayName().
func TestUniqueLockKeyHashesDisplayName(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\WeeklyReport`, ok(&calls))
		for _, v := range []struct{ version, key string }{
			{"12.54", "laravel_unique_job:" + XXH128("Nightly report") + ":42"},
			{"12.53", "laravel_unique_job:Nightly report:42"},
			{"12.40", `laravel_unique_job:App\Jobs\WeeklyReport:42`},
		} {
			f.lockAs(t, v.key, "php")
			f.push(t, "default", versionFixture(t, "12.54-unique-display"))
			runOnce(t, f.worker(t, func(c *Config) { c.LaravelVersion = v.version }))
			if owner := f.lockHeld(t, v.key); owner != "" {
				t.Errorf("%s: lock %s kept", v.version, v.key)
			}
		}
	})
}

// TestUniqueLockOwner: from 13.24 a unique job's lock is released only by the dispatch that took it
// (its owner in uniqueLockOwner); before, whoever holds it.
func TestUniqueLockOwner(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\NightlyReport`, ok(&calls))
		key := "laravel_unique_job:" + XXH128("Nightly report") + ":42"
		for _, c := range []struct {
			version, holder string
			released        bool
		}{
			{"13.24", "Ow9nEr7Tok3nA1b2", true},  // the job's own dispatch holds it
			{"13.24", "NewerDispatchOwn", false}, // the lock expired and a newer dispatch took it
			{"13.23", "NewerDispatchOwn", true},  // before 13.24 it is forced
		} {
			f.lockAs(t, key, c.holder)
			f.push(t, "default", versionFixture(t, "13.24-unique-owner"))
			runOnce(t, f.worker(t, func(cfg *Config) { cfg.LaravelVersion = c.version }))
			if released := f.lockHeld(t, key) == ""; released != c.released {
				t.Errorf("%s, lock held by %s: released %v, want %v", c.version, c.holder, released, c.released)
			}
			f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().CacheLocks))
		}
		// The same in the store the class's uniqueVia() names.
		for _, c := range []struct {
			holder   string
			released bool
		}{{"Ow9nEr7Tok3nA1b2", true}, {"NewerDispatchOwn", false}} {
			via := arraycache.New(nil)
			if ok, err := via.LockAcquire(bg, key, c.holder, 3600); err != nil || !ok {
				t.Fatalf("take %s: %v, %v", key, ok, err)
			}
			f.push(t, "default", versionFixture(t, "13.24-unique-owner"))
			runOnce(t, f.workerWith(t, func(cfg *Config) {
				cfg.LaravelVersion = "13.24"
				cfg.UniqueVia = map[string]string{`App\Jobs\NightlyReport`: "redis"}
			}, func(p *Params) { p.UniqueStores = map[string]LockReleaser{"redis": via} }))
			if held, _ := via.LockHeld(bg, key); held == c.released {
				t.Errorf("uniqueVia store, lock held by %s: released %v, want %v", c.holder, !held, c.released)
			}
		}
	})
}

// untilProcessingHandler is a handler of a ShouldBeUniqueUntilProcessing job.
type untilProcessingHandler struct{ handlers.Handler }

func (untilProcessingHandler) UniqueUntilProcessing() bool { return true }

// TestUniqueUntilProcessingRetry: from 13.24 a retry of a ShouldBeUniqueUntilProcessing job that
// carries no lock owner leaves the lock alone, since a newer dispatch may hold it.
func TestUniqueUntilProcessingRetry(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\WeeklyReport`, untilProcessingHandler{ok(&calls)})
		key := "laravel_unique_job:" + XXH128("Nightly report") + ":42"
		for _, c := range []struct {
			version  string
			attempts int
			released bool
		}{{"13.24", 1, true}, {"13.24", 2, false}, {"13.23", 2, true}} {
			f.lockAs(t, key, "newer")
			id := f.push(t, "default", versionFixture(t, "12.54-unique-display"))
			f.exec(t, "update "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs)+" set attempts = ? where id = ?", c.attempts-1, id)
			runOnce(t, f.worker(t, func(cfg *Config) { cfg.LaravelVersion = c.version }))
			if released := f.lockHeld(t, key) == ""; released != c.released {
				t.Errorf("%s, attempt %d: released %v, want %v", c.version, c.attempts, released, c.released)
			}
			f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().CacheLocks))
		}
	})
}

// TestDebounce: a #[DebounceFor] job (13.6+) whose debounce key names a newer dispatch's owner is
// deleted without running; its own owner or no key lets it run.
func TestDebounce(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\SearchIndex`, ok(&calls))
		key := `laravel_debounced_job:App\Jobs\SearchIndex:posts`
		for i, c := range []struct {
			version, owner string
			runs           bool
		}{
			{"13.6", "NewerOwnerTokenAbCdEfGhIjKlMnOpQrStUvWxYz", false},
			{"13.6", "Deb0unceOwnerTokenAbCdEfGhIjKlMnOpQrStUv", true},
			{"13.6", "", true}, // the key expired: fail open, as Laravel
			{"13.5", "NewerOwnerTokenAbCdEfGhIjKlMnOpQrStUvWxYz", true},
		} {
			if c.owner != "" {
				if err := f.Conn.CachePut(bg, key, laravel.SerializeString(c.owner), time.Hour); err != nil {
					t.Fatal(err)
				}
			} else if err := f.Conn.CacheForget(bg, key); err != nil {
				t.Fatal(err)
			}
			before := calls.Load()
			f.push(t, "default", versionFixture(t, "13.6-debounce"))
			w := f.worker(t, func(cfg *Config) { cfg.LaravelVersion = c.version })
			runOnce(t, w)
			f.wantRows(t, 0, 0)
			if runs := calls.Load() > before; runs != c.runs {
				t.Errorf("case %d (%s): ran %v, want %v", i, c.version, runs, c.runs)
			}
		}
	})
}

// TestPauseAll: queue:pause --all (13.25+) stops every queue.
func TestPauseAll(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		ran := &queueLog{}
		f.reg.Register(jobClass, ran)
		f.push(t, "default", envelope(t, jobClass, "", nil))
		if err := f.Conn.CacheForever(bg, allPausedKey, "b:1;"); err != nil {
			t.Fatal(err)
		}
		run := func(version string) {
			if _, err := f.worker(t, func(c *Config) { c.LaravelVersion = version; c.MaxTime = 300 * time.Millisecond }).Run(bg); err != nil {
				t.Fatal(err)
			}
		}
		run("13.25")
		if ran.String() != "" {
			t.Fatalf("ran %v while every queue was paused", ran)
		}
		run("13.24") // the key means nothing before 13.25
		if ran.String() != "default" {
			t.Fatalf("13.24 ran %v, want [default]", ran)
		}
	})
}

// TestMiddleware13: Laravel 13's serialized middleware, keyed by the hashed displayName.
func TestMiddleware13(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		fail := false
		f.reg.Register(`App\Jobs\SyncAccount`, handlerFunc(func() error {
			calls.Add(1)
			if fail {
				return errFromHandler
			}
			return nil
		}))
		w := f.worker(t, func(c *Config) {
			c.LaravelVersion = "13.24"
			c.RateLimiters = map[string][]RateLimit{"accounts": {{Allow: 1, Per: time.Minute}}}
		})
		jobs := queuetest.Q(f.Conn, f.Conn.Tables().Jobs)

		// WithoutOverlapping: laravel-queue-overlap: + xxh128(displayName) + ":" + key.
		lock := "laravel-queue-overlap:" + XXH128("Sync account") + ":acct-9"
		f.lockAs(t, lock, "php")
		f.push(t, "default", versionFixture(t, "13.24-overlap"))
		runOnce(t, w)
		if row := f.onlyRow(t); calls.Load() != 0 || row.Attempts != 1 || row.AvailableAt < f.clock.Unix()+4 {
			t.Fatalf("overlap: %d calls, attempts %d, available in %d", calls.Load(), row.Attempts, row.AvailableAt-f.clock.Unix())
		}
		f.exec(t, "delete from "+jobs)

		// ThrottlesExceptions: key xxh128(displayName), decaySeconds 120, backoff 2 minutes.
		fail = true
		key := "laravel_throttles_exceptions:" + XXH128("Sync account")
		f.push(t, "default", versionFixture(t, "13.24-throttle"))
		runOnce(t, w)
		row := f.onlyRow(t)
		timer, _, _ := f.Conn.CacheGet(bg, key+":timer")
		ends, _ := laravel.UnserializeNumber(timer)
		if now := f.clock.Unix(); row.AvailableAt < now+119 || row.AvailableAt > now+120 || ends < now+119 || ends > now+120 {
			t.Fatalf("throttle: available in %d, timer ends in %d; want 120 and 120", row.AvailableAt-now, ends-now)
		}
		f.exec(t, "delete from "+jobs)
		fail = false

		// RateLimited with releaseAfter 11: the second job within the minute is released for 11s.
		f.push(t, "default", versionFixture(t, "13.24-rate-limited"))
		runOnce(t, w)
		f.push(t, "default", versionFixture(t, "13.24-rate-limited"))
		runOnce(t, w)
		if row := f.onlyRow(t); row.AvailableAt < f.clock.Unix()+10 || row.AvailableAt > f.clock.Unix()+11 {
			t.Fatalf("rate limited: available in %d, want 11", row.AvailableAt-f.clock.Unix())
		}
	})
}

// TestSkipMiddleware applies Skip (11.23+), Release (13.18.1+) and SkipIfBatchCancelled (9.49+) as PHP's
// pipeline does: a job Skip or SkipIfBatchCancelled stops succeeds without running (deleted, its batch
// counting it), one Release stops goes back on its queue, one they let through runs.
func TestSkipMiddleware(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var synced, imported atomic.Int32
		f.reg.Register(`App\Jobs\SyncAccount`, ok(&synced))
		f.reg.Register(`App\Jobs\ImportRow`, ok(&imported))
		w := f.worker(t, func(c *Config) { c.LaravelVersion = "13.24" })

		// Skip::when(true) completes the job unrun, Release::when(true, 15) puts it back for 15 s with its
		// attempt counted; Skip::unless(true) and Release::unless(true) let it run.
		for _, c := range []struct {
			fixture  string
			runs     int32
			released bool
		}{{"13.24-skip", 0, false}, {"13.24-skip-not", 1, false}, {"13.24-release", 0, true}, {"13.24-release-not", 1, false}} {
			before, now := synced.Load(), f.clock.Unix()
			f.push(t, "default", versionFixture(t, c.fixture))
			runOnce(t, w)
			if got := synced.Load() - before; got != c.runs {
				t.Fatalf("%s: %d runs, want %d", c.fixture, got, c.runs)
			}
			if !c.released {
				f.wantRows(t, 0, 0)
				continue
			}
			if row := f.onlyRow(t); row.Attempts != 1 || row.ReservedAt != nil || row.AvailableAt < now+15 || row.AvailableAt > f.clock.Unix()+15 {
				t.Fatalf("%s: row %+v; want it released for 15 s after 1 attempt", c.fixture, row)
			}
			f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
		}

		const batch = "9f3c2a10-5b7e-4d21-8c4a-2e6f1d0b7a55"
		f.insertBatch(t, batch, 3, "a:0:{}")
		f.push(t, "default", versionFixture(t, "13.24-skip-batch-cancelled"))
		runOnce(t, w)
		if imported.Load() != 1 {
			t.Fatal("the job of a batch not cancelled did not run")
		}
		if err := f.Conn.BatchCancel(bg, batch, f.clock.Unix()); err != nil {
			t.Fatal(err)
		}
		f.push(t, "default", versionFixture(t, "13.24-skip-batch-cancelled"))
		runOnce(t, w)
		f.wantRows(t, 0, 0)
		if imported.Load() != 1 {
			t.Fatal("the job of a cancelled batch ran")
		}
		b, err := f.Conn.BatchFind(bg, batch)
		if err != nil {
			t.Fatal(err)
		}
		if b.PendingJobs != 1 || b.FailedJobs != 0 {
			t.Fatalf("batch %+v: want the skipped job counted as done (pending 1, failed 0)", b)
		}
		// A batch that is gone lets the job run, as batch() returning null does.
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().JobBatches))
		f.push(t, "default", versionFixture(t, "13.24-skip-batch-cancelled"))
		runOnce(t, w)
		if imported.Load() != 2 || w.Stats().LeftForPHP != 0 {
			t.Fatalf("%d runs, stats %+v: want the job of a missing batch run", imported.Load(), w.Stats())
		}
	})
}

// TestDontRetry: from 13.17 an exception whose class the application lists with dontRetry fails the
// job on its first attempt; before, it is retried as any other.
func TestDontRetry(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, fmt.Errorf("charge: %w", newException(`App\Exceptions\CardDeclined`, "card declined", nil))))
		for _, c := range []struct {
			version string
			failed  int
		}{{"13.16", 0}, {"13.17", 1}} {
			f.push(t, "default", envelope(t, jobClass, `"maxTries":3`, nil))
			runOnce(t, f.worker(t, func(cfg *Config) {
				cfg.LaravelVersion = c.version
				cfg.DontRetry = map[string]bool{`App\Exceptions\CardDeclined`: true}
			}))
			f.wantRows(t, 1-c.failed, c.failed)
			f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
		}
	})
}

// TestUniqueLockOwnerRedis is TestUniqueLockOwner with the lock in a Redis cache store.
func TestUniqueLockOwnerRedis(t *testing.T) {
	t.Parallel()
	addr := net.JoinHostPort("127.0.0.1", "6379")
	if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err != nil {
		testenv.Missing(t, "Redis is not reachable at %s (%v): apt-get install redis-server (or run .ci/services)", addr, err)
	} else {
		c.Close()
	}
	store, err := redislock.OpenStore(bg, redislock.Params{Addr: addr, Prefix: redislock.LockPrefix(testenv.Name("app")+"_", "cache")}, 5, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(`App\Jobs\NightlyReport`, ok(&calls))
	key := "laravel_unique_job:" + XXH128("Nightly report") + ":42"
	for _, c := range []struct {
		holder   string
		released bool
	}{{"Ow9nEr7Tok3nA1b2", true}, {"NewerDispatchOwn", false}} {
		if ok, err := store.Locks.LockAcquire(bg, key, c.holder, 3600); err != nil || !ok {
			t.Fatalf("take the lock: %v, %v", ok, err)
		}
		f.push(t, "default", versionFixture(t, "13.24-unique-owner"))
		cfg := Defaults()
		cfg.LaravelVersion, cfg.Sleep, cfg.Timeout = "13.24", 20*time.Millisecond, 0
		w, err := New(Params{Queue: f.Queue, Conn: f.Conn, Registry: f.reg, Config: cfg, Locks: store.Locks, Cache: store.Values, Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		runOnce(t, w)
		_, held, err := store.Locks.LockOwner(bg, key)
		if err != nil {
			t.Fatal(err)
		}
		if !held != c.released {
			t.Errorf("lock held by %s: released %v, want %v", c.holder, !held, c.released)
		}
		if err := store.Locks.ForceRelease(bg, key); err != nil {
			t.Fatal(err)
		}
	}
}

// debounceByMethod is the handler of a job whose class computes debounceId() in a method.
type debounceByMethod struct{ handlers.Handler }

func (debounceByMethod) DebounceID(*handlers.Job) string { return "tenant-9" }

// TestDebounceIDer reads the debounce key of the id a DebounceIDer handler gives, where PHP's
// DebounceLock calls the class's debounceId() method, instead of the property.
func TestDebounceIDer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(`App\Jobs\SearchIndex`, debounceByMethod{ok(&calls)})
	const newer = "NewerOwnerTokenAbCdEfGhIjKlMnOpQrStUvWxYz"
	for _, c := range []struct {
		id   string // whose key holds a newer dispatch's owner
		runs bool
	}{{"posts", true}, {"tenant-9", false}} {
		key := `laravel_debounced_job:App\Jobs\SearchIndex:` + c.id
		if err := f.Conn.CachePut(bg, key, laravel.SerializeString(newer), time.Hour); err != nil {
			t.Fatal(err)
		}
		before := calls.Load()
		f.push(t, "default", versionFixture(t, "13.6-debounce"))
		runOnce(t, f.worker(t, func(cfg *Config) { cfg.LaravelVersion = "13.6" }))
		f.wantRows(t, 0, 0)
		if runs := calls.Load() > before; runs != c.runs {
			t.Errorf("newer owner under %s: ran %v, want %v", c.id, runs, c.runs)
		}
		if err := f.Conn.CacheForget(bg, key); err != nil {
			t.Fatal(err)
		}
	}
}
