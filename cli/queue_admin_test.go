package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

// adminEnv is a Laravel .env for db, and a connection to its tables (created when schema is set).
type adminEnv struct {
	file string
	conn *laravel.Conn
	q    laravel.Queue
}

func newAdminEnv(t *testing.T, db testenv.Database, schema bool, extra ...string) *adminEnv {
	t.Helper()
	env := append([]string{"APP_ENV=testing", "QUEUE_CONNECTION=database", "CACHE_DRIVER=database", "CACHE_PREFIX=t_"}, db.Env()...)
	env = append(env, extra...)
	file := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(file, []byte(strings.Join(env, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(context.Background(), file, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := openConn(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if schema {
		if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{}); err != nil {
			t.Fatal(err)
		}
	}
	q, err := laravel.NewQueue(conn, laravel.QueueParams{})
	if err != nil {
		t.Fatal(err)
	}
	return &adminEnv{file: file, conn: conn, q: q}
}

// run runs an artisan-go command with the .env and returns stdout, stderr and the exit status.
func (e *adminEnv) run(ctx context.Context, stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := Do(ctx, append(args, "--env-file", e.file), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// failJobs pushes n jobs onto queue and fails them, failed at the given time; it returns their uuids.
func (e *adminEnv) failJobs(t *testing.T, queue string, n int, at time.Time) []string {
	t.Helper()
	var uuids []string
	for i := 0; i < n; i++ {
		p, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83",
			Command: payload.NewObject(`App\Jobs\Noop`).Set("n", int64(i))})
		if err != nil {
			t.Fatal(err)
		}
		env, _ := payload.ParseEnvelope(p)
		uuids = append(uuids, env.UUID)
		e.failPayload(t, queue, p, at)
	}
	return uuids
}

// pushPayload pushes a payload onto queue, available from now (Unix seconds).
func (e *adminEnv) pushPayload(t *testing.T, queue string, p []byte, now int64) {
	t.Helper()
	if _, err := e.q.JobPush(context.Background(), &laravel.JobPushParams{Queue: queue, Payload: p, Now: now, AvailableAt: now}); err != nil {
		t.Fatal(err)
	}
}

// failPayload pushes a payload onto queue, claims it and fails it, failed at the given time.
func (e *adminEnv) failPayload(t *testing.T, queue string, p []byte, at time.Time) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().Unix()
	e.pushPayload(t, queue, p, now)
	jobs, err := e.q.JobClaim(ctx, &laravel.JobClaimParams{Queue: queue, Now: now, RetryAfter: 90, Limit: 1})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v, %d jobs", err, len(jobs))
	}
	if err := e.q.JobFail(ctx, jobs[0], &laravel.JobFailParams{Connection: "database", Queue: queue, Exception: "boom", FailedAt: at}); err != nil {
		t.Fatal(err)
	}
}

func (e *adminEnv) counts(t *testing.T) (jobs, failed int) {
	t.Helper()
	ctx := context.Background()
	f, err := e.conn.FailedJobList(ctx, &laravel.FailedJobListParams{WithoutPayload: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, q := range []string{"a", "b", "default"} {
		s, err := e.conn.QueueSizes(ctx, &laravel.QueueSizesParams{Queue: q, Now: time.Now().Unix()})
		if err != nil {
			t.Fatal(err)
		}
		n += s.Size
	}
	return int(n), len(f)
}

// TestQueueCommandsEachDatabase runs Laravel's queue management commands on every database: the
// listing, bad input refused with one line and nothing changed, retries by queue and all, pruning,
// flushing, clearing with and without confirmation, and monitoring with its exit status.
func TestQueueCommandsEachDatabase(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		e := newAdminEnv(t, db, true)
		recent := e.failJobs(t, "a", 3, time.Now().UTC())
		old := e.failJobs(t, "b", 2, time.Now().UTC().Add(-48*time.Hour))

		out, _, code := e.run(ctx, "", "queue:failed")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != 0 || len(lines) != 9 || !strings.HasPrefix(lines[1], "| ID ") || !strings.Contains(lines[3], old[1]) ||
			!strings.Contains(lines[7], recent[0]) || !strings.Contains(lines[3], `| database   | b     | App\Jobs\Noop |`) {
			t.Fatalf("queue:failed (exit %d):\n%s", code, out)
		}

		for _, bad := range []struct {
			args []string
			want string
		}{
			{[]string{"queue:retry", "no-such-id"}, "Unable to find failed job with ID [no-such-id]."},
			{[]string{"queue:retry", recent[0], "no-such-id"}, "Unable to find failed job with ID [no-such-id]."},
			{[]string{"queue:retry", "--range=3-x"}, `--range="3-x": give FROM-TO`},
			{[]string{"queue:retry", "--queue=nope"}, "Unable to find failed jobs for queue [nope]."},
			{[]string{"queue:forget", "no-such-id"}, "No failed job matches the given ID."},
			{[]string{"queue:flush", "--hours=1"}, `The "--hours" option does not exist in Laravel 8.83`},
			{[]string{"queue:pause", "a"}, `Command "queue:pause" is not defined in Laravel 8.83`},
			{[]string{"queue:prune-failed", "--hours=soon"}, `--hours="soon": give a number of hours`},
			{[]string{"queue:retry-batch", "no-such-batch"}, "Unable to find a batch with ID [no-such-batch]."},
			// One argument too many runs nothing, as Symfony's console refuses it before the command.
			{[]string{"queue:flush", "5"}, `No arguments expected for "queue:flush" command, got "5".`},
			{[]string{"queue:prune-failed", "48"}, `No arguments expected for "queue:prune-failed" command, got "48".`},
			{[]string{"queue:prune-batches", "48"}, `No arguments expected for "queue:prune-batches" command, got "48".`},
			{[]string{"queue:restart", "now"}, `No arguments expected for "queue:restart" command, got "now".`},
			{[]string{"queue:failed", "extra"}, `No arguments expected for "queue:failed" command, got "extra".`},
			{[]string{"queue:forget", recent[0], recent[1]}, `Too many arguments to "queue:forget" command, expected arguments "id".`},
			{[]string{"queue:monitor", "a", "b"}, `Too many arguments to "queue:monitor" command, expected arguments "queues".`},
			{[]string{"queue:clear", "database", "a"}, `Too many arguments to "queue:clear" command, expected arguments "connection".`},
			{[]string{"queue:retry-batch", "x", "y"}, `Too many arguments to "queue:retry-batch" command, expected arguments "id".`},
			{[]string{"queue:clear", "nope"}, "The [nope] queue connection has not been configured."},
			{[]string{"queue:monitor", "nope:default"}, "The [nope] queue connection has not been configured."},
			{[]string{"queue:monitor", "redis:default"}, "artisan-go manages the database connection [database] (QUEUE_CONNECTION) only"},
		} {
			out, errOut, code := e.run(ctx, "", bad.args...)
			if code == 0 || !strings.Contains(errOut, bad.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want a non-zero exit and %q", bad.args, code, out, errOut, bad.want)
			}
			if jobs, failed := e.counts(t); jobs != 0 || failed != 5 {
				t.Fatalf("%v changed the tables: %d jobs, %d failed", bad.args, jobs, failed)
			}
		}

		missing := newAdminEnv(t, db, false, "ARTISAN_GO_TABLES_FAILED_JOBS=no_such_table")
		if _, errOut, code := missing.run(ctx, "", "queue:failed"); code != 1 || !strings.Contains(errOut, `table "no_such_table" does not exist`) {
			t.Errorf("queue:failed on a missing table: exit %d, %q", code, errOut)
		}

		if out, _, code := e.run(ctx, "", "queue:prune-failed"); code != 0 || out != "2 entries deleted!\n" {
			t.Errorf("queue:prune-failed: exit %d, %q", code, out)
		}
		if out, _, code := e.run(ctx, "", "queue:forget", recent[2]); code != 0 || out != "Failed job deleted successfully!\n" {
			t.Errorf("queue:forget: exit %d, %q", code, out)
		}
		out, _, code = e.run(ctx, "", "queue:retry", "--queue=a")
		if want := fmt.Sprintf("The failed job [%s] has been pushed back onto the queue!\nThe failed job [%s] has been pushed back onto the queue!\n", recent[1], recent[0]); code != 0 || out != want {
			t.Errorf("queue:retry --queue=a: exit %d\n%s", code, out)
		}
		if jobs, failed := e.counts(t); jobs != 2 || failed != 0 {
			t.Fatalf("after retry: %d jobs, %d failed; want 2 and 0", jobs, failed)
		}

		out, errOut, code := e.run(ctx, "", "queue:monitor", "a,database:b", "--max=2")
		want := "+------------+-------+------+--------+\n" +
			"| Connection | Queue | Size | Status |\n" +
			"+------------+-------+------+--------+\n" +
			"| database   | a     | 2    | ALERT  |\n" +
			"| database   | b     | 0    | OK     |\n" +
			"+------------+-------+------+--------+\n"
		if code != 1 || out != want || !strings.Contains(errOut, "queue [a] on [database] has 2 jobs") {
			t.Errorf("queue:monitor over --max: exit %d\n%s%s", code, out, errOut)
		}
		if _, _, code := e.run(ctx, "", "queue:monitor", "a,b"); code != 0 {
			t.Errorf("queue:monitor under --max: exit %d", code)
		}
		// --max compared as PHP 8 compares the size with a string: 2 < 2.5; "" is reached by any size,
		// "abc" by none (digits sort before letters).
		for max, alert := range map[string]bool{"2.5": false, "": true, "abc": false, " 2": true} {
			out, _, code := e.run(ctx, "", "queue:monitor", "a", "--max="+max)
			if strings.Contains(out, "ALERT") != alert || (code == 1) != alert {
				t.Errorf("queue:monitor --max=%q: exit %d\n%s", max, code, out)
			}
		}

		prod := newAdminEnv(t, db, false, "APP_ENV=production")
		out, _, code = prod.run(ctx, "no\n", "queue:clear", "--queue=a")
		if code != 1 || !strings.Contains(out, "*     Application In Production!     *") || !strings.HasSuffix(out, "Command Canceled!\n") {
			t.Errorf("queue:clear in production answered no: exit %d\n%s", code, out)
		}
		if jobs, _ := e.counts(t); jobs != 2 {
			t.Fatalf("queue:clear cancelled, yet %d jobs are left", jobs)
		}
		if out, _, code = prod.run(ctx, "yes\n", "queue:clear", "--queue=a"); code != 0 || !strings.HasSuffix(out, "Cleared 2 jobs from the [a] queue \n") {
			t.Errorf("queue:clear in production answered yes: exit %d\n%s", code, out)
		}

		e.failJobs(t, "a", 2, time.Now().UTC())
		if out, _, code = e.run(ctx, "", "queue:retry", "all"); code != 0 || strings.Count(out, "pushed back") != 2 {
			t.Errorf("queue:retry all: exit %d\n%s", code, out)
		}
		if out, _, code = e.run(ctx, "", "queue:clear", "database"); code != 0 || out != "Cleared 0 jobs from the [default] queue \n" {
			t.Errorf("queue:clear of the default queue: exit %d, %q", code, out)
		}
		e.failJobs(t, "b", 2, time.Now().UTC())
		if out, _, code = e.run(ctx, "", "queue:flush"); code != 0 || out != "All failed jobs deleted successfully!\n" {
			t.Errorf("queue:flush: exit %d, %q", code, out)
		}
		if out, _, code = e.run(ctx, "", "queue:failed"); code != 0 || out != "No failed jobs!\n" {
			t.Errorf("queue:failed on an empty table: exit %d, %q", code, out)
		}
	})
}

// TestHoursAndRangesAsPHP: --hours is read as Carbon's subHours reads PHP's string (the fraction
// dropped, a negative number counting forward, an empty one refused by prune-failed, where PHP's fails),
// and a descending --range retries its ids in that order, as PHP's range() gives them.
func TestHoursAndRangesAsPHP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAdminEnv(t, testenv.SQLite(t), true, "QUEUE_FAILED_DRIVER=database")
	e.failJobs(t, "a", 1, time.Now().UTC().Add(-80*time.Minute))
	if out, errOut, code := e.run(ctx, "", "queue:prune-failed", "--hours="); code != 1 || !strings.Contains(errOut, "give a number of hours") {
		t.Fatalf("--hours=: exit %d, %q%q", code, out, errOut)
	}
	if out, _, code := e.run(ctx, "", "queue:prune-failed", "--hours=1.5"); code != 0 || out != "1 entries deleted!\n" {
		t.Fatalf("--hours=1.5 (1 hour) on a job failed 80 minutes ago: exit %d, %q", code, out)
	}
	e.failJobs(t, "a", 1, time.Now().UTC())
	if out, _, code := e.run(ctx, "", "queue:prune-failed", "--hours=-1"); code != 0 || out != "1 entries deleted!\n" {
		t.Fatalf("--hours=-1 on a job failed now: exit %d, %q", code, out)
	}
	e.failJobs(t, "a", 3, time.Now().UTC())
	out, _, code := e.run(ctx, "", "queue:retry", "--range=5-3")
	want := "The failed job [5] has been pushed back onto the queue!\nThe failed job [4] has been pushed back onto the queue!\nThe failed job [3] has been pushed back onto the queue!\n"
	if code != 0 || out != want {
		t.Fatalf("queue:retry --range=5-3: exit %d\n%s", code, out)
	}
}

// cancelOn cancels a context the first time a text appears in what is written to it.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	text   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.text) {
		c.cancel()
	}
	return len(p), nil
}

