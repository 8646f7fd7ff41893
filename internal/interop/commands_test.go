package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/cli"
	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/worker"
)

// goArtisan runs one of artisan-go's commands on the app (its .env) and returns stdout, stderr and
// the exit status.
func goArtisan(ctx context.Context, app *phpapp.App, stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = cli.Do(ctx, append(args, "--env-file", app.EnvFile()), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// failSome fails jobs under Go (two queues) and under PHP, so failed_jobs holds rows both wrote.
func (s *side) failSome(t *testing.T, ctx context.Context) {
	t.Helper()
	s.reg.Register(`App\Jobs\Failing`, s.record(func(job *handlers.Job) error {
		return errors.New("go says no")
	}))
	s.app.MustDispatch(ctx, "failing", phpapp.Count(2), phpapp.OnQueue("critical"))
	s.app.MustDispatch(ctx, "failing")
	if st := s.drain(t, ctx, func(c *worker.Config) { c.Queues = []string{"critical", "default"} }); st.Failed != 3 {
		t.Fatalf("Go failed %d jobs, want 3", st.Failed)
	}
	s.app.MustDispatch(ctx, "failing", phpapp.OnQueue("php"))
	s.phpDrain(t, ctx, "--queue=php")
	if n := len(s.failed(t, ctx)); n != 4 {
		t.Fatalf("failed_jobs has %d rows, want 4", n)
	}
}

// TestQueueFailedSameAsPHP lists the same failed_jobs rows with php artisan queue:failed and with
// artisan-go queue:failed, with both failed-job providers: the output is the same byte for byte.
func TestQueueFailedSameAsPHP(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		out, _, code := goArtisan(ctx, s.app, "", "queue:failed")
		if php := s.artisan(t, ctx, "queue:failed"); code != 0 || out != php {
			t.Fatalf("empty table: artisan-go (exit %d)\n%q\nphp\n%q", code, out, php)
		}
		s.failSome(t, ctx)
		for _, driver := range []string{"database-uuids", "database"} {
			app := s.app
			if driver == "database" {
				app = phpapp.New(t, db, phpapp.WithoutSchema(), phpapp.WithEnv("QUEUE_FAILED_DRIVER=database",
					"CACHE_PREFIX="+s.app.Getenv("CACHE_PREFIX")))
			}
			php, err := app.Artisan(ctx, "queue:failed")
			if err != nil {
				t.Fatal(err)
			}
			out, errOut, code := goArtisan(ctx, app, "", "queue:failed")
			if code != 0 || out != php {
				t.Errorf("%s provider: artisan-go (exit %d, stderr %q)\n%s\nphp\n%s", driver, code, errOut, out, php)
			}
		}
	})
}

