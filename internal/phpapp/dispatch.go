package phpapp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kinds lists the job kinds interop:dispatch knows, each dispatched the way application code does:
//
//   - plain: App\Jobs\Plain, public, protected and private properties of the common types
//   - delayed: App\Jobs\Plain delayed by 60 seconds (or Delay)
//   - flaky: App\Jobs\Flaky, throws on its first Fail attempts (default 1); Tries, Backoff,
//     MaxExceptions and Timeout set its properties
//   - failing: App\Jobs\Failing, always throws, tries 1, records its failed() hook
//   - retry-until: App\Jobs\RetryUntil, retryUntil() Seconds from now, throws on its first Fail attempts
//   - releasing: App\Jobs\Releasing, releases itself on its first attempt
//   - slow: App\Jobs\Slow, sleeps Seconds with the given Timeout
//   - unique, unique-until-processing: App\Jobs\Unique(UntilProcessing), unique by Key
//   - encrypted: App\Jobs\Secret (ShouldBeEncrypted)
//   - model: App\Jobs\WithModel, a User and a collection of Users (SerializesModels)
//   - chain: Count App\Jobs\ChainLink steps with a catch callback; step Fail throws
//   - batch: Count App\Jobs\BatchMember jobs with then/catch/finally callbacks; member Fail throws
//   - listener: App\Events\OrderShipped handled by the queued App\Listeners\RecordShipment
//   - notification: App\Notifications\Shipped to a new User
//   - mail: App\Mail\ShippedMail queued through the array mailer
//   - closure: a queued closure
//   - raw: Queue::push('App\Jobs\RawHandler@handle', data)
//   - noop: App\Jobs\Noop, which records nothing
//   - typed: App\Jobs\Typed, Carbon and DateTimeImmutable dates and a backed enum (PHP 8.1+)
//   - guarded: App\Jobs\Guarded through the job middleware Middleware names, keyed by Key; Seconds,
//     Fail, Tries and WaitFor set how it runs
var Kinds = []string{
	"plain", "delayed", "flaky", "failing", "retry-until", "releasing", "slow", "unique",
	"unique-until-processing", "encrypted", "model", "chain", "batch", "listener", "notification",
	"mail", "closure", "raw", "noop", "typed", "guarded",
}

// DispatchOption is an option of interop:dispatch.
type DispatchOption func(*[]string)

func flag(name string, value any) DispatchOption {
	return func(args *[]string) { *args = append(*args, fmt.Sprintf("--%s=%v", name, value)) }
}

// Count dispatches n jobs (chain steps, batch members).
func Count(n int) DispatchOption { return flag("count", n) }

// OnQueue pushes onto the named queue.
func OnQueue(q string) DispatchOption { return flag("queue", q) }

// Delay delays the jobs.
func Delay(d time.Duration) DispatchOption { return flag("delay", int(d/time.Second)) }

// Fail sets how many attempts throw (flaky, retry-until) or which 1-based step throws (chain, batch).
func Fail(n int) DispatchOption { return flag("fail", n) }

// Tries sets App\Jobs\Flaky's $tries.
func Tries(n int) DispatchOption { return flag("tries", n) }

// Backoff sets App\Jobs\Flaky's $backoff, one value or several.
func Backoff(seconds ...int) DispatchOption {
	s := make([]string, len(seconds))
	for i, v := range seconds {
		s[i] = strconv.Itoa(v)
	}
	return flag("backoff", strings.Join(s, ","))
}

// MaxExceptions sets App\Jobs\Flaky's $maxExceptions.
func MaxExceptions(n int) DispatchOption { return flag("max-exceptions", n) }

// Timeout sets $timeout of App\Jobs\Flaky and App\Jobs\Slow.
func Timeout(d time.Duration) DispatchOption { return flag("timeout", int(d/time.Second)) }

// Seconds sets how long App\Jobs\Slow sleeps, or App\Jobs\RetryUntil's deadline from now.
func Seconds(s float64) DispatchOption { return flag("seconds", s) }

// Key sets the unique id of App\Jobs\Unique.
func Key(k string) DispatchOption { return flag("key", k) }

// Middleware names App\Jobs\Guarded's job middleware: overlap, throttle or rate-limited, with
// ":dont-release", ":shared" or ":by-job" appended.
func Middleware(spec string) DispatchOption { return flag("middleware", spec) }

// ReleaseAfter sets WithoutOverlapping's releaseAfter.
func ReleaseAfter(s int) DispatchOption { return flag("release-after", s) }

// ExpireAfter sets WithoutOverlapping's expireAfter.
func ExpireAfter(s int) DispatchOption { return flag("expire-after", s) }

