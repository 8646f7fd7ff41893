package worker

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/arraycache"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// waitCtx blocks until the handler's context ends and returns its error.
var waitCtx = handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
	<-ctx.Done()
	return ctx.Err()
})

func TestTimeoutLeavesReservedThenFails(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		f.reg.Register(jobClass, waitCtx)
		f.push(t, "default", envelope(t, jobClass, `"maxTries":2,"timeout":1`, nil))
		w := f.worker(t, func(c *Config) { c.RetryAfter = 90 * time.Second })
		runOnce(t, w)
		row := f.onlyRow(t)
		if row.ReservedAt == nil || row.Attempts != 1 {
			t.Fatalf("timed-out job %+v, want left reserved with attempts 1", row)
		}
		f.wantRows(t, 1, 0)
		// After retry_after another claim takes it; on its last attempt the timeout fails it.
		f.clock.Advance(91 * time.Second)
		runOnce(t, w)
		f.wantRows(t, 0, 1)
		want := `Illuminate\Queue\MaxAttemptsExceededException: App\Jobs\Work has been attempted too many times or run too long. The job may have previously timed out. in `
		if got := f.onlyFailed(t).Exception; !strings.HasPrefix(got, want) {
			t.Fatalf("exception %q", firstLine(got))
		}
	})
}

func TestTimeoutFailOnTimeout(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		f.reg.Register(jobClass, waitCtx)
		f.push(t, "default", envelope(t, jobClass, `"maxTries":5,"failOnTimeout":true,"timeout":1`, nil))
		runOnce(t, f.worker(t, func(c *Config) { c.LaravelVersion = "10.10" }))
		f.wantRows(t, 0, 1)
		if got := firstLine(f.onlyFailed(t).Exception); !strings.HasPrefix(got, `Illuminate\Queue\TimeoutExceededException: App\Jobs\Work has timed out. in `) {
			t.Fatalf("exception %q", got)
		}
	})
}

func TestTimeoutAbandonsHandlerIgnoringContext(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		stuck := make(chan struct{})
		t.Cleanup(func() { close(stuck) })
		f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			<-stuck
			return nil
		}))
		f.push(t, "default", envelope(t, jobClass, `"maxTries":1,"timeout":1`, nil))
		w := f.worker(t, func(c *Config) { c.AbandonAfter = 100 * time.Millisecond })
		start := time.Now()
		runOnce(t, w)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("RunOnce waited %v for a handler that ignores its context", d)
		}
		f.wantRows(t, 0, 1)
		if w.inFlight() != 0 {
			t.Fatal("the abandoned handler still holds its slot")
		}
	})
}

func TestRenewalKeepsLongJob(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		started, finish := make(chan struct{}), make(chan struct{})
		f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			close(started)
			<-finish
			return nil
		}))
		f.push(t, "default", envelope(t, jobClass, "", nil))
		w := f.worker(t, func(c *Config) { c.RetryAfter = 4 * time.Second })
		ticks := newManualTicker(w)
		done := make(chan error, 1)
		go func() { _, err := w.RunOnce(bg); done <- err }()
		<-started
		// A second worker keeps trying while the job runs, on a clock that moves past half of
		// retry_after between its tries, and five times past retry_after in all.
		var calls atomic.Int32
		other := handlers.NewRegistry()
		other.Register(jobClass, ok(&calls))
		second, err := New(Params{Queue: f.Queue, Conn: f.Conn, Registry: other, Config: w.cfg, Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		const rounds = 5
		for range rounds {
			f.clock.Advance(3 * time.Second)
			ticks.tick(t)
			if found, err := second.RunOnce(bg); err != nil || found {
				t.Fatalf("second worker claimed the running job (found %v, err %v)", found, err)
			}
		}
		close(finish)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		f.wantRows(t, 0, 0)
		if s := w.Stats(); s.Renewed != rounds || s.Processed != 1 || calls.Load() != 0 {
			t.Fatalf("stats %+v (want %d renewals), second worker calls %d", s, rounds, calls.Load())
		}
	})
}