// TestQueueRetryWritesWhatPHPWrites retries one failed job with PHP and a twin of it with
// artisan-go: the jobs rows are the same (payload byte for byte, attempts 0, queue, available now);
// then PHP runs the job Go retried and Go the one PHP retried.
func TestQueueRetryWritesWhatPHPWrites(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		// Go fails every job on its first run: a plain job, an encrypted one and one with retryUntil.
		var mu sync.Mutex
		seen := map[string]bool{}
		fail := s.record(func(job *handlers.Job) error {
			mu.Lock()
			defer mu.Unlock()
			if seen[job.UUID] {
				return nil
			}
			seen[job.UUID] = true
			job.Fail(errors.New("first run fails"))
			return nil
		})
		classes := []string{`App\Jobs\Plain`, `App\Jobs\Secret`, `App\Jobs\RetryUntil`}
		for _, class := range classes {
			s.reg.Register(class, fail)
		}
		s.app.MustDispatch(ctx, "plain", phpapp.Count(2))
		s.app.MustDispatch(ctx, "encrypted", phpapp.Count(2))
		s.app.MustDispatch(ctx, "retry-until", phpapp.Count(2), phpapp.Seconds(600))
		if st := s.drain(t, ctx, nil); st.Failed != 6 {
			t.Fatalf("Go failed %d jobs, want 6", st.Failed)
		}
		byClass := map[string][]phpapp.FailedRow{}
		for _, f := range s.failed(t, ctx) {
			var env struct {
				DisplayName string `json:"displayName"`
			}
			_ = json.Unmarshal([]byte(f.Payload), &env)
			byClass[env.DisplayName] = append(byClass[env.DisplayName], f)
		}
		for _, class := range classes {
			rows := byClass[class]
			if len(rows) != 2 {
				t.Fatalf("%d failed %s rows, want 2", len(rows), class)
			}
			gos, php := rows[0], rows[1]
			out, errOut, code := goArtisan(ctx, s.app, "", "queue:retry", gos.UUID)
			if code != 0 || out != "The failed job ["+gos.UUID+"] has been pushed back onto the queue!\n" {
				t.Fatalf("artisan-go queue:retry %s: exit %d\n%s%s", class, code, out, errOut)
			}
			if note := strings.Contains(errOut, "retryUntil kept at"); note != (class == `App\Jobs\RetryUntil`) {
				t.Errorf("artisan-go queue:retry %s: stderr %q", class, errOut)
			}
			s.artisan(t, ctx, "queue:retry", php.UUID)
			jobs := s.jobs(t, ctx)
			if len(jobs) != 2 || jobs[0].UUID() != gos.UUID || jobs[1].UUID() != php.UUID {
				t.Fatalf("after retrying %s: jobs %+v", class, jobs)
			}
			gj, pj := jobs[0], jobs[1]
			// What Go writes for PHP's twin is what PHP wrote, byte for byte.
			want, _, err := worker.RetryPayload(context.Background(), worker.RetryParams{Payload: []byte(php.Payload), Keyring: s.keyring})
			if err != nil || string(want) != pj.Payload {
				t.Errorf("%s: for PHP's failed row Go would push (%v)\n%s\nPHP pushed\n%s", class, err, want, pj.Payload)
			}
			// Laravel reads the clock for available_at, then for created_at: one second apart as it ticks.
			if gj.Attempts != 0 || gj.ReservedAt != nil || gj.Queue != pj.Queue || gj.AvailableAt != gj.CreatedAt ||
				pj.CreatedAt-pj.AvailableAt < 0 || pj.CreatedAt-pj.AvailableAt > 1 {
				t.Errorf("%s: Go's row %+v, PHP's %+v", class, gj, pj)
			}
			// PHP runs the job Go retried (the lower id), then Go the one PHP retried.
			if out, err := s.app.Artisan(ctx, "queue:work", "database", "--once"); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if st := s.drain(t, ctx, nil); st.Processed != 1 {
				t.Errorf("Go ran %d jobs after PHP's retry of %s, want 1", st.Processed, class)
			}
			var phpRan, goRan bool
			for _, e := range s.log(t, ctx) {
				phpRan = phpRan || e.Runner == "php" && e.UUID == gos.UUID
				goRan = goRan || e.Runner == "go" && e.UUID == php.UUID && e.Attempts == 1
			}
			if !phpRan || !goRan {
				t.Errorf("%s: PHP ran Go's retry %v, Go ran PHP's retry %v", class, phpRan, goRan)
			}
		}
		if rows := s.jobs(t, ctx); len(rows) != 0 {
			t.Errorf("%d jobs left", len(rows))
		}
		if rows := s.failed(t, ctx); len(rows) != 0 {
			t.Errorf("failed_jobs = %+v, want empty: every retried job ran", rows)
		}
	})
}