// TestQueueRetryManyIsInterruptible retries 1,000 failed jobs and interrupts the command at its first
// progress line: it stops between two jobs, each job is either still failed or back on the queue
// (never both, never neither), and a second run retries the rest.
func TestQueueRetryManyIsInterruptible(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		e := newAdminEnv(t, db, true)
		e.failJobs(t, "a", bulkRetry, time.Now().UTC())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		progress := &cancelOn{text: "retried 100 of 1000", cancel: cancel}
		var out bytes.Buffer
		code := Do(ctx, []string{"queue:retry", "all", "--env-file", e.file}, nil, &out, progress)
		jobs, failed := e.counts(t)
		if code != 130 || jobs+failed != bulkRetry || jobs < 100 || failed == 0 || out.Len() != 0 {
			t.Fatalf("interrupted retry: exit %d, %d jobs + %d failed, stdout %q, stderr %q", code, jobs, failed, out.String(), progress.buf.String())
		}
		if !strings.Contains(progress.buf.String(), fmt.Sprintf("interrupted after retrying %d of 1000 failed jobs", jobs)) {
			t.Errorf("stderr %q does not say how far it got", progress.buf.String())
		}
		var errb bytes.Buffer
		out.Reset()
		code = Do(context.Background(), []string{"queue:retry", "all", "--env-file", e.file}, nil, &out, &errb)
		if jobs, left := e.counts(t); code != 0 || jobs != bulkRetry || left != 0 {
			t.Fatalf("second retry: exit %d, %d jobs, %d failed\n%s", code, jobs, left, errb.String())
		}
		if want := fmt.Sprintf("%d failed jobs have been pushed back onto the queue.\n", failed); failed >= bulkRetry && out.String() != want {
			t.Errorf("second retry printed %q, want %q", out.String(), want)
		}
	})
}

