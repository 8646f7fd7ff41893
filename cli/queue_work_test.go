package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

// newSQLiteApp creates a Laravel-like SQLite database with the queue tables and the given fixtures on
// queue emails, and a .env pointing at it.
func newSQLiteApp(t *testing.T, names ...string) (conn *laravel.Conn, env string) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "database.sqlite")
	ctx := context.Background()
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.SQLite, Database: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{}); err != nil {
		t.Fatal(err)
	}
	q, err := laravel.NewQueue(conn, laravel.QueueParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if _, err := q.JobPush(ctx, &laravel.JobPushParams{Queue: "emails", Payload: fixtures.Laravel883()[name].Payload, Now: 1, AvailableAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	env = filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nCACHE_DRIVER=database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return conn, env
}

func TestQueueWorkStopWhenEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, env := newSQLiteApp(t, "welcome")
	var out, errb bytes.Buffer
	code := Do(ctx, []string{"queue:work", "database", "--env-file", env, "--queue=high,emails", "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit status %d: %s", code, errb.String())
	}
	log := errb.String()
	for _, want := range []string{"strategy=batch", `strategy_reason="chosen: SQLite`, "queues=high,emails", `Left for PHP (no Go handler)`, "stopping (--stop-when-empty)", "left_for_php=1"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	var attempts int
	var reserved *int64
	if err := queuetest.DB(conn).QueryRow("select attempts, reserved_at from jobs").Scan(&attempts, &reserved); err != nil {
		t.Fatal(err)
	}
	if attempts != 0 || reserved != nil {
		t.Fatalf("unhandled job attempts %d reserved_at %v, want handed back untouched", attempts, reserved)
	}
}

// TestQueueWorkMissingCacheTable: with the database cache store and no cache table the worker does not
// start, as PHP's stops on reading the restart signal, and says how to create the table. It used to
// run, warning at every poll, where php artisan queue:restart could never stop it.
func TestQueueWorkMissingCacheTable(t *testing.T) {
	t.Parallel()
	conn, env := newSQLiteApp(t, "welcome")
	if _, err := queuetest.DB(conn).Exec("drop table cache"); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--queue=emails", "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "php artisan cache:table && php artisan migrate") {
		t.Fatalf("exit %d, want 1 naming cache:table:\n%s", code, errb.String())
	}
	var attempts int
	if err := queuetest.DB(conn).QueryRow("select attempts from jobs").Scan(&attempts); err != nil || attempts != 0 {
		t.Fatalf("job attempts %d (%v), want untouched", attempts, err)
	}
}

// TestQueueWorkArrayStore runs queue:work with CACHE_DRIVER=array: the worker keeps the store in its
// own memory, as each PHP worker does, so maxExceptions is counted there, from nothing in each process
// (PHP 8.83's workers do the same), and a warning says what the store cannot share.
func TestQueueWorkArrayStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, env := newSQLiteApp(t)
	dir := filepath.Dir(env)
	if err := os.WriteFile(env, []byte("DB_CONNECTION=sqlite\nDB_DATABASE="+filepath.Join(dir, "database.sqlite")+"\nCACHE_DRIVER=array\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(dir, "runs")
	cfg := filepath.Join(dir, "artisan-go.yaml")
	if err := os.WriteFile(cfg, []byte("routes:\n  - class: App\\Jobs\\Boom\n    exec: [sh, -c, 'echo run >> "+runs+"; exit 1']\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Do(ctx, []string{"queue:push", `App\Jobs\Boom`, "--env-file", env, "--tries=5", "--max-exceptions=2"}, nil, &out, &errb); code != 0 {
		t.Fatalf("queue:push exit status %d: %s", code, errb.String())
	}
	// A first worker takes one attempt; the second counts from nothing again, as a second PHP
	// process does: its second exception fails the job, at the third run.
	for _, stop := range []string{"--once", "--stop-when-empty"} {
		errb.Reset()
		if code := Do(ctx, []string{"queue:work", "--env-file", env, "--config", cfg, stop, "--sleep=0"}, nil, &out, &errb); code != 0 {
			t.Fatalf("%s: exit status %d: %s", stop, code, errb.String())
		}
		if !strings.Contains(errb.String(), `cache.store \"array\" lives in each process's memory`) {
			t.Errorf("no warning about the array store:\n%s", errb.String())
		}
	}
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	var failed, cached int
	if err := queuetest.DB(conn).QueryRow("select (select count(*) from failed_jobs), (select count(*) from cache)").Scan(&failed, &cached); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "run"); n != 3 || failed != 1 || cached != 0 {
		t.Fatalf("the job ran %d times, %d failed, %d cache rows; want 3 runs (maxExceptions 2, counted in each process), 1 failed and the count kept out of the cache table", n, failed, cached)
	}
}

// TestQueueWorkRefusedCompletion: a completion the database refuses (here a trigger on failed_jobs;
// in production a revoked grant or a dropped table) leaves the row reserved, and queue:work exits with
// status 1 naming it, so that a supervisor or a deploy step sees it.
func TestQueueWorkRefusedCompletion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, env := newSQLiteApp(t)
	if _, err := queuetest.DB(conn).Exec("create trigger refuse before insert on failed_jobs begin select raise(abort, 'failed_jobs refuses rows'); end"); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, env, "routes:\n  - class: App\\Jobs\\Boom\n    exec: [\"false\"]\n")
	var out, errb bytes.Buffer
	if code := Do(ctx, []string{"queue:push", `App\Jobs\Boom`, "--env-file", env, "--tries=1"}, nil, &out, &errb); code != 0 {
		t.Fatalf("queue:push exit status %d: %s", code, errb.String())
	}
	errb.Reset()
	code := Do(ctx, []string{"queue:work", "--env-file", env, "--config", cfg, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "COMPLETION REFUSED") || !strings.Contains(errb.String(), "the database refused the completion of 1 job(s)") ||
		!strings.Contains(errb.String(), "artisan-go worker stopped\" status=1") {
		t.Fatalf("queue:work exit status %d, want 1 naming the refused completion:\n%s", code, errb.String())
	}
	var reserved int
	if err := queuetest.DB(conn).QueryRow("select count(*) from jobs where reserved_at is not null").Scan(&reserved); err != nil || reserved != 1 {
		t.Fatalf("%d reserved rows (%v), want the job's row kept reserved", reserved, err)
	}
}

func TestQueueWorkClaimBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, env := newSQLiteApp(t, "welcome", "podcast", "unique")
	var out, errb bytes.Buffer
	code := Do(ctx, []string{"queue:work", "--env-file", env, "--queue=emails", "--strategy=batch", "--claim-batch=2", "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit status %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "claim_batch=2 claim_lanes=1") {
		t.Errorf("start log does not show claim_batch=2 claim_lanes=1:\n%s", errb.String())
	}
	var reserved int
	if err := queuetest.DB(conn).QueryRow("select count(*) from jobs where reserved_at is not null").Scan(&reserved); err != nil {
		t.Fatal(err)
	}
	if reserved != 0 {
		t.Fatalf("%d jobs still reserved after the worker stopped; prefetched rows must be given back", reserved)
	}
	errb.Reset()
	if code := Do(ctx, []string{"queue:work", "--env-file", env, "--claim-batch=-3", "--once"}, nil, &out, &errb); code == 0 || !strings.Contains(errb.String(), "worker.claim_batch") {
		t.Fatalf("--claim-batch=-3: exit status %d, stderr %q; want an error naming worker.claim_batch", code, errb.String())
	}
	// One lane by default; --claim-lanes sets them, and --once runs one.
	for _, tc := range []struct {
		args  []string
		lanes string
	}{
		{nil, "claim_lanes=1"}, {[]string{"--claim-lanes=3"}, "claim_lanes=3"}, {[]string{"--claim-lanes=3", "--once"}, "claim_lanes=1"},
	} {
		errb.Reset()
		args := append([]string{"queue:work", "--env-file", env, "--stop-when-empty", "--sleep=0"}, tc.args...)
		if code := Do(ctx, args, nil, &out, &errb); code != 0 || !strings.Contains(errb.String(), tc.lanes) {
			t.Errorf("%v: exit status %d, start log without %s:\n%s", tc.args, code, tc.lanes, errb.String())
		}
	}
}

func TestQueueWorkBadInput(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"queue:work", "--no-such-flag"}, nil, &out, &errb); code != 1 {
		t.Fatalf("unknown flag: exit status %d", code)
	}
	errb.Reset()
	code := Do(context.Background(), []string{"queue:work", "--tries=many"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "worker.tries") {
		t.Fatalf("bad --tries: exit status %d, stderr %q", code, errb.String())
	}
}