// TestQueueRetryAllStopsWherePHPStops retries all failed jobs, one of which PHP's queue:retry cannot
// unserialize: an encrypted job after APP_KEY changed, or a job whose model's row was deleted since. PHP
// pushes the jobs before it (newest first), throws at it and leaves it and the older ones failed.
// artisan-go, on a twin of the same rows, stops at the same job, with exit status 1.
func TestQueueRetryAllStopsWherePHPStops(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, kind, class, php string
		// spoil changes the twin so that the job cannot be retried, and returns the app to retry with.
		spoil func(t *testing.T, ctx context.Context, s *side, twin testenv.Database) *phpapp.App
	}{
		{"another APP_KEY", "encrypted", `App\Jobs\Secret`, "The MAC is invalid.", func(t *testing.T, ctx context.Context, s *side, twin testenv.Database) *phpapp.App {
			return phpapp.New(t, twin, phpapp.WithoutSchema(), phpapp.WithEnv("CACHE_PREFIX="+s.app.Getenv("CACHE_PREFIX")))
		}},
		{"a deleted model", "model", `App\Jobs\WithModel`, "No query results for model [App\\Models\\User].", func(t *testing.T, ctx context.Context, s *side, twin testenv.Database) *phpapp.App {
			if _, err := s.app.DB().ExecContext(ctx, "delete from "+s.app.Table("users")); err != nil {
				t.Fatal(err)
			}
			return s.app
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				ctx := testContext(t)
				left := map[string]string{}
				fresh := map[string]func(testing.TB) testenv.Database{"mysql": testenv.MySQL, "pgsql": testenv.Postgres, "sqlite": testenv.SQLite}
				for _, who := range []string{"php", "go"} {
					twin := db
					if who == "go" {
						twin = fresh[db.Dialect](t)
					}
					s := newSide(t, twin)
					fail := s.record(func(job *handlers.Job) error { job.Fail(errors.New("no")); return nil })
					s.reg.Register(`App\Jobs\Plain`, fail)
					s.reg.Register(c.class, fail)
					for _, kind := range []string{"plain", c.kind, "plain"} {
						s.app.MustDispatch(ctx, kind)
					}
					if st := s.drain(t, ctx, func(c *worker.Config) { c.Concurrency = 1 }); st.Failed != 3 {
						t.Fatalf("Go failed %d jobs, want 3", st.Failed)
					}
					app := c.spoil(t, ctx, s, twin)
					if who == "php" {
						if out, err := app.Artisan(ctx, "queue:retry", "all"); err == nil || !strings.Contains(out, c.php) {
							t.Fatalf("php artisan queue:retry all: %v\n%s", err, out)
						}
					} else if out, errOut, code := goArtisan(ctx, app, "", "queue:retry", "all"); code != 1 || !strings.Contains(errOut, "stopped at failed job") || !strings.Contains(errOut, c.php) {
						t.Fatalf("artisan-go queue:retry all: exit %d\n%s%s", code, out, errOut)
					}
					var classes []string
					for _, f := range s.failed(t, ctx) {
						var env struct {
							DisplayName string `json:"displayName"`
						}
						_ = json.Unmarshal([]byte(f.Payload), &env)
						classes = append(classes, env.DisplayName)
					}
					left[who] = fmt.Sprintf("failed %v, %d jobs queued", classes, len(s.jobs(t, ctx)))
				}
				if left["go"] != left["php"] {
					t.Errorf("after artisan-go queue:retry all: %s; after PHP's: %s", left["go"], left["php"])
				}
				t.Logf("left as PHP leaves them: %s", left["php"])
			})
		})
	}
}

