package laravel_test

import (
	"context"
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