func TestQueueWorkRoutes(t *testing.T) {
	t.Parallel()
	conn, env := newSQLiteApp(t, "raw", "raw-string")
	cfg := writeConfig(t, env, "routes:\n  - class: 'App\\Handlers\\Legacy'\n    builtin: noop\n")
	var out, errb bytes.Buffer
	// One job at a time, as Laravel runs them, so that each job's lines follow each other.
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--config", cfg, "--queue", "emails", "--stop-when-empty", "--json", "--concurrency", "1"}, nil, &out, &errb)
	if code != 0 || !strings.Contains(errb.String(), `"processed":2`) || strings.Contains(errb.String(), `"msg":"Processed"`) {
		t.Fatalf("exit status %d, log:\n%s", code, errb.String())
	}
	var n int
	if err := queuetest.DB(conn).QueryRow("select count(*) from jobs").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d jobs left (%v), want the routed raw jobs done", n, err)
	}
	// --json prints Laravel 11.27+'s job lines on standard output: starting and success for each job.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("stdout has %d lines, want 4 (starting and success for 2 jobs):\n%s", len(lines), out.String())
	}
	for i, line := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		status := map[bool]string{true: "starting", false: "success"}[i%2 == 0]
		job := `App\Handlers\Legacy`
		if i >= 2 {
			job += "@fire" // the raw job without a displayName shows its job key, as PHP's JobName::resolve
		}
		if e["status"] != status || e["level"] != "info" || e["job"] != job || e["queue"] != "emails" ||
			e["connection"] != "database" || e["attempts"] != 1.0 || e["id"] == nil || (status == "success") != (e["result"] == "deleted") ||
			(status == "success") != (e["duration"] != nil) || e["timestamp"] == nil {
			t.Errorf("line %d: %s", i+1, line)
		}
	}
}