func TestRestartSignalStops(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		if err := f.Conn.CacheForever(bg, restartKey, "i:1700000000;"); err != nil {
			t.Fatal(err)
		}
		w := f.worker(t, nil)
		reads := make(chan string)
		w.cache = restartReads{CacheStore: w.cache, clock: f.clock, reads: reads}
		result := make(chan int, 1)
		go func() { status, _ := w.Run(bg); result <- status }()
		// Two reads at the start, then two per loop (before the claim and in the stop check): a sixth
		// read means that a whole loop's stop check saw the value the worker started with.
		for i := range 6 {
			select {
			case v := <-reads:
				if v != "i:1700000000;" {
					t.Fatalf("read %d of the restart value: %q", i+1, v)
				}
			case <-result:
				t.Fatalf("the worker stopped on a restart value it saw at start, after %d reads", i)
			}
		}
		if err := f.Conn.CacheForever(bg, restartKey, "i:1800000000;"); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case <-reads:
			case status := <-result:
				if status != ExitSuccess {
					t.Fatalf("exit status %d", status)
				}
				return
			case <-time.After(time.Minute):
				t.Fatal("the worker did not stop after queue:restart")
			}
		}
	})
}

// restartReads is a cache store that reports each read of the queue:restart value and then moves the
// clock past signalsEvery, so that the worker reads its signals again on its next loop.
type restartReads struct {
	CacheStore
	clock *clock
	reads chan<- string
}

func (r restartReads) CacheGet(ctx context.Context, key string) (string, bool, error) {
	v, ok, err := r.CacheStore.CacheGet(ctx, key)
	if key == restartKey {
		r.clock.Advance(signalsEvery)
		r.reads <- v
	}
	return v, ok, err
}

func TestStopConditions(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, ok(&calls))
		for range 5 {
			f.push(t, "default", envelope(t, jobClass, "", nil))
		}
		status, err := f.worker(t, func(c *Config) { c.MaxJobs = 2 }).Run(bg)
		if err != nil || status != 0 || calls.Load() != 2 {
			t.Fatalf("--max-jobs=2: status %d err %v, ran %d", status, err, calls.Load())
		}
		status, _ = f.worker(t, func(c *Config) { c.Once = true }).Run(bg)
		if status != 0 || calls.Load() != 3 {
			t.Fatalf("--once: status %d, ran %d", status, calls.Load())
		}
		status, _ = f.worker(t, func(c *Config) { c.StopWhenEmpty = true; c.Concurrency = 3 }).Run(bg)
		if status != 0 || calls.Load() != 5 {
			t.Fatalf("--stop-when-empty: status %d, ran %d", status, calls.Load())
		}
		start := time.Now()
		status, _ = f.worker(t, func(c *Config) { c.MaxTime = 200 * time.Millisecond }).Run(bg)
		if status != 0 || time.Since(start) > 3*time.Second {
			t.Fatalf("--max-time: status %d after %v", status, time.Since(start))
		}
		status, _ = f.worker(t, func(c *Config) { c.MemoryMB = 1 }).Run(bg)
		if status != ExitMemoryLimit {
			t.Fatalf("--memory=1: status %d, want %d", status, ExitMemoryLimit)
		}
	})
}

// TestIdleStopWaitsOutSleep: on an empty queue a worker past --memory or --max-time exits once a
// --sleep has passed since its claims began to find nothing, as Laravel's daemon loop checks them after
// that sleep, not at the first short poll.
func TestIdleStopWaitsOutSleep(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	for _, tc := range []struct {
		name   string
		mod    func(*Config)
		status int
	}{
		{"--memory=1", func(c *Config) { c.MemoryMB = 1 }, ExitMemoryLimit},
		{"--max-time", func(c *Config) { c.MaxTime = 50 * time.Millisecond }, ExitSuccess},
	} {
		start := time.Now()
		status, err := f.worker(t, func(c *Config) { c.Sleep = 400 * time.Millisecond; tc.mod(c) }).Run(bg)
		if took := time.Since(start); err != nil || status != tc.status || took < 400*time.Millisecond {
			t.Errorf("%s on an empty queue: status %d (%v) after %v; want %d after --sleep (400ms)", tc.name, status, err, took, tc.status)
		}
	}
}

func TestQueuePriority(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		order := &queueLog{}
		f.reg.Register(jobClass, order)
		f.push(t, "low", envelope(t, jobClass, "", nil))
		f.push(t, "default", envelope(t, jobClass, "", nil))
		f.push(t, "high", envelope(t, jobClass, "", nil))
		f.push(t, "default", envelope(t, jobClass, "", nil))
		w := f.worker(t, func(c *Config) { c.Queues = []string{"high", "default", "low"}; c.StopWhenEmpty = true })
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		if order.String() != "high,default,default,low" {
			t.Fatalf("order %v", order)
		}
	})
}

