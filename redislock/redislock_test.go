package redislock

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

func redisAddr(t *testing.T) string {
	host, port := os.Getenv("REDIS_HOST"), os.Getenv("REDIS_PORT")
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "6379"
	}
	addr := net.JoinHostPort(host, port)
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		testenv.Missing(t, "Redis is not reachable at %s (%v): apt-get install redis-server (or run .ci/services)", addr, err)
	}
	c.Close()
	return addr
}

// openTest connects to database db of the test Redis with a prefix of its own.
func openTest(t *testing.T, db int) (*Locks, string) {
	t.Helper()
	prefix := LockPrefix(testenv.Name("app")+"_database_", "app_cache")
	l, err := Open(context.Background(), Params{Addr: redisAddr(t), DB: db, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, prefix
}

func TestForceRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, prefix := openTest(t, 3)
	key := prefix + `laravel_unique_job:App\Jobs\Uniquek1`
	if _, err := l.command(ctx, "SET", key, "owner"); err != nil {
		t.Fatal(err)
	}
	if err := l.ForceRelease(ctx, `laravel_unique_job:App\Jobs\Uniquek1`); err != nil {
		t.Fatal(err)
	}
	if n, err := l.command(ctx, "EXISTS", key); err != nil || n != "0" {
		t.Fatalf("EXISTS %s after release = %q, %v; want 0", key, n, err)
	}
	// Absent locks release quietly, and a dropped connection is redialled.
	l.single.conn.Close()
	if err := l.ForceRelease(ctx, "absent"); err != nil {
		t.Fatal(err)
	}
}

func TestCacheValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, prefix := openTest(t, 4)
	if v, ok, err := l.CacheGet(ctx, "illuminate:queue:restart"); err != nil || ok || v != "" {
		t.Fatalf("CacheGet of an absent key = %q, %v, %v; want absent", v, ok, err)
	}
	// RedisStore::forever keeps a number as it is.
	if _, err := l.command(ctx, "SET", prefix+"illuminate:queue:restart", "1700000000"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := l.CacheGet(ctx, "illuminate:queue:restart"); err != nil || !ok || v != "1700000000" {
		t.Fatalf("CacheGet = %q, %v, %v; want 1700000000", v, ok, err)
	}
	for want := int64(1); want <= 2; want++ {
		if n, err := l.CacheCount(ctx, "job-exceptions:u1", 24*time.Hour); err != nil || n != want {
			t.Fatalf("CacheCount = %d, %v; want %d", n, err, want)
		}
	}
	if ttl, err := l.command(ctx, "TTL", prefix+"job-exceptions:u1"); err != nil || ttl == "-1" || ttl == "-2" {
		t.Fatalf("TTL of the counter = %q, %v; want the day CacheCount put", ttl, err)
	}
	if err := l.CacheForget(ctx, "job-exceptions:u1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := l.CacheGet(ctx, "job-exceptions:u1"); err != nil || ok {
		t.Fatalf("the counter is still there after CacheForget (%v)", err)
	}
	_ = l.CacheForget(ctx, "illuminate:queue:restart")
}

func TestOpenStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := Params{Addr: redisAddr(t), Prefix: LockPrefix(testenv.Name("app")+"_database_", "app_cache")}
	same, err := OpenStore(ctx, p, 5, 5)
	if err != nil {
		t.Fatal(err)
	}
	same.Close()
	if same.Locks != same.Values {
		t.Error("one database opened two connections")
	}
	s, err := OpenStore(ctx, p, 5, 6)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Values.CacheCount(ctx, "job-exceptions:u2", time.Minute); err != nil {
		t.Fatal(err)
	}
	defer s.Values.CacheForget(ctx, "job-exceptions:u2")
	if _, ok, err := s.Locks.CacheGet(ctx, "job-exceptions:u2"); err != nil || ok {
		t.Fatalf("a value counted in the cache database is seen in the lock database (%v)", err)
	}
	if v, ok, err := s.Values.CacheGet(ctx, "job-exceptions:u2"); err != nil || !ok || v != "1" {
		t.Fatalf("CacheGet in the cache database = %q, %v, %v; want 1", v, ok, err)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	addr := redisAddr(t)
	if _, err := Open(context.Background(), Params{Addr: "127.0.0.1:1"}); err == nil {
		t.Error("Open of a closed port succeeded")
	}
	if _, err := Open(context.Background(), Params{Addr: addr, DB: 99999}); err == nil {
		t.Error("SELECT of an invalid database succeeded")
	}
}

func ExampleLockPrefix() {
	// Laravel 8's defaults for APP_NAME=Laravel: REDIS_PREFIX laravel_database_, CACHE_PREFIX laravel_cache.
	fmt.Println(LockPrefix("laravel_database_", "laravel_cache"))
	// Output: laravel_database_laravel_cache:
}

// TestLockAndLimiterValues checks the lock and the rate limiter's cache operations as RedisLock and
// RedisStore perform them: one owner at a time, owner-checked release, add only when absent.
func TestLockAndLimiterValues(t *testing.T) {
	ctx := context.Background()
	l, prefix := openTest(t, 4)
	name := `laravel-queue-overlap:App\Jobs\Guarded:k`
	if ok, err := l.LockAcquire(ctx, name, "a", 10); err != nil || !ok {
		t.Fatalf("acquire = %v, %v", ok, err)
	}
	if ok, err := l.LockAcquire(ctx, name, "b", 0); err != nil || ok {
		t.Fatalf("acquire of a held lock = %v, %v", ok, err)
	}
	if ttl, err := l.command(ctx, "TTL", prefix+name); err != nil || ttl != "10" {
		t.Fatalf("TTL = %q, %v", ttl, err)
	}
	if ok, err := l.LockRelease(ctx, name, "b"); err != nil || ok {
		t.Fatalf("release by another owner = %v, %v", ok, err)
	}
	if owner, ok, err := l.LockOwner(ctx, name); err != nil || !ok || owner != "a" {
		t.Fatalf("owner = %q, %v, %v", owner, ok, err)
	}
	if ok, err := l.LockRelease(ctx, name, "a"); err != nil || !ok {
		t.Fatalf("release by the owner = %v, %v", ok, err)
	}
	if _, ok, _ := l.LockOwner(ctx, name); ok {
		t.Fatal("the released lock is still there")
	}

	if ok, err := l.CacheAdd(ctx, "limit", "0", time.Minute); err != nil || !ok {
		t.Fatalf("add = %v, %v", ok, err)
	}
	if ok, err := l.CacheAdd(ctx, "limit", "5", time.Minute); err != nil || ok {
		t.Fatalf("add over a live key = %v, %v", ok, err)
	}
	if n, err := l.CacheIncrement(ctx, "limit", 1); err != nil || n != 1 {
		t.Fatalf("increment = %d, %v", n, err)
	}
	if err := l.CachePut(ctx, "limit", "7", time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := l.CacheGet(ctx, "limit"); err != nil || !ok || v != "7" {
		t.Fatalf("get = %q, %v, %v", v, ok, err)
	}
	if err := l.CacheForget(ctx, "limit"); err != nil {
		t.Fatal(err)
	}
}