// cacheStores runs fn on every database, with the app's cache store in the database, in Redis, in
// files and in memcached, and artisan-go set to Laravel 12.40, which has queue:pause.
func cacheStores(t *testing.T, fn func(t *testing.T, s *side)) {
	for _, store := range config.ReachedStores {
		t.Run(store, func(t *testing.T) {
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				// Laravel 11+ names the cache store CACHE_STORE (the 8.83 app reads CACHE_DRIVER), and
				// 12.20+ derives another Redis prefix than 8.83's: both are set for both versions.
				opts := []phpapp.Option{phpapp.WithEnv("ARTISAN_GO_LARAVEL_VERSION=12.40", "CACHE_STORE="+store, "REDIS_PREFIX=laravel_database_")}
				switch store {
				case "redis":
					opts = append(opts, phpapp.WithRedisCache())
				case "file":
					opts = append(opts, phpapp.WithFileCache())
				case "memcached":
					opts = append(opts, phpapp.WithMemcachedCache())
				}
				fn(t, newSide(t, db, opts...))
			})
		})
	}
	// A pool of three memcached servers with Ketama's distribution, on one database: the unit tests of
	// the memcached package place every key as PHP does; this runs the commands and workers over it.
	t.Run("memcached-pool", func(t *testing.T) {
		opts := append([]phpapp.Option{phpapp.WithEnv("ARTISAN_GO_LARAVEL_VERSION=12.40", "CACHE_STORE=memcached")}, memcachedPool(t, "ketama")...)
		fn(t, newSide(t, testenv.SQLite(t), opts...))
	})
	// A Redis Cluster of three masters, on one database: the redislock package's tests follow its slots
	// as they move; this runs the commands and workers over it.
	t.Run("redis-cluster", func(t *testing.T) {
		opts := append([]phpapp.Option{phpapp.WithEnv("ARTISAN_GO_LARAVEL_VERSION=12.40", "CACHE_STORE=redis", "REDIS_PREFIX=laravel_database_")}, redisCluster(t)...)
		fn(t, newSide(t, testenv.SQLite(t), opts...))
	})
}

// redisCluster starts a Redis Cluster of the test's own and returns the options that make it the
// app's Redis: PHP declares both connections as the cluster's (config/database.php's clusters), and
// artisan-go is given one node of it as REDIS_HOST and REDIS_PORT.
func redisCluster(t *testing.T) []phpapp.Option {
	ports := testenv.StartRedisCluster(t)
	var nodes []string
	for _, p := range ports {
		nodes = append(nodes, fmt.Sprintf("127.0.0.1:%d", p))
	}
	return []phpapp.Option{phpapp.WithRedisCache(), phpapp.WithEnv(
		"REDIS_CLUSTER_NODES="+strings.Join(nodes, ","), "REDIS_HOST=127.0.0.1", fmt.Sprintf("REDIS_PORT=%d", ports[1]),
	)}
}

// memcachedPool starts three memcached servers of the test's own and returns the options that make
// them the app's memcached pool, with the distribution d, for PHP (config/cache.php's servers and
// options) and for artisan-go (cache.memcached.servers and distribution).
func memcachedPool(t *testing.T, d string) []phpapp.Option {
	var servers []string
	for i := range 3 {
		servers = append(servers, fmt.Sprintf("127.0.0.1:%d:%d", testenv.StartMemcached(t), 100+50*i))
	}
	list := strings.Join(servers, ",")
	return []phpapp.Option{phpapp.WithMemcachedCache(), phpapp.WithEnv(
		"MEMCACHED_SERVERS="+list, "MEMCACHED_DISTRIBUTION="+d,
		"ARTISAN_GO_CACHE_MEMCACHED_SERVERS="+list, "ARTISAN_GO_CACHE_MEMCACHED_DISTRIBUTION="+d,
		"MEMCACHED_HOST=127.0.0.1", "MEMCACHED_PORT=1", // not the pool: a worker reading them finds nothing
	)}
}