func TestGracefulShutdownReleasesUnfinished(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		started, stopped := make(chan struct{}, 4), make(chan struct{})
		f.reg.Register(`App\Jobs\Quick`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			started <- struct{}{}
			<-stopped // still running when the stop signal comes, done within the grace period
			return nil
		}))
		f.reg.Register(`App\Jobs\Slow`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}))
		f.push(t, "default", envelope(t, `App\Jobs\Quick`, "", nil))
		slow := f.push(t, "default", envelope(t, `App\Jobs\Slow`, "", nil))
		w := f.worker(t, func(c *Config) { c.Concurrency = 2; c.ShutdownGrace = 2 * time.Second; c.Tries = 1 })
		ctx, cancel := context.WithCancel(bg)
		result := make(chan int, 1)
		go func() { status, _ := w.Run(ctx); result <- status }()
		<-started
		<-started
		cancel()
		close(stopped)
		select {
		case <-result:
		case <-time.After(5 * time.Second):
			t.Fatal("the worker did not stop after the grace period")
		}
		// The quick job finished within the grace period; the slow one was handed back, not failed.
		row := f.onlyRow(t)
		f.wantRows(t, 1, 0)
		if row.ReservedAt != nil || row.Attempts != 1 {
			t.Fatalf("slow job row %+v (id %d), want released with its attempt", row, slow)
		}
		if s := w.Stats(); s.Processed != 1 || s.Returned != 1 || s.Failed != 0 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestTwoWorkersRaceEachJobOnce(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		const n = 60
		seen := f.countRuns(jobClass)
		for range n {
			f.push(t, "default", envelope(t, jobClass, "", nil))
		}
		f.runWorkers(t, f.Strategy, 2, 4)
		// A worker may stop on a momentarily empty claim while the other still runs; finish the rest.
		for runOnce(t, f.worker(t, nil)) {
		}
		seen.wantEachOnce(t, n)
		f.wantRows(t, 0, 0)
	})
}

// runs counts the runs of each job uuid.
type runs struct {
	mu   sync.Mutex
	seen map[string]int
}

// countRuns registers a handler for class that counts runs by uuid.
func (f *fixture) countRuns(class string) *runs {
	r := &runs{seen: map[string]int{}}
	f.reg.Register(class, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		r.mu.Lock()
		r.seen[j.UUID]++
		r.mu.Unlock()
		return nil
	}))
	return r
}

// wantEachOnce checks that n distinct jobs ran, each exactly once.
func (r *runs) wantEachOnce(t *testing.T, n int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) != n {
		t.Fatalf("%d distinct jobs ran, want %d", len(r.seen), n)
	}
	for uuid, c := range r.seen {
		if c != 1 {
			t.Fatalf("job %s ran %d times", uuid, c)
		}
	}
}