func TestQueueWorkMetricsAddrInUse(t *testing.T) {
	t.Parallel()
	_, env := newSQLiteApp(t, "welcome")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--metrics-addr", busy.Addr().String(), "--stop-when-empty"}, nil, &out, &errb)
	msg := errb.String()
	if code == 0 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "metrics address "+busy.Addr().String()) || !strings.Contains(msg, "address already in use") {
		t.Fatalf("exit status %d, stderr %q; want one line naming the address in use, and a non-zero status", code, msg)
	}
}

func TestQueueWorkServesMetrics(t *testing.T) {
	t.Parallel()
	_, env := newSQLiteApp(t, "welcome")
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--queue=emails", "--metrics-addr", "127.0.0.1:0", "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 0 || !strings.Contains(errb.String(), "serving metrics") {
		t.Fatalf("exit status %d, log:\n%s", code, errb.String())
	}
}

func TestQueueWorkWritesPulseRows(t *testing.T) {
	t.Parallel()
	conn, env := newSQLiteApp(t, "podcast")
	if err := laravel.CreatePulseTables(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, env, "routes:\n  - class: 'App\\Jobs\\ProcessPodcast'\n    builtin: noop\npulse:\n  slow_job_threshold: 0s\n")
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--config", cfg, "--queue", "emails", "--stop-when-empty"}, nil, &out, &errb)
	if code != 0 || !strings.Contains(errb.String(), "writing Laravel Pulse's queue and slow job rows") {
		t.Fatalf("exit status %d, log:\n%s", code, errb.String())
	}
	var processed, slow int
	if err := queuetest.DB(conn).QueryRow(`select cast(value as integer) from pulse_aggregates where type = 'processed' and "key" = 'database:emails' and period = 60`).Scan(&processed); err != nil {
		t.Fatal(err)
	}
	if err := queuetest.DB(conn).QueryRow(`select count(*) from pulse_entries where type = 'slow_job'`).Scan(&slow); err != nil {
		t.Fatal(err)
	}
	if processed != 1 || slow != 1 {
		t.Fatalf("Pulse rows: %d processed, %d slow_job entries; want the job's, written when the worker stopped", processed, slow)
	}
}