// TestQueueRestartStopsPHPWorker stops PHP's queue:work with artisan-go queue:restart, with the
// database, the Redis and the file cache store; PHP then reads the signal as the number it wrote itself.
func TestQueueRestartStopsPHPWorker(t *testing.T) {
	t.Parallel()
	cacheStores(t, func(t *testing.T, s *side) {
		{
			ctx, app := testContext(t), s.app
			w := app.StartWorker(ctx, "--sleep=1")
			// Once the worker has run a job, it has read the restart signal it starts from.
			app.MustDispatch(ctx, "plain")
			if _, err := app.WaitLog(ctx, func(e []phpapp.LogEntry) bool { return len(e) == 1 }); err != nil {
				t.Fatalf("%v\n%s", err, w.Output())
			}
			before := time.Now().Unix()
			out, errOut, code := goArtisan(ctx, app, "", "queue:restart")
			if code != 0 || out != "\n   INFO  Broadcasting queue restart signal.  \n\n" {
				t.Fatalf("queue:restart: exit %d\n%s%s", code, out, errOut)
			}
			select {
			case <-w.Done():
			case <-time.After(30 * time.Second):
				t.Fatalf("PHP's worker did not stop after artisan-go queue:restart\n%s", w.Output())
			}
			if err := w.Wait(); err != nil {
				t.Errorf("PHP's worker: %v", err)
			}
			// RedisStore keeps numbers unserialized and reads them back as strings, as it does PHP's own.
			got := strings.Trim(strings.TrimSpace(app.MustArtisan(ctx, "interop:cache", "get", "illuminate:queue:restart")), `"`)
			if n, err := strconv.ParseInt(got, 10, 64); err != nil || n < before || n > time.Now().Unix() {
				t.Errorf("PHP reads the restart signal as %q, want the time as an integer", got)
			}
		}
	})
}