// Throttle sets ThrottlesExceptions' maxAttempts, decayMinutes and backoff minutes.
func Throttle(maxAttempts, decayMinutes, backoffMinutes int) DispatchOption {
	return func(args *[]string) {
		for _, o := range []DispatchOption{flag("max-attempts", maxAttempts), flag("decay", decayMinutes), flag("retry-after", backoffMinutes)} {
			o(args)
		}
	}
}

// WaitFor makes App\Jobs\Guarded wait, inside its middleware, until the cache key exists.
func WaitFor(key string) DispatchOption { return flag("wait-for", key) }

// AllowFailures lets a batch continue after a member fails.
func AllowFailures() DispatchOption {
	return func(args *[]string) { *args = append(*args, "--allow-failures") }
}

// Dispatched is what interop:dispatch reports: the rows Laravel inserted into the jobs table, the
// batch id (batch kind) and the users it created (model and notification kinds).
type Dispatched struct {
	Jobs  []QueuedJob `json:"jobs"`
	Batch string      `json:"batch"`
	Users []int64     `json:"users"`
}

// QueuedJob is one row inserted into the jobs table.
type QueuedJob struct {
	ID          int64  `json:"id"`
	UUID        string `json:"uuid"`
	Queue       string `json:"queue"`
	DisplayName string `json:"displayName"`
	AvailableAt int64  `json:"availableAt"`
}

// UUIDs returns the uuids of the queued jobs.
func (d *Dispatched) UUIDs() []string {
	out := make([]string, len(d.Jobs))
	for i, j := range d.Jobs {
		out[i] = j.UUID
	}
	return out
}

// Dispatch runs `php artisan interop:dispatch kind` with the options and reports what was queued.
func (a *App) Dispatch(ctx context.Context, kind string, opts ...DispatchOption) (*Dispatched, error) {
	args := []string{"interop:dispatch", kind}
	for _, o := range opts {
		o(&args)
	}
	out, err := a.Artisan(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("dispatch %s: %w", kind, err)
	}
	var d Dispatched
	if err := json.Unmarshal([]byte(lastLine(out)), &d); err != nil {
		return nil, fmt.Errorf("dispatch %s: decode %q: %w", kind, out, err)
	}
	return &d, nil
}

// MustDispatch is Dispatch that fails the test on error.
func (a *App) MustDispatch(ctx context.Context, kind string, opts ...DispatchOption) *Dispatched {
	a.t.Helper()
	d, err := a.Dispatch(ctx, kind, opts...)
	if err != nil {
		a.t.Fatalf("phpapp: %v", err)
	}
	return d
}

// Batch is a batch as PHP's Bus::findBatch reports it.
type Batch struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	TotalJobs     int      `json:"totalJobs"`
	PendingJobs   int      `json:"pendingJobs"`
	ProcessedJobs int      `json:"processedJobs"`
	Progress      int      `json:"progress"`
	FailedJobs    int      `json:"failedJobs"`
	FailedJobIDs  []string `json:"failedJobIds"`
	CreatedAt     string   `json:"createdAt"`
	CancelledAt   *string  `json:"cancelledAt"`
	FinishedAt    *string  `json:"finishedAt"`
	Finished      bool     `json:"finished"`
	Cancelled     bool     `json:"cancelled"`
	HasFailures   bool     `json:"hasFailures"`
}

// FindBatch returns the batch as PHP sees it (interop:batch), or nil when PHP finds none.
func (a *App) FindBatch(ctx context.Context, id string) (*Batch, error) {
	out, err := a.Artisan(ctx, "interop:batch", id)
	if err != nil {
		return nil, fmt.Errorf("find batch %s: %w", id, err)
	}
	var b *Batch
	if err := json.Unmarshal([]byte(lastLine(out)), &b); err != nil {
		return nil, fmt.Errorf("find batch %s: decode %q: %w", id, out, err)
	}
	return b, nil
}

// BenchEnqueue inserts n App\Jobs\Noop jobs with Queue::bulk on queue (empty: the default) and
// returns how long PHP took.
func (a *App) BenchEnqueue(ctx context.Context, n int, queue string) (time.Duration, error) {
	args := []string{"interop:bench-enqueue", strconv.Itoa(n)}
	if queue != "" {
		args = append(args, "--queue="+queue)
	}
	out, err := a.Artisan(ctx, args...)
	if err != nil {
		return 0, fmt.Errorf("bench enqueue: %w", err)
	}
	var r struct {
		Seconds float64 `json:"seconds"`
	}
	if err := json.Unmarshal([]byte(lastLine(out)), &r); err != nil {
		return 0, fmt.Errorf("bench enqueue: decode %q: %w", out, err)
	}
	return time.Duration(r.Seconds * float64(time.Second)), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