// TestQueueCommandsNewerLaravel runs the commands as a newer laravel_version has them: the options
// those versions added (queue:failed --json from 13.10, queue:monitor --json from 12.16 with the
// pending, delayed, reserved and oldest counts from 12.19, queue:pause --all from 13.25, queue:clear of
// several queues from 13.22) and the components output of 9.21+.
func TestQueueCommandsNewerLaravel(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		e := newAdminEnv(t, db, true, "ARTISAN_GO_LARAVEL_VERSION=13.25", "CACHE_STORE=database")
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		uuids := e.failJobs(t, "a", 1, at)
		out, errOut, code := e.run(ctx, "", "queue:failed", "--json")
		want := `[{"id":"` + uuids[0] + `","connection":"database","queue":"a","class":"App\\Jobs\\Noop","failed_at":"2026-01-02 03:04:05"}]` + "\n"
		if code != 0 || out != want {
			t.Errorf("queue:failed --json: exit %d\n%s%s\nwant\n%s", code, out, errOut, want)
		}
		out, _, code = e.run(ctx, "", "queue:failed")
		if code != 0 || !strings.Contains(out, "  2026-01-02 03:04:05 "+uuids[0]+" ") || !strings.HasSuffix(out, " database@a App\\Jobs\\Noop  \n\n") {
			t.Errorf("queue:failed in the components style: exit %d\n%q", code, out)
		}
		if out, _, code = e.run(ctx, "", "queue:retry", uuids[0]); code != 0 || !strings.HasPrefix(out, "\n   INFO  Pushing failed queue jobs back onto the queue.  \n\n  "+uuids[0]+" .") ||
			!regexp.MustCompile(` \.+ \d+\.\d\dms DONE\n\n$`).MatchString(out) || len(strings.Split(out, "\n")[3]) != 78 {
			t.Errorf("queue:retry in the components style: exit %d\n%q", code, out)
		}
		out, _, code = e.run(ctx, "", "queue:monitor", "a,b", "--json", "--max=1")
		if want := `[{"connection":"database","queue":"a","size":1,"pending":1,"delayed":0,"reserved":0,"oldest_pending":`; code != 1 || !strings.HasPrefix(out, want) ||
			!strings.HasSuffix(out, `"status":"ALERT"},{"connection":"database","queue":"b","size":0,"pending":0,"delayed":0,"reserved":0,"oldest_pending":null,"status":"OK"}]`+"\n") {
			t.Errorf("queue:monitor --json: exit %d\n%s", code, out)
		}
		if out, _, code = e.run(ctx, "", "queue:pause", "--all"); code != 0 || out != "\n   INFO  Job processing on all queues across all connections has been paused.  \n\n" {
			t.Errorf("queue:pause --all: exit %d, %q", code, out)
		}
		if v, ok, err := e.conn.CacheGet(ctx, "illuminate:queues:paused"); err != nil || !ok || v != "b:1;" {
			t.Errorf("after queue:pause --all the cache holds %q, %v, %v; want b:1;", v, ok, err)
		}
		// A worker of the same version leaves every queue alone while they are all paused.
		e.failJobs(t, "a", 1, at)
		if _, _, code = e.run(ctx, "", "queue:retry", "all"); code != 0 {
			t.Fatalf("queue:retry all: exit %d", code)
		}
		work := func() string {
			_, errOut, code := e.run(ctx, "", "queue:work", "--queue=a", "--stop-when-empty", "--sleep=0.05")
			if code != 0 {
				t.Fatalf("queue:work: exit %d\n%s", code, errOut)
			}
			return errOut
		}
		if log := work(); !strings.Contains(log, "left_for_php=0") {
			t.Errorf("queue:work took a job while every queue was paused:\n%s", log)
		}
		if _, errOut, code = e.run(ctx, "", "queue:pause"); code != 1 || !strings.Contains(errOut, "A queue name is required unless the --all option is used.") {
			t.Errorf("queue:pause without a queue: exit %d, %q", code, errOut)
		}
		if _, _, code = e.run(ctx, "", "queue:continue", "--all"); code != 0 {
			t.Errorf("queue:continue --all: exit %d", code)
		}
		if _, ok, err := e.conn.CacheGet(ctx, "illuminate:queues:paused"); err != nil || ok {
			t.Errorf("after queue:continue --all the key is still there (%v)", err)
		}
		if log := work(); strings.Contains(log, "left_for_php=0") {
			t.Errorf("queue:work did not take the job once the queues were resumed:\n%s", log)
		}
		// 13.22 clears each queue of a comma-separated list; from 10.41 a connection that cannot be
		// cleared is exit status 1.
		e.failJobs(t, "b", 2, at)
		if _, _, code = e.run(ctx, "", "queue:retry", "all"); code != 0 {
			t.Fatalf("queue:retry all: exit %d", code)
		}
		if out, _, code = e.run(ctx, "", "queue:clear", "--queue= a, b,a,"); code != 0 || out != "\n   INFO  Cleared 4 jobs from the [a, b] queues.  \n\n" {
			t.Errorf("queue:clear of two queues: exit %d, %q", code, out)
		}
		if jobs, _ := e.counts(t); jobs != 0 {
			t.Errorf("queue:clear of two queues left %d jobs", jobs)
		}
		if out, _, code = e.run(ctx, "", "queue:clear", "sync"); code != 1 || !strings.Contains(out, "Clearing queues is not supported on [SyncQueue]") {
			t.Errorf("queue:clear sync: exit %d, %q", code, out)
		}
	})
}

