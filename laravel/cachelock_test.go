package laravel_test

import (
	"context"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestCacheLock checks the lock rules of DatabaseLock on every database: one owner at a time, the
// same owner may take its lock again, an expired lock is taken over, release checks the owner, and a
// lock for 0 seconds lasts a day.
func TestCacheLock(t *testing.T) {
	ctx := context.Background()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		t.Parallel()
		now := time.Unix(1700000000, 0)
		p := queuetest.OpenParams(db)
		p.Clock = func() time.Time { return now }
		p.CachePrefix = "laravel_cache"
		c := queuetest.Open(t, p)
		if err := laravel.CreateSchema(ctx, c, laravel.SchemaParams{}); err != nil {
			t.Fatal(err)
		}
		acquire := func(owner string, secs int64) bool {
			t.Helper()
			ok, err := c.CacheLockAcquire(ctx, laravel.CacheLockAcquireParams{Name: "overlap:k", Owner: owner, Seconds: secs})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if !acquire("a", 10) {
			t.Fatal("a free lock was not taken")
		}
		if acquire("b", 10) {
			t.Fatal("a held lock was taken by another owner")
		}
		if !acquire("a", 10) {
			t.Fatal("the owner could not take its own lock again")
		}
		if owner, ok, err := c.CacheLockOwner(ctx, "overlap:k"); err != nil || !ok || owner != "a" {
			t.Fatalf("owner = %q, %v, %v", owner, ok, err)
		}
		if ok, err := c.CacheLockRelease(ctx, laravel.CacheLockReleaseParams{Name: "overlap:k", Owner: "b"}); err != nil || ok {
			t.Fatalf("release by another owner = %v, %v", ok, err)
		}
		now = now.Add(10 * time.Second)
		if !acquire("b", 0) {
			t.Fatal("an expired lock was not taken over")
		}
		var exp int64
		q := c.Rebind("select " + c.Q("expiration") + " from " + c.Q(c.Tables().CacheLocks) + " where " + c.Q("key") + " = ?")
		if err := c.DB().QueryRow(q, "laravel_cacheoverlap:k").Scan(&exp); err != nil || exp != now.Unix()+laravel.DefaultLockTimeout {
			t.Fatalf("a lock for 0 seconds expires at %d (%v), want a day later", exp, err)
		}
		if ok, err := c.CacheLockRelease(ctx, laravel.CacheLockReleaseParams{Name: "overlap:k", Owner: "b"}); err != nil || !ok {
			t.Fatalf("release by the owner = %v, %v", ok, err)
		}
		if _, ok, _ := c.CacheLockOwner(ctx, "overlap:k"); ok {
			t.Fatal("the released lock is still there")
		}

		// DatabaseStore::add: stored only when absent or expired.
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
	})
}