// runWorkers runs workers Go workers, each on its own connection through strategy with concurrency
// jobs in flight, until the queue is empty.
func (f *fixture) runWorkers(t *testing.T, strategy string, workers, concurrency int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range workers {
		conn := queuetestOpen(t, f)
		q, err := laravel.NewQueue(conn, laravel.QueueParams{Strategy: strategy})
		if err != nil {
			t.Fatal(err)
		}
		cfg := f.worker(t, nil).cfg
		cfg.Concurrency, cfg.StopWhenEmpty = concurrency, true
		w, err := New(Params{Queue: q, Conn: conn, Registry: f.reg, Config: cfg, Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := w.Run(bg); err != nil {
				t.Errorf("worker %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
}

// queuetestOpen opens a second connection to the fixture's tables, as another worker process would.
func queuetestOpen(t *testing.T, f *fixture) *laravel.Conn {
	t.Helper()
	c, err := laravel.Open(bg, f.Params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	for _, mod := range []func(*Config){
		func(c *Config) { c.LaravelVersion = "banana" },
		func(c *Config) { c.Unhandled = "drop" },
		func(c *Config) { c.Unhandled = "move:low"; c.Queues = []string{"high", "low"} },
		func(c *Config) { c.Queues = []string{"high", ""} },
		func(c *Config) { c.BatchCallbacks = "skip" },
	} {
		cfg := Defaults()
		mod(&cfg)
		_, err := New(Params{Queue: f.Queue, Conn: f.Conn, Registry: handlers.NewRegistry(), Config: cfg})
		if !errors.Is(err, ErrConfig) {
			t.Errorf("New with %+v: err %v, want ErrConfig", cfg, err)
		}
	}
}

func TestClaimErrorsDoNotStopTheWorker(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		ran := make(chan struct{})
		f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			close(ran)
			return nil
		}))
		jobs := f.Conn.Tables().Jobs
		f.exec(t, "alter table "+queuetest.Q(f.Conn, jobs)+" rename to "+queuetest.Q(f.Conn, jobs+"_away"))
		claimErrs := make(chan error, 1)
		cfg := f.worker(t, nil).cfg
		w, err := New(Params{Queue: claimErrors{f.Queue, claimErrs}, Conn: f.Conn, Registry: f.reg, Config: cfg, Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(bg)
		result := make(chan error, 1)
		go func() { _, err := w.Run(ctx); result <- err }()
		select {
		case err := <-claimErrs:
			if !errors.Is(err, laravel.ErrMissingTable) {
				t.Fatalf("claim without the jobs table: %v, want ErrMissingTable", err)
			}
		case err := <-result:
			t.Fatalf("the worker stopped (%v) instead of claiming", err)
		}
		f.exec(t, "alter table "+queuetest.Q(f.Conn, jobs+"_away")+" rename to "+queuetest.Q(f.Conn, jobs))
		f.push(t, "default", envelope(t, jobClass, "", nil))
		select {
		case <-ran:
		case err := <-result:
			t.Fatalf("the worker stopped after a failed claim: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("the worker did not recover from failing claims")
		}
		cancel()
		if err := <-result; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if s := w.Stats(); s.Claimed != 1 || s.Processed != 1 {
			t.Fatalf("stats %+v", s)
		}
	})
}

// claimErrors is the real queue, reporting the first claim error on a channel.
type claimErrors struct {
	laravel.Queue
	errs chan error
}

func (q claimErrors) JobClaim(ctx context.Context, p *laravel.JobClaimParams) ([]*laravel.Job, error) {
	jobs, err := q.Queue.JobClaim(ctx, p)
	if err != nil {
		select {
		case q.errs <- err:
		default:
		}
	}
	return jobs, err
}

// scriptedClaims is the real queue whose claims fail as a script says (true: fail), calling stop after
// the script's end.
type scriptedClaims struct {
	laravel.Queue
	mu     sync.Mutex
	script []bool
	stop   func()
}

func (q *scriptedClaims) JobClaim(ctx context.Context, p *laravel.JobClaimParams) ([]*laravel.Job, error) {
	q.mu.Lock()
	if len(q.script) == 0 {
		q.stop()
		q.mu.Unlock()
		return nil, ctx.Err()
	}
	fail := q.script[0]
	q.script = q.script[1:]
	q.mu.Unlock()
	if fail {
		return nil, errors.New("the database went away")
	}
	return q.Queue.JobClaim(ctx, p)
}

// TestClaimBackoffResetsAfterEmptyClaim: after claims fail and one works, even finding nothing, the
// next failure waits the first delay again, not where the last outage's back-off left off.
func TestClaimBackoffResetsAfterEmptyClaim(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	f.Queue = &scriptedClaims{Queue: f.Queue, script: []bool{true, true, false, true}, stop: cancel}
	var log lockedLog
	w := f.worker(t, nil)
	w.log = slog.New(slog.NewTextHandler(&log, nil))
	if _, err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var waits []string
	for _, l := range strings.Split(log.String(), "\n") {
		if _, rest, ok := strings.Cut(l, "retry_in="); ok {
			waits = append(waits, rest)
		}
	}
	if want := []string{"1s", "2s", "1s"}; !slices.Equal(waits, want) {
		t.Fatalf("claim retries waited %q, want %q\n%s", waits, want, log.String())
	}
}

// TestClaimBackoffBound: failed claims wait 1 s, doubling, and never more than 5 s, so a worker is back
// within seconds of a database outage's end, however long the outage.
func TestClaimBackoffBound(t *testing.T) {
	t.Parallel()
	var waits []time.Duration
	d := time.Duration(0)
	for range 6 {
		d = nextClaimBackoff(d)
		waits = append(waits, d)
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second}; !slices.Equal(waits, want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
}

func TestReservationLostCompletionDoesNothing(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		started, finish := make(chan struct{}), make(chan struct{})
		f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			close(started)
			<-finish
			return nil
		}))
		f.push(t, "default", envelope(t, jobClass, "", nil))
		w := f.worker(t, nil)
		done := make(chan struct{})
		go func() { runOnce(t, w); close(done) }()
		<-started
		// Another worker, whose clock is past retry_after, takes the job over (as PHP would).
		stolen := f.Claim(t, f.Queue, "default", f.clock.Unix()+1000, 90)
		if stolen == nil || stolen.Attempts != 2 {
			t.Fatalf("take-over claim %+v", stolen)
		}
		close(finish)
		<-done
		row := f.onlyRow(t)
		if row.ReservedAt == nil || *row.ReservedAt != stolen.ReservedAt || row.Attempts != 2 {
			t.Fatalf("row %+v: the first worker's completion touched the new owner's row", row)
		}
		if s := w.Stats(); s.Lost != 1 || s.Processed != 0 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestMaintenanceModeAndPausedQueues(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		ran := &queueLog{}
		f.reg.Register(jobClass, ran)
		f.push(t, "default", envelope(t, jobClass, "", nil))
		f.push(t, "other", envelope(t, jobClass, "", nil))
		if err := f.Conn.CacheForever(bg, maintenanceKey, `a:0:{}`); err != nil {
			t.Fatal(err)
		}
		queues := []string{"default", "other"}
		down := func(c *Config) { c.LaravelVersion = "12.40"; c.Queues = queues; c.MaxTime = 300 * time.Millisecond }
		w := f.worker(t, down)
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		if ran.String() != "" || w.Stats().Claimed != 0 {
			t.Fatalf("ran %v, stats %+v in maintenance mode", ran, w.Stats())
		}
		f.wantUntouched(t, 2)
		if err := f.Conn.CachePut(bg, pausedPrefix+"database:default", "b:1;", time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := f.worker(t, func(c *Config) { down(c); c.Force = true }).Run(bg); err != nil {
			t.Fatal(err)
		}
		if ran.String() != "other" {
			t.Fatalf("with --force and default paused, ran %v, want [other]", ran)
		}
		if row := f.onlyRow(t); row.Queue != "default" || row.Attempts != 0 || row.ReservedAt != nil {
			t.Fatalf("the paused queue's row %+v, want it never claimed", row)
		}
	})
}

// TestStopWhenEmptyInMaintenanceSaysWhy: --stop-when-empty stops a worker in maintenance mode, as
// Laravel's does, and the log says that maintenance mode, not an empty queue, stopped it.
func TestStopWhenEmptyInMaintenanceSaysWhy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	f.reg.Register(jobClass, &queueLog{})
	f.push(t, "default", envelope(t, jobClass, "", nil))
	if err := f.Conn.CacheForever(bg, maintenanceKey, `a:0:{}`); err != nil {
		t.Fatal(err)
	}
	w := f.worker(t, func(c *Config) { c.LaravelVersion = "12.40"; c.StopWhenEmpty = true; c.Sleep = 10 * time.Millisecond })
	var logged lockedLog
	w.log = slog.New(slog.NewTextHandler(&logged, nil))
	if _, err := w.Run(bg); err != nil {
		t.Fatal(err)
	}
	if out := logged.String(); !strings.Contains(out, "maintenance mode; stopping") || strings.Contains(out, "queue is empty") {
		t.Fatalf("log:\n%s\nwant it to name maintenance mode", out)
	}
	f.wantUntouched(t, 1)
}

// TestMaxTimeWhilePaused stops a worker in maintenance mode at its first pause when its Laravel
// version reckons --max-time from the host's boot there (before 11.53, 12.60, 13.10), and keeps one of
// a fixed version paused until --max-time since its start.
func TestMaxTimeWhilePaused(t *testing.T) {
	t.Parallel()
	// A --max-time the host's monotonic clock has passed, far longer than the test runs.
	up, ok := hrtime()
	if !ok || up < 20*time.Second {
		t.Skip("the host's monotonic clock is unread or younger than 20 s")
	}
	maxTime := up / 2
	for _, tc := range []struct {
		version string
		stops   bool
	}{{"8.83", true}, {"12.59", true}, {"12.60", false}, {"13.10", false}} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testenv.SQLite(t))
			down := filepath.Join(t.TempDir(), "down") // php artisan down's file, every version's driver
			if err := os.WriteFile(down, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			w := f.worker(t, func(c *Config) {
				c.LaravelVersion, c.MaxTime, c.Sleep, c.MaintenanceFile = tc.version, maxTime, 10*time.Millisecond, down
			})
			var logged lockedLog
			w.log = slog.New(slog.NewTextHandler(&logged, nil))
			// Stopped by the test after two pauses at the latest: a fixed version is still paused then.
			ctx, cancel := context.WithCancel(bg)
			var pauses atomic.Int32
			w.pauseHook = func() {
				if pauses.Add(1) == 2 {
					cancel()
				}
			}
			if _, err := w.Run(ctx); err != nil {
				t.Fatal(err)
			}
			cancel()
			if stopped := strings.Contains(logged.String(), "--max-time reached while paused"); stopped != tc.stops {
				t.Errorf("Laravel %s: stopped for --max-time while paused %v, want %v\n%s", tc.version, stopped, tc.stops, logged.String())
			}
		})
	}
}