// TestQueueRetryRange retries numeric ids by --range with the database provider (ids, not uuids):
// ids of the range that are not failed jobs are reported as PHP reports them, the others retried.
func TestQueueRetryRange(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		e := newAdminEnv(t, db, true, "QUEUE_FAILED_DRIVER=database")
		e.failJobs(t, "a", 3, time.Now().UTC())
		out, errOut, code := e.run(ctx, "", "queue:retry", "--range=2-4", "1")
		want := "The failed job [1] has been pushed back onto the queue!\n" +
			"The failed job [2] has been pushed back onto the queue!\n" +
			"The failed job [3] has been pushed back onto the queue!\n"
		if code != 0 || out != want || errOut != "Unable to find failed job with ID [4].\n" {
			t.Errorf("queue:retry --range=2-4 1: exit %d\n%s%s", code, out, errOut)
		}
		if jobs, failed := e.counts(t); jobs != 3 || failed != 0 {
			t.Errorf("after the range: %d jobs, %d failed", jobs, failed)
		}
	})
}

// TestPruneBatchesOptionGiven prunes unfinished and cancelled batches, before Laravel 10.9, only when
// the option is truthy (PHP's if ($this->option(...))): --cancelled=0 on 10.8 deletes nothing, on
// 10.9 every cancelled batch created before now.
func TestPruneBatchesOptionGiven(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		version string
		left    int
	}{{"10.8", 2}, {"10.9", 0}} {
		e := newAdminEnv(t, testenv.SQLite(t), true, "ARTISAN_GO_LARAVEL_VERSION="+tc.version)
		created := time.Now().Add(-time.Hour).Unix()
		for i, column := range []string{"cancelled_at", "finished_at"} {
			// One cancelled batch and one unfinished one, an hour old.
			q := fmt.Sprintf("insert into job_batches (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, %s, created_at) values (?, '', 1, 1, 0, '[]', 'a:0:{}', ?, ?)", column)
			at := any(created)
			if column == "finished_at" {
				at = nil
			}
			if _, err := queuetest.DB(e.conn).ExecContext(ctx, q, fmt.Sprintf("b%d", i), at, created); err != nil {
				t.Fatal(err)
			}
		}
		if out, errOut, code := e.run(ctx, "", "queue:prune-batches", "--cancelled=0", "--unfinished=0"); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", tc.version, code, out, errOut)
		}
		var left int
		if err := queuetest.DB(e.conn).QueryRowContext(ctx, "select count(*) from job_batches").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != tc.left {
			t.Errorf("%s: --cancelled=0 --unfinished=0 left %d batches, want %d", tc.version, left, tc.left)
		}
	}
}

