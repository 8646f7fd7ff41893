package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

const (
	jobClass   = `App\Jobs\Work`
	otherClass = `App\Jobs\Other`
)

func TestMaxTries(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, errors.New("smtp down")))
		f.push(t, "default", envelope(t, jobClass, `"maxTries":3`, nil))
		w := f.worker(t, func(c *Config) { c.Tries = 1 }) // the payload's maxTries wins over --tries
		for attempt := 1; attempt <= 2; attempt++ {
			if !runOnce(t, w) {
				t.Fatalf("attempt %d: no job", attempt)
			}
			row := f.onlyRow(t)
			if row.Attempts != attempt || row.ReservedAt != nil {
				t.Fatalf("after attempt %d: row %+v, want released with attempts %d", attempt, row, attempt)
			}
		}
		if !runOnce(t, w) {
			t.Fatal("attempt 3: no job")
		}
		f.wantRows(t, 0, 1)
		if calls.Load() != 3 {
			t.Fatalf("handler ran %d times, want 3", calls.Load())
		}
		fr := f.onlyFailed(t)
		if !strings.HasPrefix(fr.Exception, "RuntimeException: smtp down in ") || !strings.HasSuffix(fr.Exception, "{main}") {
			t.Fatalf("exception text %q", fr.Exception)
		}
		if fr.Connection != "database" || fr.Queue != "default" || fr.UUID == "" {
			t.Fatalf("failed row %+v", fr)
		}
	})
}

func TestAlreadyExceededFailsBeforeRunning(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, ok(&calls))
		id := f.push(t, "default", envelope(t, jobClass, "", nil))
		// A previous worker claimed it and died: attempts is already at --tries.
		f.exec(t, "update "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs)+" set attempts = 2 where id = ?", id)
		w := f.worker(t, func(c *Config) { c.Tries = 2 })
		runOnce(t, w)
		if calls.Load() != 0 {
			t.Fatal("the handler ran a job that exceeded its attempts")
		}
		f.wantRows(t, 0, 1)
		want := `Illuminate\Queue\MaxAttemptsExceededException: App\Jobs\Work has been attempted too many times or run too long. The job may have previously timed out. in `
		if got := f.onlyFailed(t).Exception; !strings.HasPrefix(got, want) {
			t.Fatalf("exception %q, want prefix %q", firstLine(got), want)
		}
	})
}

// TestAttemptsCeilingFails: a job retried without limit reaches the largest attempts its column
// holds, where claims saturate; where it would then be released (its exception, its own release), it
// fails instead of being taken again at that count for ever.
func TestAttemptsCeilingFails(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, errors.New("boom")))
		f.reg.Register(otherClass, handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
			calls.Add(1)
			job.Release(0)
			return nil
		}))
		top := f.Conn.MaxAttempts()
		for _, class := range []string{jobClass, otherClass} {
			id := f.push(t, "default", envelope(t, class, "", nil))
			f.exec(t, "update "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs)+" set attempts = ? where id = ?", top-1, id)
		}
		w := f.worker(t, func(c *Config) { c.Tries = 0 })
		for range 4 {
			runOnce(t, w) // the claim counts the last attempt the column holds
		}
		f.wantRows(t, 0, 2)
		if calls.Load() != 2 {
			t.Fatalf("the handlers ran %d times, want once each, at the last attempt the column holds", calls.Load())
		}
		for _, row := range f.FailedRows(t) {
			want := "RuntimeException: boom" // its own exception, as when its tries run out
			if bytes.Contains(row.Payload, []byte("Other")) {
				want = MaxAttemptsExceededClass + `: App\Jobs\Other has been attempted too many times`
			}
			if got := firstLine(row.Exception); !strings.HasPrefix(got, want) {
				t.Errorf("exception %q, want %q", got, want)
			}
		}
	})
}

// TestDamagedCommandFailsAtOnce: a command no retry can read fails at its first attempt, even without
// a limit on tries (PHP retries it until its tries run out, for ever with none), kept as it was.
func TestDamagedCommandFailsAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(jobClass, ok(&calls))
	var env map[string]any
	if err := json.Unmarshal(envelope(t, jobClass, "", nil), &env); err != nil {
		t.Fatal(err)
	}
	env["data"].(map[string]any)["command"] = `O:13:"App\Jobs\Work":1:{s:1:"x";` // cut short
	damaged, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	f.push(t, "default", damaged)
	w := f.worker(t, func(c *Config) { c.Tries = 0 })
	runOnce(t, w)
	f.wantRows(t, 0, 1)
	row := f.onlyFailed(t)
	if calls.Load() != 0 || !bytes.Equal(row.Payload, damaged) || !strings.Contains(row.Exception, "the payload is damaged") {
		t.Fatalf("handler calls %d; failed row %q", calls.Load(), row.Exception)
	}
}