// TestStopWhenEmptySleepsFirst: on an empty queue --stop-when-empty stops after one --sleep, as
// Laravel's loop sleeps after a pop that found nothing before it checks, not the moment it starts.
func TestStopWhenEmptySleepsFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	const sleep = 300 * time.Millisecond
	w := f.worker(t, func(c *Config) { c.StopWhenEmpty = true; c.Sleep = sleep })
	start := time.Now()
	if status, err := w.Run(bg); err != nil || status != ExitSuccess {
		t.Fatalf("status %d, %v", status, err)
	}
	if took := time.Since(start); took < sleep {
		t.Fatalf("stopped after %v on an empty queue, want at least --sleep (%v)", took, sleep)
	}
}

func TestPauseAndResume(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(jobClass, ok(&calls))
	f.push(t, "default", envelope(t, jobClass, "", nil))
	w := f.worker(t, func(c *Config) { c.MaxTime = 300 * time.Millisecond })
	w.Pause()
	if _, err := w.Run(bg); err != nil || calls.Load() != 0 || w.Stats().Claimed != 0 {
		t.Fatalf("paused worker ran %d jobs, stats %+v (err %v)", calls.Load(), w.Stats(), err)
	}
	f.wantUntouched(t, 1)
	w.Resume()
	if _, err := w.Run(bg); err != nil || calls.Load() != 1 {
		t.Fatalf("resumed worker ran %d jobs (err %v)", calls.Load(), err)
	}
}