// TestQueueMonitorOldestPending: 12.19–12.52 ask the queue for its oldest pending job through a
// method no queue has (null in --json, no line); 12.53 reads it, and 12.54 prints its line.
func TestQueueMonitorOldestPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		version      string
		known, shown bool
	}{{"12.52", false, false}, {"12.53", true, false}, {"12.54", true, true}, {"13.0", true, true}} {
		e := newAdminEnv(t, testenv.SQLite(t), true, "ARTISAN_GO_LARAVEL_VERSION="+c.version)
		p, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", Command: payload.NewObject(`App\Jobs\Noop`)})
		if err != nil {
			t.Fatal(err)
		}
		e.pushPayload(t, "a", p, time.Now().Unix()-120)
		out, _, _ := e.run(ctx, "", "queue:monitor", "a", "--json")
		if known := !strings.Contains(out, `"oldest_pending":null`); known != c.known {
			t.Errorf("%s: --json %s; want the oldest pending job known %v", c.version, out, c.known)
		}
		out, _, _ = e.run(ctx, "", "queue:monitor", "a")
		if shown := strings.Contains(out, "Oldest pending job"); shown != c.shown || c.shown && !strings.Contains(out, "2 minutes ago") {
			t.Errorf("%s: %q; want the oldest pending job's line %v", c.version, out, c.shown)
		}
	}
}

