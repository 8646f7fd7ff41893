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

func TestForceRelease(t *testing.T) {
	ctx := context.Background()
	prefix := LockPrefix(testenv.Name("app")+"_database_", "app_cache")
	l, err := Open(ctx, Params{Addr: redisAddr(t), DB: 3, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	key := prefix + `laravel_unique_job:App\Jobs\Uniquek1`
	if _, err := l.do(ctx, "SET", key, "owner"); err != nil {
		t.Fatal(err)
	}
	if err := l.ForceRelease(ctx, `laravel_unique_job:App\Jobs\Uniquek1`); err != nil {
		t.Fatal(err)
	}
	if n, err := l.do(ctx, "EXISTS", key); err != nil || n != "0" {
		t.Fatalf("EXISTS %s after release = %q, %v; want 0", key, n, err)
	}
	// Absent locks release quietly, and a dropped connection is redialled.
	l.conn.Close()
	if err := l.ForceRelease(ctx, "absent"); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
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