func TestRetryUntil(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, errors.New("boom")))
		// retryUntil in the future replaces tries: --tries=1 does not fail it.
		f.push(t, "default", envelope(t, jobClass, `"retryUntil":`+itoa(f.clock.Unix()+60), nil))
		w := f.worker(t, func(c *Config) { c.Tries = 1; c.LaravelVersion = "10.10" })
		runOnce(t, w)
		runOnce(t, w)
		f.wantRows(t, 1, 0)
		if row := f.onlyRow(t); row.Attempts != 2 {
			t.Fatalf("attempts %d, want 2", row.Attempts)
		}
		// Once retryUntil has passed the job fails before it runs.
		f.clock.Advance(61 * time.Second)
		runOnce(t, w)
		if calls.Load() != 2 {
			t.Fatalf("handler ran %d times, want 2", calls.Load())
		}
		f.wantRows(t, 0, 1)
		if got := firstLine(f.onlyFailed(t).Exception); !strings.HasPrefix(got, `Illuminate\Queue\MaxAttemptsExceededException: App\Jobs\Work has been attempted too many times. in `) {
			t.Fatalf("exception %q", got)
		}
	})
}

// TestTimeoutAtBefore926: a payload's old timeoutAt counts as its retry deadline only before Laravel
// 9.26, whose Job::retryUntil stopped falling back to it; a fractional retryUntil counts as the second
// it falls in.
func TestTimeoutAtBefore926(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(jobClass, failing(&calls, errors.New("boom")))
	past := `"timeoutAt":` + itoa(f.clock.Unix()-60)
	f.push(t, "default", envelope(t, jobClass, past, nil))
	runOnce(t, f.worker(t, func(c *Config) { c.LaravelVersion = "9.25" }))
	if calls.Load() != 0 {
		t.Fatalf("9.25 ran a job past its timeoutAt")
	}
	f.wantRows(t, 0, 1)
	f.push(t, "default", envelope(t, jobClass, past, nil))
	runOnce(t, f.worker(t, func(c *Config) { c.LaravelVersion = "9.26" }))
	if calls.Load() != 1 {
		t.Fatalf("9.26 did not run a job whose only deadline is the timeoutAt it no longer reads")
	}
	f.wantRows(t, 1, 1) // released: attempt 1 of --tries 3
	f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
	f.push(t, "default", envelope(t, jobClass, `"retryUntil":`+itoa(f.clock.Unix()+60)+`.5`, nil))
	runOnce(t, f.worker(t, func(c *Config) { c.LaravelVersion = "13.26"; c.Tries = 1 }))
	if calls.Load() != 2 {
		t.Fatalf("a fractional retryUntil ahead: the job did not run")
	}
	f.wantRows(t, 1, 1) // released: the deadline, not --tries 1, decides
}

// TestMaxTriesStringZero fails a job whose payload's maxTries is the string "0" (a class's
// `$tries = '0'`) before it runs, as PHP's worker does ("0" is not its "no limit" 0); the number 0 is
// no limit.
func TestMaxTriesStringZero(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(jobClass, ok(&calls))
	f.push(t, "default", envelope(t, jobClass, `"maxTries":"0"`, nil))
	f.push(t, "default", envelope(t, jobClass, `"maxTries":0`, nil))
	w := f.worker(t, nil)
	runOnce(t, w)
	runOnce(t, w)
	if calls.Load() != 1 {
		t.Fatalf("ran %d jobs, want only the one of maxTries 0", calls.Load())
	}
	f.wantRows(t, 0, 1)
}

func TestBackoffList(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, errors.New("later")))
		f.push(t, "default", envelope(t, jobClass, `"maxTries":0,"backoff":"10,50"`, nil))
		w := f.worker(t, nil)
		for i, want := range []int64{10, 50, 50} {
			if !runOnce(t, w) {
				t.Fatalf("attempt %d: no job ready", i+1)
			}
			row := f.onlyRow(t)
			if got := row.AvailableAt - row.CreatedAt; got != want {
				t.Fatalf("attempt %d: released with delay %d, want %d", i+1, got, want)
			}
			if runOnce(t, w) {
				t.Fatalf("attempt %d: job ran again before its backoff", i+1)
			}
			f.clock.Advance(time.Duration(want) * time.Second)
		}
	})
}