// TestQueueFailedJobName: queue:failed names a job by its displayName from 12.61, which the 13.x line
// took up in 13.12; before, by the command's class.
func TestQueueFailedJobName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		version string
		display bool
	}{{"12.60", false}, {"12.61", true}, {"13.11", false}, {"13.12", true}} {
		e := newAdminEnv(t, testenv.SQLite(t), true, "ARTISAN_GO_LARAVEL_VERSION="+c.version)
		p, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", DisplayName: `App\Listeners\RecordShipment`,
			Command: payload.NewObject(`Illuminate\Events\CallQueuedListener`).Set("class", `App\Listeners\RecordShipment`)})
		if err != nil {
			t.Fatal(err)
		}
		e.failPayload(t, "a", p, time.Now().UTC())
		out, _, _ := e.run(ctx, "", "queue:failed")
		if display := strings.Contains(out, `App\Listeners\RecordShipment`); display != c.display || !display && !strings.Contains(out, `Illuminate\Events\CallQueuedListener`) {
			t.Errorf("%s: %q; want the displayName %v", c.version, out, c.display)
		}
	}
}

// TestQueueFailedMessagesByVersion: queue:flush --hours ends its line with "!" before 9.5, and an
// empty queue:failed is a comment (yellow) from 9.5 until the components style of 9.21.
func TestQueueFailedMessagesByVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		version, flushed, empty string
	}{
		{"9.4", "All jobs that failed more than 1 hours ago have been deleted successfully!", "\x1b[32mNo failed jobs!"},
		{"9.5", "All jobs that failed more than 1 hours ago have been deleted successfully.", "\x1b[33mNo failed jobs found."},
		{"9.20", "All jobs that failed more than 1 hours ago have been deleted successfully.", "\x1b[33mNo failed jobs found."},
	} {
		e := newAdminEnv(t, testenv.SQLite(t), true, "ARTISAN_GO_LARAVEL_VERSION="+c.version)
		if out, _, code := e.run(ctx, "", "queue:flush", "--hours=1"); code != 0 || out != c.flushed+"\n" {
			t.Errorf("%s: queue:flush --hours=1: exit %d, %q", c.version, code, out)
		}
		if out, _, code := e.run(ctx, "", "queue:failed", "--ansi"); code != 0 || !strings.HasPrefix(out, c.empty) {
			t.Errorf("%s: queue:failed --ansi: exit %d, %q, want it to start %q", c.version, code, out, c.empty)
		}
	}
}