// TestQueuePauseBothWays pauses a queue the way PHP 12.40's queue:pause does (Cache::forever(key,
// true)) and sees artisan-go's worker leave it alone until artisan-go queue:resume; and pauses with
// artisan-go queue:pause and reads it back through PHP's cache, as PHP's worker would.
func TestQueuePauseBothWays(t *testing.T) {
	t.Parallel()
	cacheStores(t, func(t *testing.T, s *side) {
		{
			ctx, app := testContext(t), s.app
			s.reg.Register(`App\Jobs\Noop`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
			key := "illuminate:queue:paused:database:low"
			app.MustArtisan(ctx, "interop:cache", "forever", key)
			app.MustDispatch(ctx, "noop", phpapp.OnQueue("low"))
			app.MustDispatch(ctx, "noop", phpapp.OnQueue("high"))
			run := func() { s.drain(t, ctx, func(c *worker.Config) { c.Queues = []string{"high", "low"} }) }
			run()
			jobs, err := app.Jobs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 1 || jobs[0].Queue != "low" || jobs[0].Attempts != 0 {
				t.Fatalf("with low paused by PHP, jobs left = %+v, want the low job untouched", jobs)
			}
			out, errOut, code := goArtisan(ctx, app, "", "queue:resume", "low")
			if code != 0 || out != "\n   INFO  Job processing on queue [database:low] has been resumed.  \n\n" {
				t.Fatalf("queue:resume: exit %d\n%q%s", code, out, errOut)
			}
			if got := strings.TrimSpace(app.MustArtisan(ctx, "interop:cache", "get", key)); got != "null" {
				t.Errorf("after queue:resume PHP reads %s", got)
			}
			run()
			if jobs, _ := app.Jobs(ctx); len(jobs) != 0 {
				t.Fatalf("after queue:resume, jobs left = %+v", jobs)
			}

			if _, errOut, code := goArtisan(ctx, app, "", "queue:pause", "low"); code != 0 {
				t.Fatalf("queue:pause: exit %d\n%s", code, errOut)
			}
			if got := strings.TrimSpace(app.MustArtisan(ctx, "interop:cache", "get", key)); got != "true" {
				t.Errorf("after artisan-go queue:pause PHP reads %s, want true", got)
			}
		}
	})
}

// TestQueueRetryBatchAndPruneBatches retries the failed job of a PHP batch with artisan-go
// queue:retry-batch (and its twin batch's with PHP's), then prunes finished and unfinished batches
// with artisan-go queue:prune-batches, which PHP's Bus::findBatch no longer finds.
func TestQueueRetryBatchAndPruneBatches(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		ok := s.app.MustDispatch(ctx, "batch", phpapp.Count(2))
		goBatch := s.app.MustDispatch(ctx, "batch", phpapp.Count(3), phpapp.Fail(2), phpapp.AllowFailures())
		phpBatch := s.app.MustDispatch(ctx, "batch", phpapp.Count(3), phpapp.Fail(2), phpapp.AllowFailures())
		s.phpDrain(t, ctx)
		failedOf := func(d *phpapp.Dispatched) string {
			b, err := s.app.FindBatch(ctx, d.Batch)
			if err != nil || b == nil || len(b.FailedJobIDs) != 1 {
				t.Fatalf("batch %s: %+v, %v; want one failed job", d.Batch, b, err)
			}
			return b.FailedJobIDs[0]
		}
		goFailed, phpFailed := failedOf(goBatch), failedOf(phpBatch)

		out, errOut, code := goArtisan(ctx, s.app, "", "queue:retry-batch", goBatch.Batch)
		php := s.artisan(t, ctx, "queue:retry-batch", phpBatch.Batch)
		if code != 0 || out != strings.ReplaceAll(php, phpFailed, goFailed) {
			t.Errorf("queue:retry-batch: artisan-go (exit %d)\n%s%s\nphp\n%s", code, out, errOut, php)
		}
		jobs := s.jobs(t, ctx)
		if len(jobs) != 2 || jobs[0].UUID() != goFailed || jobs[1].UUID() != phpFailed || jobs[0].Attempts != 0 {
			t.Fatalf("after queue:retry-batch, jobs = %+v", jobs)
		}
		if rows := s.failed(t, ctx); len(rows) != 0 {
			t.Errorf("failed_jobs still has %d rows", len(rows))
		}
		s.phpDrain(t, ctx)

		// Age the batches by three days, then prune: the finished one goes with --hours, the two
		// unfinished ones (their member failed again) with --unfinished.
		if _, err := s.app.DB().ExecContext(ctx, "update job_batches set created_at = created_at - 259200, "+
			"finished_at = case when finished_at is null then null else finished_at - 259200 end"); err != nil {
			t.Fatal(err)
		}
		out, errOut, code = goArtisan(ctx, s.app, "", "queue:prune-batches", "--unfinished=48")
		if code != 0 || out != "1 entries deleted!\n2 unfinished entries deleted!\n" {
			t.Errorf("queue:prune-batches: exit %d\n%s%s", code, out, errOut)
		}
		for _, d := range []*phpapp.Dispatched{ok, goBatch, phpBatch} {
			if b, err := s.app.FindBatch(ctx, d.Batch); err != nil || b != nil {
				t.Errorf("PHP still finds batch %s after pruning: %+v, %v", d.Batch, b, err)
			}
		}
	})
}

// TestQueueClearAsksAsPHPDoes answers no to queue:clear in production, with PHP and with artisan-go:
// the same warning, question and cancellation, the same exit status, and nothing deleted; --force
// clears without asking.
func TestQueueClearAsksAsPHPDoes(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		app := phpapp.New(t, db, phpapp.WithEnv("APP_ENV=production"))
		app.MustDispatch(ctx, "plain", phpapp.Count(2))
		// Answered no; the input ended before an answer; "yes" under -q and nothing under -n, which
		// make the command not interactive, so that the question takes its default answer (no).
		for _, tc := range []struct {
			stdin string
			args  []string
		}{{"no\n", nil}, {"", nil}, {"yes\n", []string{"-q"}}, {"", []string{"-n"}}} {
			args := append([]string{"queue:clear"}, tc.args...)
			cmd := exec.CommandContext(ctx, app.PHP(), append([]string{"artisan"}, args...)...)
			cmd.Dir, cmd.Env, cmd.Stdin = app.Dir(), append(os.Environ(), app.Env()...), strings.NewReader(tc.stdin)
			php, err := cmd.Output()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("php artisan %v with %q: %v\n%s", args, tc.stdin, err, php)
			}
			out, errOut, code := goArtisan(ctx, app, tc.stdin, args...)
			if code != 1 || out != string(php) {
				t.Errorf("artisan-go %v with %q: exit %d\n%q%s\nphp\n%q", args, tc.stdin, code, out, errOut, php)
			}
			if jobs, _ := app.Jobs(ctx); len(jobs) != 2 {
				t.Fatalf("%d jobs left after %v with %q, want 2", len(jobs), args, tc.stdin)
			}
		}
		out, _, code := goArtisan(ctx, app, "", "queue:clear", "--force")
		if code != 0 || out != "Cleared 2 jobs from the [default] queue \n" {
			t.Errorf("queue:clear --force: exit %d, %q", code, out)
		}
	})
}