func TestWorkerBackoffAndTries(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, errors.New("later")))
		f.push(t, "default", envelope(t, jobClass, `"maxTries":null,"backoff":null`, nil))
		w := f.worker(t, func(c *Config) { c.Tries = 2; c.Backoff = []int{7, 9} })
		runOnce(t, w)
		row := f.onlyRow(t)
		if row.AvailableAt-row.CreatedAt != 7 {
			t.Fatalf("released with delay %d, want --backoff 7", row.AvailableAt-row.CreatedAt)
		}
		f.clock.Advance(7 * time.Second)
		runOnce(t, w)
		f.wantRows(t, 0, 1)
	})
}

// TestEmptyJobBackoff: a job's `$backoff = []` (written "") is its own backoff, a delay of 0, over
// the worker's --backoff, as PHP 8.83 releases it (a probe: available at once where --backoff=7).
func TestEmptyJobBackoff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(jobClass, failing(&calls, errors.New("later")))
	f.push(t, "default", envelope(t, jobClass, `"maxTries":3,"backoff":""`, nil))
	runOnce(t, f.worker(t, func(c *Config) { c.Backoff = []int{7} }))
	if row := f.onlyRow(t); row.AvailableAt != row.CreatedAt {
		t.Fatalf("released with delay %d, want 0", row.AvailableAt-row.CreatedAt)
	}
}

func TestMaxExceptions(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, errors.New("flaky")))
		body := envelope(t, jobClass, `"maxTries":10,"maxExceptions":2`, nil)
		env, err := payload.ParseEnvelope(body)
		if err != nil {
			t.Fatal(err)
		}
		f.push(t, "default", body)
		w := f.worker(t, nil)
		runOnce(t, w)
		f.wantRows(t, 1, 0)
		if v, ok, err := f.Conn.CacheGet(bg, "job-exceptions:"+env.UUID); err != nil || !ok || v != "i:1;" {
			t.Fatalf("exception counter = %q, %v, %v; want i:1;", v, ok, err)
		}
		runOnce(t, w)
		f.wantRows(t, 0, 1)
		if _, ok, _ := f.Conn.CacheGet(bg, "job-exceptions:"+env.UUID); ok {
			t.Fatal("exception counter not forgotten after the job failed")
		}
	})
}

// TestMaxExceptionsCountedWhenTriesFail: a job failed on its tries still counts the exception under
// job-exceptions:<uuid>, and so does one whose handler released or deleted it and then threw, as
// PHP's handleJobException counts them (a probe against PHP 8.83: i:2; after tries 2, maxExceptions 3;
// i:1; after a release or a delete and an exception).
func TestMaxExceptionsCountedWhenTriesFail(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, errors.New("flaky")))
		f.reg.Register(`App\Jobs\Release`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			j.Release(time.Minute)
			return errors.New("after releasing")
		}))
		f.reg.Register(`App\Jobs\Delete`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			j.Delete()
			return errors.New("after deleting")
		}))
		w := f.worker(t, nil)
		counter := func(body []byte) string {
			t.Helper()
			env, err := payload.ParseEnvelope(body)
			if err != nil {
				t.Fatal(err)
			}
			v, _, err := f.Conn.CacheGet(bg, "job-exceptions:"+env.UUID)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		failed := envelope(t, jobClass, `"maxTries":2,"maxExceptions":3`, nil)
		f.push(t, "default", failed)
		runOnce(t, w)
		runOnce(t, w)
		f.wantRows(t, 0, 1)
		if v := counter(failed); v != "i:2;" {
			t.Fatalf("counter after failing on tries = %q, want i:2;", v)
		}
		for _, class := range []string{`App\Jobs\Release`, `App\Jobs\Delete`} {
			body := envelope(t, class, `"maxTries":5,"maxExceptions":3`, nil)
			f.push(t, "default", body)
			runOnce(t, w)
			if v := counter(body); v != "i:1;" {
				t.Fatalf("%s: counter = %q, want i:1;", class, v)
			}
		}
		if rows := f.Rows(t); len(rows) != 1 {
			t.Fatalf("jobs %+v, want the released one", rows)
		}
	})
}