// TestRetryBatchIDs takes queue:retry-batch's ids as each version's signature does: one id, required,
// before 11.24; from 11.24 any number ({id?*}), duplicates and empty ids dropped, and none at all does
// nothing.
func TestRetryBatchIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := newAdminEnv(t, testenv.SQLite(t), true)
	if _, errOut, code := old.run(ctx, "", "queue:retry-batch"); code != 1 || !strings.Contains(errOut, `Not enough arguments (missing: "id").`) {
		t.Errorf("8.83 without an id: exit %d, %q", code, errOut)
	}
	e := newAdminEnv(t, testenv.SQLite(t), true, "ARTISAN_GO_LARAVEL_VERSION=12.0")
	if out, errOut, code := e.run(ctx, "", "queue:retry-batch"); code != 0 || out != "" || errOut != "" {
		t.Errorf("12.0 without an id: exit %d, stdout %q, stderr %q; want nothing done", code, out, errOut)
	}
	if out, errOut, code := e.run(ctx, "", "queue:retry-batch", "", "0"); code != 0 || out != "" || errOut != "" {
		t.Errorf(`12.0 with the ids "" and "0": exit %d, stdout %q, stderr %q; want nothing done`, code, out, errOut)
	}
	if _, errOut, code := e.run(ctx, "", "queue:retry-batch", "b1", "b2", "b1"); code != 1 || strings.Count(errOut, "Unable to find a batch with ID [b1].") != 1 {
		t.Errorf("12.0 with an unknown id twice: exit %d, stderr %q", code, errOut)
	}
}