// TestStopWhenEmptyFor stops a worker once the queue has been empty for StopWhenEmptyFor since its
// last job finished, as Laravel's --stop-when-empty-for; a paused worker stops the same way, counted
// from its start.
func TestStopWhenEmptyFor(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var done atomic.Int64
	f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		done.Store(time.Now().UnixNano())
		return nil
	}))
	f.push(t, "default", envelope(t, jobClass, "", nil))
	const emptyFor = 300 * time.Millisecond
	w := f.worker(t, func(c *Config) { c.StopWhenEmptyFor = emptyFor })
	status, err := w.Run(bg)
	stopped := time.Now()
	if err != nil || status != ExitSuccess || w.Stats().Processed != 1 {
		t.Fatalf("status %d err %v stats %+v, want the job processed and status 0", status, err, w.Stats())
	}
	if idle := stopped.Sub(time.Unix(0, done.Load())); idle < emptyFor {
		t.Fatalf("stopped %v after the job finished, before the queue had been empty for %v", idle, emptyFor)
	}

	f.push(t, "default", envelope(t, jobClass, "", nil))
	w = f.worker(t, func(c *Config) { c.StopWhenEmptyFor = emptyFor })
	w.Pause()
	start := time.Now()
	if status, err := w.Run(bg); err != nil || status != ExitSuccess || time.Since(start) < emptyFor {
		t.Fatalf("paused: status %d err %v after %v, want status 0 after %v", status, err, time.Since(start), emptyFor)
	}
	f.wantUntouched(t, 1)
}

// cancelAfterClaim is the real queue, with the stop signal arriving right after a claim returns: the
// moment between claiming jobs and starting them.
type cancelAfterClaim struct {
	laravel.Queue
	cancel context.CancelFunc
}

func (q cancelAfterClaim) JobClaim(ctx context.Context, p *laravel.JobClaimParams) ([]*laravel.Job, error) {
	jobs, err := q.Queue.JobClaim(ctx, p)
	q.cancel()
	return jobs, err
}

