package interop

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/cli"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
)

// watchedOutput collects a command's output and reports when a text first appears in it.
type watchedOutput struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	text  string
	found chan struct{}
}

func (o *watchedOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	if o.found != nil && strings.Contains(o.buf.String(), o.text) {
		close(o.found)
		o.found = nil
	}
	return len(p), nil
}

func (o *watchedOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// TestPHPQueueRestartStopsGoWorker runs `artisan-go queue:work` on an app whose cache store is
// Redis, files or memcached, and stops it with PHP's own `php artisan queue:restart`, which writes the signal
// there. With REDIS_URL naming a database, both of PHP's Redis connections use it, and so must the worker.
func TestPHPQueueRestartStopsGoWorker(t *testing.T) {
	t.Parallel()
	redisURL := "REDIS_URL=redis://" + net.JoinHostPort(envOr("REDIS_HOST", "127.0.0.1"), envOr("REDIS_PORT", "6379")) + "/3"
	for store, opts := range map[string][]phpapp.Option{
		"redis": {phpapp.WithRedisCache()}, "redis-url": {phpapp.WithRedisCache(), phpapp.WithEnv(redisURL)},
		"file": {phpapp.WithFileCache()}, "memcached": {phpapp.WithMemcachedCache()},
	} {
		t.Run(store, func(t *testing.T) { restartStopsGoWorker(t, opts...) })
	}
	t.Run("memcached-pool", func(t *testing.T) { restartStopsGoWorker(t, memcachedPool(t, "modula")...) })
	t.Run("redis-cluster", func(t *testing.T) { restartStopsGoWorker(t, redisCluster(t)...) })
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func restartStopsGoWorker(t *testing.T, opts ...phpapp.Option) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		app := phpapp.New(t, db, opts...)
		phpRestartStopsGoWorker(t, ctx, app)
	})
}

// phpRestartStopsGoWorker runs `artisan-go queue:work args...` on the app until PHP's `php artisan
// queue:restart` stops it, and fails the test if it does not stop, or not for that.
func phpRestartStopsGoWorker(t *testing.T, ctx context.Context, app *phpapp.App, args ...string) {
	t.Helper()
	// A job no Go handler takes: once it is handed back, the worker has read the signal it starts from.
	app.MustDispatch(ctx, "closure")
	out := &watchedOutput{text: "Left for PHP", found: make(chan struct{})}
	seen := out.found
	done := make(chan int, 1)
	go func() {
		done <- cli.Do(ctx, append([]string{"queue:work", "--env-file", app.EnvFile(), "--sleep=0.05"}, args...), nil, io.Discard, out)
	}()
	select {
	case <-seen:
	case code := <-done:
		t.Fatalf("queue:work exited with %d before it ran anything\n%s", code, out)
	case <-time.After(time.Minute):
		t.Fatalf("queue:work did not hand back the closure job\n%s", out)
	}
	if out, err := app.Artisan(ctx, "queue:restart"); err != nil {
		t.Fatalf("php artisan queue:restart: %v\n%s", err, out)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("queue:work exited with %d after queue:restart, want 0\n%s", code, out)
		}
	case <-time.After(time.Minute):
		t.Fatalf("queue:work did not stop after PHP's queue:restart\n%s", out)
	}
	if !strings.Contains(out.String(), "queue:restart signal received") {
		t.Errorf("queue:work stopped without saying why\n%s", out)
	}
}

// TestMaxExceptionsCountedInRedis runs a job that throws every time, with maxExceptions 2 and 10
// tries, under Go with the Redis cache store, after one exception was already counted in Redis (as a
// PHP worker counts it): the next exception is the second, so the job fails on its first run under Go,
// and the counter is forgotten.
func TestMaxExceptionsCountedInRedis(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db, phpapp.WithRedisCache())
		s.registerMirrors()
		d := s.app.MustDispatch(ctx, "flaky", phpapp.Fail(5), phpapp.Tries(10), phpapp.MaxExceptions(2), phpapp.Backoff(0))
		key := "job-exceptions:" + d.Jobs[0].UUID
		if n, err := s.cache.CacheCount(ctx, key, 24*time.Hour); err != nil || n != 1 {
			t.Fatalf("count the earlier exception: %d, %v", n, err)
		}
		if st := s.drain(t, ctx, nil); st.Failed != 1 || st.Released != 0 {
			t.Fatalf("Go stats %+v, want the job failed on its first run: 1 failure, no release", st)
		}
		if runs := len(byClass(s.log(t, ctx))[`App\Jobs\Flaky`]); runs != 1 {
			t.Errorf("Go ran the job %d times, want 1", runs)
		}
		if _, ok, err := s.cache.CacheGet(ctx, key); err != nil || ok {
			t.Errorf("the exception counter is still in Redis after the failure (%v)", err)
		}
	})
}