// TestQueueCommandsPrintWhatPHPPrints runs the same commands with PHP and with artisan-go on the
// same tables and compares what they print: queue:forget (of twin jobs), queue:prune-failed,
// queue:flush, queue:monitor (artisan-go also exits 1 over --max), queue:restart and queue:retry of
// an unknown id (which artisan-go prints on stderr and exits 1 for).
func TestQueueCommandsPrintWhatPHPPrints(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		// Plain, then coloured as Symfony colours them on a terminal (--ansi).
		for _, ansi := range [][]string{nil, {"--ansi"}} {
			d := s.app.MustDispatch(ctx, "failing", phpapp.Count(2))
			s.phpDrain(t, ctx)
			s.app.MustDispatch(ctx, "plain", phpapp.Count(3), phpapp.OnQueue("high"))
			s.app.MustDispatch(ctx, "plain", phpapp.Count(3), phpapp.OnQueue("low"))
			same := func(goArgs, phpArgs []string, wantCode int, stream string) {
				t.Helper()
				php := s.artisan(t, ctx, append(phpArgs, ansi...)...)
				out, errOut, code := goArtisan(ctx, s.app, "", append(goArgs, ansi...)...)
				got := out
				if stream == "stderr" {
					// The line PHP prints, then the one saying nothing was done.
					got, _, _ = strings.Cut(errOut, "\n")
					got += "\n"
				}
				if code != wantCode || got != strings.ReplaceAll(php, "[low]", "[high]") {
					t.Errorf("%v: artisan-go (exit %d)\n%q\nstderr %q\nphp %v\n%q", goArgs, code, out, errOut, phpArgs, php)
				}
			}
			same([]string{"queue:forget", d.Jobs[0].UUID}, []string{"queue:forget", d.Jobs[1].UUID}, 0, "stdout")
			same([]string{"queue:monitor", "default,database:high", "--max=3"}, []string{"queue:monitor", "default,database:high", "--max=3"}, 1, "stdout")
			same([]string{"queue:monitor", "high"}, []string{"queue:monitor", "high"}, 0, "stdout")
			same([]string{"queue:retry", "no-such-id"}, []string{"queue:retry", "no-such-id"}, 1, "stderr")
			same([]string{"queue:prune-failed"}, []string{"queue:prune-failed"}, 0, "stdout")
			same([]string{"queue:restart"}, []string{"queue:restart"}, 0, "stdout")
			same([]string{"queue:flush"}, []string{"queue:flush"}, 0, "stdout")
			same([]string{"queue:failed"}, []string{"queue:failed"}, 0, "stdout")
			same([]string{"queue:clear", "--queue=high", "--force"}, []string{"queue:clear", "--queue=low", "--force"}, 0, "stdout")
			// The sync driver holds no jobs: PHP sizes its queues 0 and does not clear them. An empty
			// queue name is shown empty and sized as the default queue.
			same([]string{"queue:clear", "sync"}, []string{"queue:clear", "sync"}, 0, "stdout")
			same([]string{"queue:monitor", "sync:default,database:,default"}, []string{"queue:monitor", "sync:default,database:,default"}, 0, "stdout")
		}
	})
}