func TestShutdownReturnsUnstartedJobs(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, ok(&calls))
		for range 3 {
			f.push(t, "default", envelope(t, jobClass, "", nil))
		}
		ctx, cancel := context.WithCancel(bg)
		cfg := f.worker(t, func(c *Config) { c.Concurrency = 3 }).cfg
		w, err := New(Params{Queue: cancelAfterClaim{f.Queue, cancel}, Conn: f.Conn, Registry: f.reg, Config: cfg, Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 0 {
			t.Fatalf("%d jobs ran after the stop signal", calls.Load())
		}
		rows := f.Rows(t)
		if len(rows) != 3 {
			t.Fatalf("%d rows, want 3", len(rows))
		}
		for _, r := range rows {
			if r.Attempts != 0 || r.ReservedAt != nil {
				t.Fatalf("row %+v: want returned untouched", r)
			}
		}
		if s := w.Stats(); s.Claimed == 0 || s.Returned != s.Claimed {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestEveryStrategyEndToEnd(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		seen := f.countRuns(jobClass)
		var links atomic.Int32
		f.reg.Register(`App\Jobs\Noop`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			links.Add(1)
			return nil
		}))
		var failed atomic.Int32
		f.reg.Register(`App\Jobs\FlakyJob`, failing(&failed, errors.New("always")))
		const n = 40
		for range n {
			f.push(t, "default", envelope(t, jobClass, "", nil))
		}
		f.push(t, "default", fixture883(t, "chain"))
		f.push(t, "default", fixture883(t, "flaky")) // maxTries 5, backoff 1,5,10, maxExceptions 3
		f.runWorkers(t, f.Strategy, 2, 4)
		// The flaky job waits out its backoffs on the moved clock.
		for range 3 {
			f.clock.Advance(11 * time.Second)
			for runOnce(t, f.worker(t, nil)) {
			}
		}
		seen.wantEachOnce(t, n)
		if links.Load() != 3 || failed.Load() != 3 {
			t.Fatalf("chain links %d (want 3), flaky attempts %d (want 3, then maxExceptions)", links.Load(), failed.Load())
		}
		// delete-mark leaves finished rows marked until its sweep; no row may be claimable.
		for _, r := range f.Rows(t) {
			if r.ReservedAt == nil || *r.ReservedAt != laravel.MarkedReservedAt {
				t.Fatalf("row %d left: reserved_at %v attempts %d", r.ID, r.ReservedAt, r.Attempts)
			}
		}
		if n := f.Count(t, f.Conn.Tables().FailedJobs); n != 1 {
			t.Fatalf("failed_jobs rows = %d, want 1", n)
		}
	})
}

// TestStopWhenEmptyTakesRowsBelowTheBound: a row that becomes claimable below where a worker's claims
// start (another worker's reservation expired, a row given back) is taken before --stop-when-empty
// stops, as PHP's worker, whose claim reads the whole queue, would take it, not left for a probe.
func TestStopWhenEmptyTakesRowsBelowTheBound(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		const n = 150
		seen := f.countRuns(jobClass)
		first := f.push(t, "default", envelope(t, jobClass, "", nil))
		for range n - 1 {
			f.push(t, "default", envelope(t, jobClass, "", nil))
		}
		jobs := queuetest.Q(f.Conn, f.Conn.Tables().Jobs)
		now := f.clock.Unix()
		// Another worker holds the first row.
		f.exec(t, "update "+jobs+" set reserved_at = ?, attempts = 1 where id = ?", now, first)
		stopWhenEmpty := func(c *Config) { c.Concurrency, c.StopWhenEmpty = 8, true }
		if _, err := f.worker(t, stopWhenEmpty).Run(bg); err != nil {
			t.Fatal(err)
		}
		f.wantRows(t, 1, 0)
		// Its reservation expires: the row is Laravel's to claim again.
		f.exec(t, "update "+jobs+" set reserved_at = ? where id = ?", now-int64(Defaults().RetryAfter/time.Second)-1, first)
		if _, err := f.worker(t, stopWhenEmpty).Run(bg); err != nil {
			t.Fatal(err)
		}
		f.wantRows(t, 0, 0)
		seen.wantEachOnce(t, n)
	})
}

// TestOnceAndMaxJobsSkipPHPJobs: a job left for PHP is not the job --once runs, nor one --max-jobs
// counts, as PHP's worker runs and counts it: --once runs the next job Go can, --max-jobs=2 runs two.
// TestOnceBehindPHPBacklog: --once runs the first job of its own behind more rows left for PHP than
// its claims exclude (here 40 behind 4, and 1,100 behind the default 1,024); before, it gave up after
// that many claims, ran nothing and exited 0. PHP's rows stay untouched.
func TestOnceBehindPHPBacklog(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		onceBehindPHP(t, f, 40, func(c *Config) { c.ExcludeLimit = 4 })
	})
	onceBehindPHP(t, newFixture(t, testenv.SQLite(t)), 1100, nil)
}