// TestQueueWorkDeprecatedOptions runs queue:work with the options Laravel keeps for old supervisor
// programs: --daemon does nothing, and --delay sets the backoff as PHP's max() of it and --backoff.
func TestQueueWorkDeprecatedOptions(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		args  []string
		delay int64
	}{
		{[]string{"--delay=7"}, 7},
		{[]string{"--delay", "5", "--backoff", "10,20"}, 5},  // PHP compares "10,20" and "5" as strings
		{[]string{"--backoff", "10,20", "--delay", "0"}, 10}, // and "10,20" with "0" too
		{[]string{"--backoff=3", "--delay=2"}, 3},
	} {
		// Routes go to the process's registry: a class of its own per run.
		class := fmt.Sprintf(`App\Jobs\DeprecatedOptions%d`, i)
		conn, env := newSQLiteApp(t)
		pushClass(t, conn, class)
		cfg := writeConfig(t, env, "routes:\n  - class: '"+class+"'\n    exec: [\"false\"]\n")
		var out, errb bytes.Buffer
		args := append([]string{"queue:work", "--env-file", env, "--config", cfg, "--queue", "emails", "--once", "--tries", "3", "--daemon"}, tc.args...)
		before := time.Now().Unix()
		if code := Do(context.Background(), args, nil, &out, &errb); code != 0 {
			t.Fatalf("%v: exit status %d: %s", tc.args, code, errb.String())
		}
		after := time.Now().Unix()
		var attempts int
		var reserved *int64
		var available int64
		if err := queuetest.DB(conn).QueryRow("select attempts, reserved_at, available_at from jobs").Scan(&attempts, &reserved, &available); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if attempts != 1 || reserved != nil || available < before+tc.delay || available > after+tc.delay {
			t.Errorf("%v: the failed job's row attempts %d reserved_at %v available_at %d; want released after %d s (available_at in [%d, %d])",
				tc.args, attempts, reserved, available, tc.delay, before+tc.delay, after+tc.delay)
		}
	}
}

// TestQueueWorkStopWhenEmptyFor runs queue:work --stop-when-empty-for: it works the queued job, then
// stops once the queue has been empty that long since the job finished.
func TestQueueWorkStopWhenEmptyFor(t *testing.T) {
	t.Parallel()
	const class = `App\Jobs\StopWhenEmptyFor`
	conn, env := newSQLiteApp(t)
	pushClass(t, conn, class)
	cfg := writeConfig(t, env, "routes:\n  - class: '"+class+"'\n    builtin: noop\n")
	var out, errb bytes.Buffer
	start := time.Now()
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--config", cfg, "--queue", "emails", "--sleep", "0.05", "--stop-when-empty-for", "1"}, nil, &out, &errb)
	took := time.Since(start)
	if code != 0 || !strings.Contains(errb.String(), "empty for --stop-when-empty-for; stopping") || !strings.Contains(errb.String(), "processed=1") {
		t.Fatalf("exit status %d, log:\n%s", code, errb.String())
	}
	if took < time.Second {
		t.Errorf("stopped after %v, before the queue had been empty for a second", took)
	}
	var n int
	if err := queuetest.DB(conn).QueryRow("select count(*) from jobs").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d jobs left (%v), want the job done", n, err)
	}
	errb.Reset()
	if code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--stop-when-empty-for=-1"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "worker.stop_when_empty_for") {
		t.Fatalf("--stop-when-empty-for=-1: exit status %d, stderr %q; want an error naming worker.stop_when_empty_for", code, errb.String())
	}
	// Written apart, "-1" is an option, as Symfony's parser reads it, and the value is empty.
	errb.Reset()
	if code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--stop-when-empty-for", "-1"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "-1") {
		t.Fatalf("--stop-when-empty-for -1: exit status %d, stderr %q", code, errb.String())
	}
}

// pushClass queues a Laravel 8.83 job of class on queue emails.
func pushClass(t *testing.T, conn *laravel.Conn, class string) {
	t.Helper()
	pushCommand(t, conn, payload.NewObject(class))
}

