package laravel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestCacheLockReleaseAndAdd checks, on every database, DatabaseLock::release (only the owner
// releases) and DatabaseStore::add (stored only when the key is absent or expired), which job
// middleware and the rate limiter use.
func TestCacheLockReleaseAndAdd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		now := time.Unix(1700000000, 0)
		p := queuetest.OpenParams(db)
		p.Clock = func() time.Time { return now }
		c := openTables(t, p)
		if ok, err := c.CacheLockAcquire(ctx, &laravel.CacheLockParams{Key: "overlap:k", Owner: "a", TTL: 10 * time.Second}); err != nil || !ok {
			t.Fatalf("acquire = %v, %v", ok, err)
		}
		if ok, err := c.CacheLockRelease(ctx, &laravel.CacheLockReleaseParams{Key: "overlap:k", Owner: "b"}); err != nil || ok {
			t.Fatalf("release by another owner = %v, %v", ok, err)
		}
		if owner, held, err := c.CacheLockOwner(ctx, "overlap:k"); err != nil || !held || owner != "a" {
			t.Fatalf("owner after another's release = %q, %v, %v", owner, held, err)
		}
		if ok, err := c.CacheLockRelease(ctx, &laravel.CacheLockReleaseParams{Key: "overlap:k", Owner: "a"}); err != nil || !ok {
			t.Fatalf("release by the owner = %v, %v", ok, err)
		}
		if _, held, _ := c.CacheLockOwner(ctx, "overlap:k"); held {
			t.Fatal("the released lock is still there")
		}

		if ok, err := c.CacheAdd(ctx, "limit", "i:0;", time.Minute); err != nil || !ok {
			t.Fatalf("add = %v, %v", ok, err)
		}
		if ok, err := c.CacheAdd(ctx, "limit", "i:5;", time.Minute); err != nil || ok {
			t.Fatalf("add over a live key = %v, %v", ok, err)
		}
		now = now.Add(time.Minute)
		if ok, err := c.CacheAdd(ctx, "limit", "i:7;", time.Minute); err != nil || !ok {
			t.Fatalf("add over an expired key = %v, %v", ok, err)
		}
		if v, ok, err := c.CacheGet(ctx, "limit"); err != nil || !ok || v != "i:7;" {
			t.Fatalf("get = %q, %v, %v", v, ok, err)
		}
		if ok, err := c.CacheAdd(ctx, "short", "i:1;", 500*time.Millisecond); err != nil || ok {
			t.Fatalf("add for less than a second = %v, %v; Repository::add stores nothing", ok, err)
		}
	})
}

// TestCacheLockLotteryPrunesExpired: acquires now and then delete the expired locks, as
// DatabaseLock::acquire's lottery does (2 in 100), so that locks left by workers that died holding them
// do not pile up where only Go workers run. After 1,000 acquires a row expired an hour ago is gone
// (the chance that it stays is 0.98^1000, about 2e-9); a live lock stays.
func TestCacheLockLotteryPrunesExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openTables(t, queuetest.OpenParams(testenv.SQLite(t)))
	stale := c.Tables().CacheLocks
	if _, err := queuetest.DB(c).Exec("insert into "+stale+" (key, owner, expiration) values ('stale', 'gone', ?), ('live', 'here', ?)", time.Now().Add(-time.Hour).Unix(), time.Now().Add(time.Hour).Unix()); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if _, err := c.CacheLockAcquire(ctx, &laravel.CacheLockParams{Key: fmt.Sprint("k", i), Owner: "o", TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	var stales, lives int
	if err := queuetest.DB(c).QueryRow("select sum(case when key = 'stale' then 1 else 0 end), sum(case when key = 'live' then 1 else 0 end) from "+stale).Scan(&stales, &lives); err != nil {
		t.Fatal(err)
	}
	if stales != 0 || lives != 1 {
		t.Fatalf("expired rows %d, live rows %d; want 0 and 1", stales, lives)
	}
}