func TestHandlerActions(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		f.reg.Register(`App\Jobs\Release`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			j.Release(30 * time.Second)
			return nil
		}))
		f.reg.Register(`App\Jobs\Fail`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			j.Fail(errors.New("bad input"))
			return nil
		}))
		f.reg.Register(`App\Jobs\Delete`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			j.Delete()
			return errors.New("ignored: the job deleted itself")
		}))
		w := f.worker(t, func(c *Config) { c.Tries = 5 })

		f.push(t, "default", envelope(t, `App\Jobs\Release`, "", nil))
		runOnce(t, w)
		row := f.onlyRow(t)
		if row.Attempts != 1 || row.AvailableAt-row.CreatedAt != 30 || row.ReservedAt != nil {
			t.Fatalf("released row %+v, want attempts 1 and a 30 s delay", row)
		}
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))

		f.push(t, "default", envelope(t, `App\Jobs\Fail`, "", nil))
		runOnce(t, w)
		f.wantRows(t, 0, 1)
		if got := firstLine(f.onlyFailed(t).Exception); !strings.HasPrefix(got, "RuntimeException: bad input in ") {
			t.Fatalf("exception %q", got)
		}

		f.push(t, "default", envelope(t, `App\Jobs\Delete`, "", nil))
		runOnce(t, w)
		f.wantRows(t, 0, 1)
		if s := w.Stats(); s.Deleted != 1 || s.Failed != 1 || s.Released != 1 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestPanicBecomesException(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			var m map[string]int
			m["x"] = 1 // assignment to a nil map panics
			return nil
		}))
		f.push(t, "default", envelope(t, jobClass, "", nil))
		runOnce(t, f.worker(t, func(c *Config) { c.Tries = 1 }))
		text := f.onlyFailed(t).Exception
		if !strings.HasPrefix(text, "panic(") || !strings.Contains(text, "assignment to entry in nil map") ||
			!strings.Contains(firstLine(text), "process_test.go:") || !strings.Contains(text, "\nStack trace:\n#0 ") ||
			!strings.HasSuffix(text, "{main}") {
			t.Fatalf("exception text:\n%s", text)
		}
	})
}

func TestDamagedPayloadIsFailedNotLost(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		f.push(t, "default", []byte(`{"uuid":"x","job":`))
		runOnce(t, f.worker(t, nil))
		fr := f.onlyFailed(t)
		if string(fr.Payload) != `{"uuid":"x","job":` || !strings.Contains(fr.Exception, "read payload of job") {
			t.Fatalf("failed row %+v", fr)
		}
	})
}

// TestUnreadablePayloadNamed: a payload the worker refuses (a maxTries that is a word) but whose names
// read: its class without a Go handler is left for PHP, which runs it; with one it fails, its start
// and failure reported under the name PHP shows and its uuid kept.
func TestUnreadablePayloadNamed(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var mu sync.Mutex
		var events []string
		f.reg.Register(jobClass, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
		cfg := Defaults()
		w, err := New(Params{Queue: f.Queue, Conn: f.Conn, Registry: f.reg, Config: cfg, Clock: f.clock.Now,
			Events: func(e RunEvent) {
				mu.Lock()
				defer mu.Unlock()
				events = append(events, e.Job+" "+e.Status+" "+e.UUID)
			}})
		if err != nil {
			t.Fatal(err)
		}
		other := envelope(t, `App\Jobs\PHPOnly`, `"maxTries":"abc"`, nil)
		f.push(t, "default", other)
		runOnce(t, w)
		rows := f.Rows(t)
		if len(rows) != 1 || rows[0].ReservedAt != nil || rows[0].Attempts != 0 || len(f.FailedRows(t)) != 0 {
			t.Fatalf("rows %+v, failed %d: want the job of a class without a Go handler left for PHP, untouched", rows, len(f.FailedRows(t)))
		}
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
		ours := envelope(t, jobClass, `"maxTries":"abc"`, nil)
		env, _ := payload.PeekEnvelope(ours)
		f.push(t, "default", ours)
		runOnce(t, w)
		fr := f.onlyFailed(t)
		if fr.UUID != env.UUID || !strings.Contains(fr.Exception, `"maxTries" is not an integer`) {
			t.Fatalf("failed row %+v", fr)
		}
		want := []string{jobClass + " starting " + env.UUID, jobClass + " failed " + env.UUID}
		if !slices.Equal(events, want) {
			t.Fatalf("events %q, want %q", events, want)
		}
	})
}