// pushCommand queues a Laravel 8.83 job of the command cmd on queue emails.
func pushCommand(t *testing.T, conn *laravel.Conn, cmd *payload.Object) {
	t.Helper()
	p, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	q, err := laravel.NewQueue(conn, laravel.QueueParams{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	if _, err := q.JobPush(context.Background(), &laravel.JobPushParams{Queue: "emails", Payload: p, Now: now, AvailableAt: now}); err != nil {
		t.Fatal(err)
	}
}

// writeConfig writes an artisan-go YAML configuration beside the app's .env and returns its path.
func writeConfig(t *testing.T, env, yaml string) string {
	t.Helper()
	cfg := filepath.Join(filepath.Dir(env), "artisan-go.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// envWith writes a copy of the .env file env, named name beside it, with lines added, and returns its
// path.
func envWith(t *testing.T, env, name, lines string) string {
	t.Helper()
	base, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(filepath.Dir(env), name)
	if err := os.WriteFile(file, append(append(base, '\n'), lines+"\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestQueueWorkCacheStoreUnreachable stops the worker before it claims anything when the cache store
// it must share with PHP cannot be reached, naming the setting to fix: a file store's directory that
// does not exist, a memcached server that does not answer, memcached with SASL.
func TestQueueWorkCacheStoreUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, env := newSQLiteApp(t, "welcome")
	for i, tc := range []struct {
		env  string
		want string
	}{
		{"CACHE_DRIVER=file\nARTISAN_GO_CACHE_FILE_PATH=" + filepath.Join(t.TempDir(), "no", "such", "data"), "cache.file.path"},
		{"CACHE_DRIVER=memcached\nMEMCACHED_PORT=1", "MEMCACHED_PORT"},
		{"CACHE_DRIVER=memcached\nMEMCACHED_USERNAME=app", "MEMCACHED_USERNAME"},
	} {
		file := envWith(t, env, fmt.Sprintf("cache-%d.env", i), tc.env)
		var out, errb bytes.Buffer
		code := Do(ctx, []string{"queue:work", "--env-file", file, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit status %d, stderr without %q:\n%s", tc.env, code, tc.want, errb.String())
		}
	}
	var attempts int
	if err := queuetest.DB(conn).QueryRow("select attempts from jobs").Scan(&attempts); err != nil || attempts != 0 {
		t.Fatalf("the job's attempts %d (%v), want it untouched", attempts, err)
	}
}

// TestRedisTLS builds the TLS configuration of a Redis connection: none for a plain one, the
// server's name from REDIS_HOST, and a ca_file that cannot be read or holds no certificate named.
func TestRedisTLS(t *testing.T) {
	t.Parallel()
	if c, err := redisTLS(config.Redis{Host: "h"}); c != nil || err != nil {
		t.Fatalf("plain: %v, %v", c, err)
	}
	c, err := redisTLS(config.Redis{Host: "cache.example.com", TLS: true})
	if err != nil || c.ServerName != "cache.example.com" || c.RootCAs != nil {
		t.Fatalf("TLS with the system's authorities: %+v, %v", c, err)
	}
	empty := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{empty, filepath.Join(t.TempDir(), "missing.pem")} {
		if _, err := redisTLS(config.Redis{Host: "h", TLS: true, CAFile: f}); err == nil || !strings.Contains(err.Error(), "cache.redis.ca_file") {
			t.Errorf("ca_file %s: %v, want an error naming cache.redis.ca_file", f, err)
		}
	}
}

// TestQueueWorkConsoleLines prints each job's lines on standard output as PHP's queue:work does for
// the configured Laravel version, none with -q or log.console off; the log's own per-job lines are
// then debug, unless the console lines are off.
func TestQueueWorkConsoleLines(t *testing.T) {
	t.Parallel()
	date := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`
	for _, tc := range []struct {
		name, env string
		args      []string
		want      []string // a pattern per line; CLASS is the job's class
	}{
		{"Laravel8", "", nil, []string{`^\[` + date + `\]\[1\] Processing: CLASS$`, `^\[` + date + `\]\[1\] Processed:  CLASS$`,
			`^\[` + date + `\]\[2\] Processing: CLASS$`, `^\[` + date + `\]\[2\] Processed:  CLASS$`}},
		{"Laravel12", "ARTISAN_GO_LARAVEL_VERSION=12", []string{"-v"}, []string{
			`^  ` + date + ` CLASS 1 database emails \.* RUNNING$`, `^  ` + date + ` CLASS 1 database emails \.* (\d+\.\d\dms|\d+s) DONE$`,
			`^  ` + date + ` CLASS 2 database emails \.* RUNNING$`, `^  ` + date + ` CLASS 2 database emails \.* (\d+\.\d\dms|\d+s) DONE$`}},
		{"Quiet", "", []string{"-q"}, nil},
		{"QuietJSON", "", []string{"-q", "--json"}, nil},
		{"Off", "ARTISAN_GO_LOG_CONSOLE=off", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, env := newSQLiteApp(t)
			class := `App\Jobs\Console` + tc.name
			pushClass(t, conn, class)
			pushClass(t, conn, class)
			if tc.env != "" {
				env = envWith(t, env, "console.env", tc.env)
			}
			cfg := writeConfig(t, env, "routes:\n  - class: '"+class+"'\n    builtin: noop\n")
			var out, errb bytes.Buffer
			args := append([]string{"queue:work", "--env-file", env, "--config", cfg, "--queue", "emails", "--stop-when-empty", "--concurrency", "1"}, tc.args...)
			if code := Do(context.Background(), args, nil, &out, &errb); code != 0 {
				t.Fatalf("exit status %d: %s", code, errb.String())
			}
			var lines []string
			if s := strings.TrimSuffix(out.String(), "\n"); s != "" {
				lines = strings.Split(s, "\n")
			}
			if len(lines) != len(tc.want) {
				t.Fatalf("stdout:\n%s\nwant %d lines", out.String(), len(tc.want))
			}
			for i, re := range tc.want {
				if !regexp.MustCompile(strings.ReplaceAll(re, "CLASS", regexp.QuoteMeta(class))).MatchString(lines[i]) {
					t.Errorf("line %d: %q, want %s", i+1, lines[i], re)
				}
			}
			// With the console lines off, the log's own per-job lines stay at info.
			if logged := strings.Contains(errb.String(), "msg=Processed"); logged != (tc.name == "Off") {
				t.Errorf("the log's per-job lines at info: %v\n%s", logged, errb.String())
			}
		})
	}
}

// TestQueueWorkUnusableAppKey starts with an APP_KEY the cipher cannot use, warning, as PHP's worker
// runs such an app: its encrypted jobs fail with the encrypter's exception instead of the worker
// stopping at start (which under a supervisor is a restart loop).
func TestQueueWorkUnusableAppKey(t *testing.T) {
	t.Parallel()
	conn, env := newSQLiteApp(t, "secret", "raw")
	data, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env, append(data, "APP_KEY=base64:AAAA\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, env, "routes:\n  - class: 'App\\Jobs\\SecretJob'\n    builtin: noop\n  - class: 'App\\Handlers\\Legacy'\n    builtin: noop\n")
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--config", cfg, "--queue", "emails", "--stop-when-empty", "--tries", "1"}, nil, &out, &errb)
	if code != 0 || !strings.Contains(errb.String(), "app.key") || !strings.Contains(errb.String(), "encrypted (ShouldBeEncrypted) jobs fail") {
		t.Fatalf("exit status %d, want 0 and a warning naming app.key; log:\n%s", code, errb.String())
	}
	var n int
	var exception string
	if err := queuetest.DB(conn).QueryRow("select count(*) from jobs").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d jobs left (%v), want both worked", n, err)
	}
	if err := queuetest.DB(conn).QueryRow("select exception from failed_jobs").Scan(&exception); err != nil ||
		!strings.HasPrefix(exception, "RuntimeException: Unsupported cipher or incorrect key length.") {
		t.Fatalf("failed_jobs exception %.120q (%v), want the encrypted job failed with the encrypter's RuntimeException", exception, err)
	}
}

// TestQueueWorkChainLinkQueue pushes a chain's next link that names no queue onto the connection's
// queue (DB_QUEUE here), as DatabaseQueue::getQueue falls back to it, whatever --queue the worker
// serves and on every version.
func TestQueueWorkChainLinkQueue(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"8.83", "12"} {
		conn, env := newSQLiteApp(t)
		env = envWith(t, env, "chain.env", "ARTISAN_GO_LARAVEL_VERSION="+version+"\nDB_QUEUE=jobsq")
		next, err := payload.Serialize(payload.NewObject(`App\Jobs\ChainTail`).Set("connection", nil).Set("queue", nil))
		if err != nil {
			t.Fatal(err)
		}
		pushCommand(t, conn, payload.NewObject(`App\Jobs\ChainHead`).Set("chained", payload.NewList(string(next))))
		cfg := writeConfig(t, env, "routes:\n  - class: 'App\\Jobs\\ChainHead'\n    builtin: noop\n")
		var out, errb bytes.Buffer
		if code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--config", cfg, "--queue", "emails", "--once"}, nil, &out, &errb); code != 0 {
			t.Fatalf("%s: exit status %d: %s", version, code, errb.String())
		}
		var queue string
		if err := queuetest.DB(conn).QueryRow("select queue from jobs").Scan(&queue); err != nil || queue != "jobsq" {
			t.Errorf("%s: the next link is on %q (%v), want the connection's queue jobsq", version, queue, err)
		}
	}
}