// onceBehindPHP runs --once behind n rows of a class only PHP runs and checks it ran its one job
// behind them, and left them untouched.
func onceBehindPHP(t *testing.T, f *fixture, n int, mod func(*Config)) {
	var calls atomic.Int32
	f.reg.Register(jobClass, ok(&calls))
	php := envelope(t, `App\Jobs\OnlyPHP`, "", nil)
	for range n {
		f.push(t, "default", php)
	}
	f.push(t, "default", envelope(t, jobClass, "", nil))
	w := f.worker(t, func(c *Config) {
		c.Once = true
		if mod != nil {
			mod(c)
		}
	})
	if _, err := w.Run(bg); err != nil || calls.Load() != 1 {
		t.Fatalf("--once behind %d PHP rows: %d run, stats %+v (%v); want its job run", n, calls.Load(), w.Stats(), err)
	}
	rows := f.Rows(t)
	for _, r := range rows {
		if r.Attempts != 0 || r.ReservedAt != nil {
			t.Fatalf("PHP's row after --once: %+v, want it untouched", r)
		}
	}
	if len(rows) != n {
		t.Fatalf("%d rows left after --once, want PHP's %d", len(rows), n)
	}
}

func TestOnceAndMaxJobsSkipPHPJobs(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, handlers.HandlerFunc(func(context.Context, *handlers.Job) error {
			calls.Add(1)
			return nil
		}))
		f.push(t, "default", envelope(t, `App\Jobs\OnlyPHP`, "", nil))
		for range 4 {
			f.push(t, "default", envelope(t, jobClass, "", nil))
		}
		w := f.worker(t, func(c *Config) { c.Once = true })
		if _, err := w.Run(bg); err != nil || calls.Load() != 1 || w.Stats().LeftForPHP != 1 {
			t.Fatalf("--once: %d run, stats %+v (%v); want the PHP job left and one Go job run", calls.Load(), w.Stats(), err)
		}
		w = f.worker(t, func(c *Config) { c.MaxJobs, c.Concurrency = 2, 1 })
		if _, err := w.Run(bg); err != nil || calls.Load() != 3 {
			t.Fatalf("--max-jobs=2: %d run in all, stats %+v (%v); want two more", calls.Load(), w.Stats(), err)
		}
	})
}

// TestMaintenanceDriver follows the application's maintenance driver (Laravel 9+): with "file" the
// cache key is not looked at, with "cache" the file is not, and the key is read from the driver's
// store when it is not the default one.
func TestMaintenanceDriver(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(jobClass, ok(&calls))
	downFile := filepath.Join(t.TempDir(), "down")
	other := arraycache.New(nil)
	for i, c := range []struct {
		driver            string
		fileDown, keyDown bool // the maintenance file exists; the key is in the default store
		otherDown         bool // the key is in the driver's own store
		runs              bool
	}{
		{"", false, true, false, false},
		{"", true, false, false, false},
		{"file", false, true, false, true},
		{"file", true, false, false, false},
		{"cache", true, false, false, true},
		{"cache", false, false, true, false},
		{"cache", false, true, false, true}, // the driver's store is another one
	} {
		f.push(t, "default", envelope(t, jobClass, "", nil))
		if err := os.Remove(downFile); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if c.fileDown {
			if err := os.WriteFile(downFile, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Conn.CacheForget(bg, maintenanceKey); err != nil {
			t.Fatal(err)
		}
		if c.keyDown {
			if err := f.Conn.CacheForever(bg, maintenanceKey, `a:0:{}`); err != nil {
				t.Fatal(err)
			}
		}
		if err := other.CacheForget(bg, maintenanceKey); err != nil {
			t.Fatal(err)
		}
		if c.otherDown {
			if err := other.CacheForever(bg, maintenanceKey, `a:0:{}`); err != nil {
				t.Fatal(err)
			}
		}
		before := calls.Load()
		w := f.workerWith(t, func(cfg *Config) {
			cfg.LaravelVersion = "11.0"
			cfg.StopWhenEmpty, cfg.Sleep = true, 10*time.Millisecond
			cfg.MaintenanceFile, cfg.MaintenanceDriver = downFile, c.driver
		}, func(p *Params) {
			if c.driver == "cache" && i >= 5 {
				p.MaintenanceStore = other
			}
		})
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		if runs := calls.Load() > before; runs != c.runs {
			t.Errorf("driver %q, file %v, key %v, own store %v: ran %v, want %v", c.driver, c.fileDown, c.keyDown, c.otherDown, runs, c.runs)
		}
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
	}
}