// TestCommandOfAnotherClass: a payload whose serialized command is not of the class commandName names
// is run as PHP runs it, as the object's class: by that class's handler, or left for PHP when it has
// none; the handler of the named class never runs another class's data. Class names compare as PHP's
// do: case and a leading backslash aside.
func TestCommandOfAnotherClass(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var named, object atomic.Int32
	f.reg.Register(jobClass, ok(&named))
	f.reg.Register(otherClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		if j.Class != otherClass || j.Command.Class != otherClass {
			t.Errorf("job class %q, command %q", j.Class, j.Command.Class)
		}
		object.Add(1)
		return nil
	}))
	for _, class := range []string{otherClass, `stdClass`} {
		raw := envelope(t, class, "", nil)
		named, _ := json.Marshal(map[string]string{"commandName": jobClass})
		other, _ := json.Marshal(map[string]string{"commandName": class})
		damaged := bytes.Replace(raw, other[1:len(other)-1], named[1:len(named)-1], 1)
		if bytes.Equal(damaged, raw) {
			t.Fatalf("no commandName of %s in %s", class, raw)
		}
		f.push(t, "default", damaged)
	}
	w := f.worker(t, func(c *Config) { c.Tries = 1 })
	runOnce(t, w)
	runOnce(t, w)
	if named.Load() != 0 || object.Load() != 1 {
		t.Fatalf("the named class's handler ran %d times, the object's %d; want 0 and 1", named.Load(), object.Load())
	}
	f.wantRows(t, 1, 0) // stdClass: no Go handler, left for PHP
	if !sameClass(`App\Jobs\Work`, `\app\jobs\WORK`) || sameClass(`App\Jobs\Work`, `App\Jobs\Worker`) {
		t.Error("class names do not compare as PHP's do")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestListenerHandledByDisplayName(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(`App\Listeners\RecordShipment`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		if j.Class != `Illuminate\Events\CallQueuedListener` {
			t.Errorf("job class %q", j.Class)
		}
		calls.Add(1)
		return nil
	}))
	cmd := payload.NewObject(`Illuminate\Events\CallQueuedListener`).Set("class", `App\Listeners\RecordShipment`).Set("method", "handle")
	body, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", Command: cmd, DisplayName: `App\Listeners\RecordShipment`})
	if err != nil {
		t.Fatal(err)
	}
	f.push(t, "default", body)
	runOnce(t, f.worker(t, nil))
	if calls.Load() != 1 {
		t.Fatalf("listener handler ran %d times", calls.Load())
	}
	f.wantRows(t, 0, 0)
}

// TestCompletionOutlastsStatementTimeout: a completion that waits for a row lock past the server's
// statement timeout (PostgreSQL's statement_timeout, MariaDB's max_statement_time) changed nothing; it
// is kept and tried again, as after a lost connection, and applies once the lock is gone. It used to be
// refused, the row left reserved to run again after retry_after.
func TestCompletionOutlastsStatementTimeout(t *testing.T) {
	t.Parallel()
	for _, db := range []func(testing.TB) testenv.Database{testenv.MySQL, testenv.Postgres} {
		f := newFixture(t, db(t))
		if f.DB.Pooler != "" {
			continue
		}
		p := f.Params
		param := map[string]string{"mysql": "max_statement_time=0.3", "pgsql": "statement_timeout=300"}[f.DB.Dialect]
		if strings.Contains(p.DSN, "?") {
			p.DSN += "&" + param
		} else {
			p.DSN += "?" + param
		}
		conn := queuetest.Open(t, p)
		released := make(chan struct{})
		var w *Worker
		f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			// Another session holds the job's row until the worker keeps the completion the statement
			// timeout stopped.
			tx, err := queuetest.DB(f.Conn).BeginTxx(bg, nil)
			if err != nil {
				return err
			}
			var id int64
			if err := tx.QueryRow(queuetest.Rebind(f.Conn, "select id from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs)+" for update")).Scan(&id); err != nil {
				return err
			}
			go func() {
				defer close(released)
				defer func() { _ = tx.Rollback() }()
				deadline := time.Now().Add(time.Minute)
				for w.Stats().Waiting == 0 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
			}()
			return nil
		}))
		f.push(t, "default", envelope(t, jobClass, "", nil))
		w = f.workerWith(t, nil, func(wp *Params) { wp.Queue, wp.Conn = f.NewQueue(t, conn), conn })
		runOnce(t, w)
		<-released
		f.wantRows(t, 0, 0)
		if s := w.Stats(); s.Reapplied != 1 || s.Unapplied != 0 {
			t.Fatalf("%s: reapplied %d, unapplied %d; want the completion kept and applied once", f.DB.Dialect, s.Reapplied, s.Unapplied)
		}
	}
}