// TestQueueCommandsOnSyncConnection: with QUEUE_CONNECTION=sync or null, the commands' default
// connection holds no jobs, as in PHP: queue:clear says it cannot clear it and deletes nothing from
// the jobs table, and queue:monitor sizes it 0.
func TestQueueCommandsOnSyncConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAdminEnv(t, testenv.SQLite(t), true)
	now := time.Now().Unix()
	p, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", Command: payload.NewObject(`App\Jobs\Noop`)})
	if err != nil {
		t.Fatal(err)
	}
	e.pushPayload(t, "default", p, now)
	env, err := os.ReadFile(e.file)
	if err != nil {
		t.Fatal(err)
	}
	for value, class := range map[string]string{"sync": "SyncQueue", "null": "NullQueue", "(null)": "NullQueue"} {
		driver := strings.Trim(value, "()")
		other := &adminEnv{file: filepath.Join(t.TempDir(), ".env"), conn: e.conn, q: e.q}
		text := strings.Replace(string(env), "QUEUE_CONNECTION=database", "QUEUE_CONNECTION="+value, 1)
		if err := os.WriteFile(other.file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, errOut, code := other.run(ctx, "", "queue:clear", "--force"); code != 0 || out != "Clearing queues is not supported on ["+class+"] \n" {
			t.Errorf("%s: queue:clear: exit %d, %q %q", driver, code, out, errOut)
		}
		if jobs, _ := e.counts(t); jobs != 1 {
			t.Errorf("%s: queue:clear left %d jobs in the jobs table, want 1", driver, jobs)
		}
		// QUEUE_CONNECTION=null is PHP's null: the connection is shown empty, as PHP shows it.
		shown := "| sync       |"
		if driver == "null" {
			shown = "|            |"
		}
		if out, errOut, code := other.run(ctx, "", "queue:monitor", "default"); code != 0 || !strings.Contains(out, shown+" default | 0    | OK     |") {
			t.Errorf("%s: queue:monitor: exit %d\n%s%s", driver, code, out, errOut)
		}
		if _, errOut, code := other.run(ctx, "", "queue:clear", "database", "--force"); code != 1 || !strings.Contains(errOut, "QUEUE_CONNECTION=database") {
			t.Errorf("%s: queue:clear database: exit %d, %q", driver, code, errOut)
		}
	}
}

// TestQueueFailedJobNameOfRawPayloads: a hand-made payload's `job` is printed as PHP prints the
// value in the table: a number as written, true as 1.
func TestQueueFailedJobNameOfRawPayloads(t *testing.T) {
	t.Parallel()
	a := &adminRun{version: payload.Version{Major: 8, Minor: 83, Patch: -1}}
	for raw, want := range map[string]string{
		`{"job":123}`: "123", `{"job":-7}`: "-7", `{"job":1.5}`: "1.5", `{"job":true}`: "1", `{"job":false}`: "",
		`{"job":null}`: "", `{"job":[1]}`: "", `{"job":"App\\Legacy@run","data":[]}`: `App\Legacy@run`, `not json`: "",
	} {
		if got := a.jobName([]byte(raw)); got != want {
			t.Errorf("jobName(%s) = %q, want %q", raw, got, want)
		}
	}
}
