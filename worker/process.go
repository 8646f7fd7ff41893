package worker

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// runningJob is one claimed job. Its mutex serializes renewal with completion, and done records that
// the row has been completed (or deliberately left alone) so nothing touches it again.
type runningJob struct {
	job   *laravel.Job
	mu    sync.Mutex
	done  bool // completed, handed back, or deliberately left reserved
	lost  bool // renewal found the reservation gone
	begun bool // its handler was started (begin): a stop releases it rather than hands it back untouched
	// ticket orders the jobs of a worker as it claimed them (queue priority, then id): jobs waiting
	// for one key take it in that order, as one PHP worker pops them.
	ticket uint64
	// preGate is true from the claim until the job reached its gates or left without them.
	preGate atomic.Bool
	started time.Time
	// stopping is closed when the Run that claimed the job stops (nil: never): a job still waiting for
	// its turn then is handed back untouched.
	stopping <-chan struct{}
	// abandoned is set when the handler ignored its timeout and the job's slot was freed without it.
	abandoned atomic.Bool
	obs       observed // what the Observer hooks keep
}

// begin records that the job's handler starts, unless the job was completed or handed back already.
func (w *Worker) begin(rj *runningJob) bool {
	rj.mu.Lock()
	defer rj.mu.Unlock()
	if rj.done {
		return false
	}
	rj.begun = true
	return true
}

func (rj *runningJob) isDone() bool {
	rj.mu.Lock()
	defer rj.mu.Unlock()
	return rj.done
}

// jobRun is what process knows about a job while it handles it.
type jobRun struct {
	rj          *runningJob
	env         *payload.Envelope
	class       string // commandName, or the class of a raw job
	displayName string
	cmd         *payload.Object // nil for raw jobs and before decoding
	h           handlers.Handler
	hj          *handlers.Job
	at          Frame // the handler's source location, for errors without one
	notRun      bool  // handed back at shutdown after its middleware let it through, before it started
	// peeked holds the names of a payload that does not read as a job (env is nil), when it has them
	// (payload.PeekEnvelope): its uuid and the name PHP shows it by.
	peeked *payload.Envelope
}

// uuid is the job's payload uuid: the envelope's, or the one peeked from a payload that does not read.
func (r *jobRun) uuid() string {
	switch {
	case r.env != nil:
		return r.env.UUID
	case r.peeked != nil:
		return r.peeked.UUID
	}
	return ""
}

// phpOnly lists classes that only PHP can run even if a handler is registered under their name.
var phpOnly = map[string]bool{
	`Illuminate\Queue\CallQueuedClosure`: true,
	`Illuminate\Bus\ChainedBatch`:        true,
}

// wrappers are Laravel's job classes that run something else; a handler registered under the
// displayName (the listener, notification or mailable class) handles them.
var wrappers = map[string]bool{
	`Illuminate\Events\CallQueuedListener`:             true,
	`Illuminate\Notifications\SendQueuedNotifications`: true,
	`Illuminate\Mail\SendQueuedMailable`:               true,
	`Illuminate\Broadcasting\BroadcastEvent`:           true,
}

// classOf returns the class a job runs (commandName, or a raw job's target) and the name it is shown
// by.
func classOf(env *payload.Envelope) (class, displayName string) {
	if env.IsRaw() {
		class, _ = env.RawTarget()
	} else {
		class = env.CommandName
	}
	displayName = env.DisplayName
	if displayName == "" || displayName == "0" {
		// JobName::resolve: an empty displayName (PHP's empty(): "" or "0") shows the job key.
		displayName = env.Job
	}
	return class, displayName
}

// process runs one claimed job through Laravel's Worker::process.
func (w *Worker) process(ctx context.Context, rj *runningJob) {
	defer w.passedPreGate(rj) // a job that leaves before its gates
	rj.started = time.Now()
	var r *jobRun
	if w.obs != nil {
		defer func() { w.observeFinish(ctx, r) }()
	}
	j := rj.job
	var env *payload.Envelope
	var err error
	if read, _ := j.Read.(*claimRead); read != nil {
		env = read.env // read by the claim's passOver
	} else {
		env, err = payload.ParseEnvelope(j.Payload)
	}
	if err != nil {
		r = &jobRun{rj: rj, class: "", displayName: fmt.Sprintf("job %d", j.ID)}
		if peeked, ok := payload.PeekEnvelope(j.Payload); ok {
			r.peeked = peeked
			r.class, r.displayName = classOf(peeked)
			if _, ok := w.lookup(r); !ok && r.class != "" {
				// A class Go does not run: PHP reads such values as PHP compares them, and runs it.
				w.unhandled(ctx, r)
				return
			}
			w.report(r, EventStarting, "", nil) // PHP prints its start under the name it can read
		}
		// A payload no one can read still goes to failed_jobs, byte for byte, where it can be inspected
		// and retried; it is never dropped.
		w.fail(ctx, r, fmt.Errorf("read payload of job %d: %w; the row is kept in failed_jobs as it was", j.ID, err))
		return
	}
	r = &jobRun{rj: rj, env: env}
	r.class, r.displayName = classOf(env)
	if env.Command != "" && env.CommandEncrypted() {
		w.encryptedClasses.Store(r.class, true) // its class is ShouldBeEncrypted: so are its chain links of that class
	}
	h, ok := w.lookup(r)
	if !ok {
		w.unhandled(ctx, r)
		return
	}
	r.h, r.at = h, handlerFrame(h)
	hj := &handlers.Job{
		ID: j.ID, UUID: env.UUID, Connection: w.cfg.Connection, Queue: j.Queue, Attempts: j.Attempts,
		Class: r.class, Envelope: env,
	}
	r.hj = hj
	var decodeErr error
	if env.IsRaw() {
		_, hj.Method = env.RawTarget()
		hj.Data = env.Data
	} else if r.cmd, decodeErr = payload.DecodeCommand(env, w.keyring); decodeErr == nil {
		if !sameClass(r.cmd.Class, r.class) {
			// PHP runs the serialized object, whatever commandName says: the object's class has the
			// job, and a handler of the named class must not run another class's data.
			w.log.Warn("data.command is a serialized object of another class than data.commandName names: it is run as PHP runs it, as the object's class",
				"id", j.ID, "command", r.cmd.Class, "commandName", r.class)
			r.class = r.cmd.Class
			if h, ok = w.lookup(r); !ok {
				w.unhandled(ctx, r)
				return
			}
			r.h, r.at = h, handlerFrame(h)
			hj.Class = r.class
		}
		hj.Command = r.cmd
		hj.SetBatch(batchID(r), batchStore{w})
		if w.batchNeedsPHP(ctx, r) {
			w.leave(r, batchNeedsPHPWhy)
			return
		}
		if w.chainNeedsPHP(r) {
			w.leave(r, chainNeedsPHPWhy)
			return
		}
	}
	// A job whose models cannot be checked, or whose middleware only PHP can apply, is left before it
	// starts: PHP's worker prints and counts its start when it runs it.
	var missing *Exception // a model that is gone: the job fails or is deleted once it has started
	if r.cmd != nil && w.cfg.CheckModels && w.conn != nil {
		var err error
		if missing, err = w.checkModels(ctx, r); err != nil {
			// The models cannot be checked (a missing table, a lost connection): PHP workers can run it.
			w.log.Error("check the job's models", "class", r.displayName, "id", j.ID, "error", err)
			w.leave(r, "its models could not be checked")
			return
		}
	}
	mws, why := w.readMiddleware(r)
	if why != "" {
		w.leave(r, why)
		return
	}
	leaveGates, ok := w.passGates(ctx, r, mws)
	if !ok {
		// The worker stopped before the job's turn came: it was not started, so it is handed back
		// untouched, as PHP's worker would not have taken it yet.
		w.returnJobs(rj)
		return
	}
	defer leaveGates()
	rj.started = time.Now()
	ctx = w.observeStart(ctx, r)
	if w.logs(w.jobLevel()) {
		w.log.Log(ctx, w.jobLevel(), "Processing", "class", r.displayName, "id", j.ID, "uuid", env.UUID, "queue", j.Queue, "attempt", j.Attempts)
	}

	w.report(r, EventStarting, "", nil)
	limits := w.limits(env)
	if limits.AlreadyExceeded(w.version, j.Attempts, w.clock().Unix()) {
		// PHP's worker throws it out of process() once the job has failed, and reports it: no
		// JobProcessed follows, so no "Processed" line.
		r.rj.obs.reported = true
		w.fail(ctx, r, newException(MaxAttemptsExceededClass, MaxAttemptsMessage(w.version, r.displayName), nil))
		return
	}
	if decodeErr != nil {
		var de *payload.DecryptError
		if errors.As(decodeErr, &de) {
			// PHP's CallQueuedHandler throws the Encrypter's DecryptException; the log says what to fix.
			w.log.Error("the job's command could not be decrypted: set APP_KEY (and APP_PREVIOUS_KEYS) to the keys the app encrypts with",
				"class", r.displayName, "id", j.ID, "reason", de.Message)
			w.exception(ctx, r, limits, newException(payload.DecryptExceptionClass, de.Message, nil))
			return
		}
		if env.CommandEncrypted() && (errors.Is(decodeErr, payload.ErrNoKeyring) || errors.Is(decodeErr, payload.ErrNotEncrypted) && w.keyring == nil) {
			// PHP makes its encrypter before it reads the command, and that throws first.
			class, msg := payload.KeyException(w.version, w.keyErr == nil)
			w.exception(ctx, r, limits, newException(class, msg, nil))
			return
		}
		if errors.Is(decodeErr, payload.ErrNotEncrypted) {
			// Not Laravel's encryption at all: PHP's decrypt() finds no payload in it.
			w.exception(ctx, r, limits, newException(payload.DecryptExceptionClass, payload.DecryptPayloadInvalid, nil))
			return
		}
		err := fmt.Errorf("decode command %s: %w", r.class, decodeErr)
		if errors.Is(decodeErr, payload.ErrSyntax) {
			err = damagedPayload{err}
		}
		w.exception(ctx, r, limits, err)
		return
	}
	if missing != nil {
		w.modelNotFound(ctx, r, missing)
		return
	}

	herr, timedOut := w.throughMiddleware(ctx, r, mws, func() (error, bool) {
		return w.invokeWithTimeout(ctx, r, h, hj, w.timeout(env), limits)
	})
	if timedOut {
		return // applied by the timeout's watcher
	}
	if rj.isDone() {
		return // handed back at shutdown while the handler ran
	}
	action, delay, actionErr := hj.Action()
	switch action {
	case handlers.ActionDelete:
		if herr == nil {
			// CallQueuedHandler treats a job its handler deleted as done: only a released or failed job
			// skips the next chain link, the batch's success and the unique lock's release.
			w.succeed(ctx, r, limits, &w.stats.deleted)
			return
		}
		// The handler threw after deleting its job: PHP's exception path finds the job deleted and
		// does nothing more, so neither the success path nor a failure follows; the exception still
		// counts towards maxExceptions.
		w.maxExceptionsReached(ctx, r)
		w.completeLocked(rj, "delete", func(ctx context.Context) error { return w.queue.JobDelete(ctx, j) }, &w.stats.deleted)
		if w.logs(w.jobLevel()) {
			w.log.Log(ctx, w.jobLevel(), "Processed", "class", r.displayName, "id", j.ID, "duration", time.Since(rj.started), "deleted_by_handler", true)
		}
	case handlers.ActionRelease:
		if w.atAttemptsCeiling(j) {
			// Its next claim could not count the attempt: it would run at this count for ever.
			w.fail(ctx, r, newException(MaxAttemptsExceededClass, MaxAttemptsMessage(w.version, r.displayName), nil))
			return
		}
		w.releaseJob(r, delay)
		if herr == nil { // one that threw after releasing goes out by PHP's exception path: no JobProcessed
			w.report(r, EventSuccess, "released", nil)
		} else {
			// The exception counts towards maxExceptions, as PHP's exception path counts it. Where the
			// tries or that count then fail the job, PHP also writes a failed_jobs row while the
			// released copy stays queued; here the release stands alone, so that the job is not both
			// queued and failed.
			w.maxExceptionsReached(ctx, r)
		}
	case handlers.ActionFail:
		if actionErr == nil {
			actionErr = herr
		}
		if actionErr == nil {
			actionErr = newException(ManuallyFailedClass, "", nil)
		}
		w.fail(ctx, r, actionErr)
		if herr == nil {
			w.report(r, EventSuccess, "deleted", nil)
		}
	default:
		if herr != nil {
			w.exception(ctx, r, limits, herr)
			return
		}
		w.succeed(ctx, r, limits, &w.stats.processed)
	}
}

// lookup finds the handler for a job: by class, then for Laravel's wrapper jobs (listeners,
// notifications, mailables) by displayName. Classes only PHP can run have no handler.
func (w *Worker) lookup(r *jobRun) (handlers.Handler, bool) {
	if phpOnly[r.class] {
		return nil, false
	}
	if h, ok := w.registry.Lookup(r.class); ok {
		return h, true
	}
	if wrappers[r.class] && r.displayName != "" {
		return w.registry.Lookup(r.displayName)
	}
	return nil, false
}

// damagedPayload is an error no retry can change: the job's own payload (its command, its chain's
// next link) cannot be read. PHP retries such a job until its tries run out, and for ever without a
// limit; it fails at once here, its row kept in failed_jobs as it was.
type damagedPayload struct{ err error }

func (d damagedPayload) Error() string {
	return d.err.Error() + " (the payload is damaged: no retry can read it)"
}
func (d damagedPayload) Unwrap() error { return d.err }

// atAttemptsCeiling reports a job claimed at the largest attempts its column holds (255 for Laravel's
// tinyint before 13.6): claims saturate there, so a job retried without limit would be released and
// taken again at that count for ever, and PHP's workers before 12.54 fail to reserve it. Where it
// would be released (an exception, a timeout, a release), it fails instead, whatever its tries.
func (w *Worker) atAttemptsCeiling(j *laravel.Job) bool {
	c, ok := w.conn.(interface{ MaxAttempts() int })
	return ok && c.MaxAttempts() > 0 && j.Attempts >= c.MaxAttempts()
}

// limits returns the job's retry limits: payload values over the worker's options.
func (w *Worker) limits(env *payload.Envelope) Limits {
	l := Limits{MaxTries: w.cfg.Tries}
	if env.MaxTries != nil {
		l.MaxTries, l.MaxTriesFraction = *env.MaxTries, env.MaxTriesFraction
	}
	until, ok := env.RetryDeadline()
	if w.version.AtLeast(9, 26) {
		// Job::retryUntil reads retryUntil alone from 9.26; before, it fell back to timeoutAt.
		until, ok = 0, env.RetryUntil != nil
		if ok {
			until = *env.RetryUntil
		}
	}
	if ok && until != 0 && w.version.AtLeast(5, 5) {
		l.RetryUntil, l.HasRetryUntil = until, true
	}
	return l
}

// timeout returns the job's timeout: payload timeout ?? --timeout; 0 means none. Under --once there
// is none, as in PHP, whose worker sets its timeout alarm only in the daemon loop (runNextJob, which
// --once calls, runs the job to its end, in every version from 5.4 to 13.x).
func (w *Worker) timeout(env *payload.Envelope) time.Duration {
	if w.cfg.Once {
		return 0
	}
	if env.Timeout != nil {
		if *env.Timeout <= 0 {
			return 0
		}
		return time.Duration(*env.Timeout) * time.Second
	}
	return w.cfg.Timeout
}

// invokeWithTimeout runs the handler on the calling goroutine, recovering a panic as an exception. A
// watcher starts only if the timeout passes first: it cancels the handler's context, applies the
// timeout (onTimeout) and reports timedOut once that is done. A handler that ignores its cancelled
// context is abandoned after AbandonAfter: the watcher frees the job's slot, and the caller's goroutine
// stays with the handler until it returns.
func (w *Worker) invokeWithTimeout(ctx context.Context, r *jobRun, h handlers.Handler, hj *handlers.Job, timeout time.Duration, limits Limits) (err error, timedOut bool) {
	if timeout <= 0 {
		return invoke(ctx, h, hj), false
	}
	// The deadline lets handlers see their time budget (ctx.Deadline) and pass it on.
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tw := &timeoutWatch{applied: make(chan struct{})}
	stop := context.AfterFunc(hctx, func() {
		if errors.Is(hctx.Err(), context.DeadlineExceeded) {
			w.watchTimeout(ctx, r, limits, tw)
		}
		// Otherwise cancelled by the shutdown: the job was handed back already.
	})
	err = invoke(hctx, h, hj)
	if stop() {
		if errors.Is(hctx.Err(), context.DeadlineExceeded) {
			// It returned because its time ran out, before the watcher started: that is the timeout,
			// not a job exception, and this goroutine applies it.
			w.stats.timedOut.Add(1)
			w.onTimeout(ctx, r, limits)
			return nil, true
		}
		return err, false
	}
	// The watcher started. A handler that returns once its time ran out has timed out, not failed.
	timedOut = errors.Is(hctx.Err(), context.DeadlineExceeded)
	if timedOut {
		<-tw.applied
	}
	tw.mu.Lock()
	tw.returned = true
	if tw.back != nil {
		close(tw.back)
	}
	tw.mu.Unlock()
	return err, timedOut
}

// timeoutWatch is what a handler's run shares with its timeout watcher.
type timeoutWatch struct {
	applied  chan struct{} // closed once the timeout is applied
	mu       sync.Mutex
	returned bool          // the handler has returned
	back     chan struct{} // closed when the handler returns, if the watcher waits for it
}

// watchTimeout applies a job's timeout, then waits for the handler to return for AbandonAfter. After
// that it abandons the handler: the job's slot is freed by this goroutine instead of the runner's.
func (w *Worker) watchTimeout(ctx context.Context, r *jobRun, limits Limits, tw *timeoutWatch) {
	w.stats.timedOut.Add(1)
	w.onTimeout(ctx, r, limits)
	close(tw.applied)
	tw.mu.Lock()
	if tw.returned {
		tw.mu.Unlock()
		return
	}
	tw.back = make(chan struct{})
	back := tw.back
	tw.mu.Unlock()
	abandon := time.NewTimer(w.cfg.AbandonAfter)
	defer abandon.Stop()
	select {
	case <-back:
		return
	case <-abandon.C:
	}
	tw.mu.Lock()
	if tw.returned {
		tw.mu.Unlock()
		return
	}
	r.rj.abandoned.Store(true)
	tw.mu.Unlock()
	w.log.Warn("handler ignored its cancelled context; abandoning it", "class", r.displayName, "id", r.rj.job.ID, "after", w.cfg.AbandonAfter)
	w.release(r.rj)
	w.wg.Done()
}

// invoke calls the handler and turns a panic into a *PanicError.
func invoke(ctx context.Context, h handlers.Handler, hj *handlers.Job) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(v, "worker.invoke")
		}
	}()
	return h.Handle(ctx, hj)
}

// handlerFrame returns the source location of a handler's function, used as the place of errors that
// carry none.
func handlerFrame(h handlers.Handler) Frame {
	var pc uintptr
	if t, ok := h.(interface{ Target() any }); ok && reflect.ValueOf(t.Target()).Kind() == reflect.Func {
		pc = reflect.ValueOf(t.Target()).Pointer() // the function handlers.Typed calls
	} else if f, ok := h.(handlers.HandlerFunc); ok {
		pc = reflect.ValueOf(f).Pointer()
	} else if m, ok := reflect.TypeOf(h).MethodByName("Handle"); ok {
		pc = m.Func.Pointer()
	}
	fn := runtime.FuncForPC(pc)
	if fn == nil {
		return Frame{}
	}
	file, line := fn.FileLine(fn.Entry())
	return Frame{File: file, Line: line, Function: fn.Name()}
}

// exception applies Worker::handleJobException: fail when this attempt reaches the job's limits or its
// maxExceptions, otherwise release it with the backoff.
func (w *Worker) exception(ctx context.Context, r *jobRun, limits Limits, err error) {
	j := r.rj.job
	r.rj.obs.threw, r.rj.obs.reported = true, true
	// The exception is counted towards maxExceptions even when the tries already fail the job, as
	// handleJobException makes both checks: a job retried later (queue:retry keeps its uuid) meets the
	// count PHP would have left.
	fail := limits.WillExceed(w.version, j.Attempts, w.clock().Unix()) || w.atAttemptsCeiling(j) || errors.As(err, new(damagedPayload))
	if w.maxExceptionsReached(ctx, r) || fail || w.shouldStopRetries(err) {
		w.fail(ctx, r, err)
		return
	}
	w.log.Warn("Exception", "class", r.displayName, "id", j.ID, "attempt", j.Attempts, "error", err.Error())
	r.rj.obs.err = err
	spec, own := r.env.BackoffSpec()
	w.releaseJob(r, time.Duration(BackoffDelay(spec, own, w.cfg.Backoff, j.Attempts))*time.Second)
	w.report(r, EventReleased, "released", nil)
}

// maxExceptionsReached counts one exception under job-exceptions:<uuid> and reports whether the job's
// maxExceptions is reached, forgetting the counter when it is (Laravel 7+).
func (w *Worker) maxExceptionsReached(ctx context.Context, r *jobRun) bool {
	env := r.env
	if env == nil || env.MaxExceptions == nil || env.UUID == "" || !w.cfg.CacheEnabled || !w.version.AtLeast(7, 0) {
		return false
	}
	key := "job-exceptions:" + env.UUID
	n, err := w.cacheIncrement(ctx, key)
	if err != nil {
		w.log.Error("count job exception", "key", key, "error", err)
		return false
	}
	if *env.MaxExceptions <= n {
		if err := w.cacheForget(ctx, key); err != nil {
			w.log.Warn("forget job exception counter", "key", key, "error", err)
		}
		return true
	}
	return false
}

// onTimeout applies Laravel's timeout handler: fail the job when it will exceed its attempts, its
// maxExceptions, or has failOnTimeout; otherwise leave the row reserved (no renewal, no completion) so
// that it is claimed again after retry_after, as it is after PHP kills a worker.
func (w *Worker) onTimeout(ctx context.Context, r *jobRun, limits Limits) {
	j := r.rj.job
	if r.rj.isDone() {
		return // handed back at shutdown
	}
	r.rj.obs.threw = true
	class, msg := TimeoutFailure(w.version, r.displayName)
	fail := limits.WillExceed(w.version, j.Attempts, w.clock().Unix()) || w.atAttemptsCeiling(j)
	if w.maxExceptionsReached(ctx, r) {
		fail = true
	}
	if r.env.FailOnTimeout && w.version.AtLeast(8, 43) {
		fail = true
	}
	if fail {
		w.log.Error("Timed out", "class", r.displayName, "id", j.ID, "attempt", j.Attempts)
		w.fail(ctx, r, newException(class, msg, nil))
		return
	}
	r.rj.mu.Lock()
	r.rj.done = true
	r.rj.mu.Unlock()
	w.log.Warn("Timed out; left reserved until retry_after", "class", r.displayName, "id", j.ID, "attempt", j.Attempts, "retry_after", w.cfg.RetryAfter)
}

// releaseJob puts the job back with a delay: a new row with the same payload and attempts.
func (w *Worker) releaseJob(r *jobRun, delay time.Duration) {
	j := r.rj.job
	secs := int64(delay / time.Second)
	if w.completeLocked(r.rj, "release", func(ctx context.Context) error {
		return w.queue.JobRelease(ctx, j, &laravel.JobReleaseParams{Now: w.clock().Unix(), Delay: secs})
	}, &w.stats.released) {
		w.log.Info("Released", "class", r.displayName, "id", j.ID, "attempt", j.Attempts, "delay", secs)
	}
}

// fail deletes the job and writes its failed_jobs row, then does what Laravel's failed() path does:
// release the unique lock and record the failure in the job's batch.
func (w *Worker) fail(ctx context.Context, r *jobRun, cause error) {
	if r.env != nil && r.cmd == nil && !r.env.IsRaw() {
		if cmd, err := payload.DecodeCommand(r.env, w.keyring); err == nil {
			r.cmd = cmd
		}
	}
	batch, callbacks := w.batchFailure(r, cause)
	hooks := w.failedHooksPush(r, cause)
	done, bare := w.failRow(ctx, r, cause, batch, hooks)
	if !done || r.env == nil {
		return
	}
	if bare {
		callbacks, hooks = nil, nil
	}
	if callbacks != nil && len(*callbacks) > 0 {
		w.log.Info("Batch callbacks queued for PHP", "batch", batch.ID, "callbacks", *callbacks, "class", w.cfg.BatchCompanion, "queue", r.rj.job.Queue)
	}
	if hooks != nil {
		w.log.Info("Failed hooks queued for PHP", "class", r.displayName, "uuid", r.env.UUID, "companion", w.cfg.FailedCompanion, "queue", r.rj.job.Queue)
	}
	w.releaseUniqueLock(ctx, r)
}

// failRow deletes the job and writes its failed_jobs row, and counts the failure in its batch (batch
// nil: none) and inserts the failed-hooks companion (hooks nil: none) in the same transaction, and
// reports whether it did, and whether it did so without the batch count and the companion, which
// the database refused.
func (w *Worker) failRow(ctx context.Context, r *jobRun, cause error, batch *laravel.BatchStep, hooks *laravel.JobPushParams) (done, bare bool) {
	j := r.rj.job
	// Laravel converts the text to UTF-8 (9.2+); invalid bytes become "?" as mb_convert_encoding does.
	text := strings.ToValidUTF8(ExceptionText(cause, r.at), "?")
	uuid := r.uuid()
	failWith := func(ctx context.Context, batch *laravel.BatchStep, hooks *laravel.JobPushParams) error {
		var push []*laravel.JobPushParams
		if hooks != nil {
			push = append(push, hooks)
		}
		if w.cfg.FailedDriver == "null" {
			if push == nil && batch == nil {
				return w.queue.JobDelete(ctx, j)
			}
			_, err := w.queue.JobDeleteAndPush(ctx, j, push, batch)
			return err
		}
		return w.queue.JobFail(ctx, j, &laravel.JobFailParams{
			Connection: w.cfg.Connection, Queue: j.Queue, UUID: uuid, Exception: text,
			FailedAt: w.clock().In(w.cfg.Location), Rewritten: func(change string) { w.log.Warn("failed row rewritten", "id", j.ID, "change", change) },
			Batch: batch, Push: push,
		})
	}
	op := func(ctx context.Context) error {
		err := failWith(ctx, batch, hooks)
		if (batch == nil && hooks == nil) || !refused(ctx, err) {
			return err
		}
		// The batch's count or the failed hooks' job was refused: the job is failed without them, as
		// PHP's Job::fail deletes the job and logs it to failed_jobs whatever its failed() path
		// throws, rather than left reserved to fail the same way after every retry_after.
		if err := failWith(ctx, nil, nil); err != nil {
			return err
		}
		bare = true
		w.log.Error("the job's batch count or failed hooks were refused; the job is failed without them", "class", r.displayName, "id", j.ID, "uuid", uuid, "error", err)
		return nil
	}
	r.rj.obs.err = cause
	if !w.completeLocked(r.rj, "fail", op, &w.stats.failed) {
		return false, false
	}
	w.log.Error("Failed", "class", r.displayName, "id", j.ID, "uuid", uuid, "attempt", j.Attempts,
		"duration", time.Since(r.rj.started), "error", cause.Error())
	w.report(r, EventFailed, "deleted", cause)
	return true, bare
}

// refused reports whether err is the database refusing a statement, which a retry would not change
// (see laravel.Refused), and not the end of ctx.
func refused(ctx context.Context, err error) bool {
	return ctx.Err() == nil && laravel.Refused(err)
}

// succeed completes a job whose handler returned nil (or deleted it): the next chain link is pushed
// with the delete, then the batch records the success and the unique lock is released. counter counts
// the completion.
func (w *Worker) succeed(ctx context.Context, r *jobRun, limits Limits, counter *atomic.Int64) {
	j := r.rj.job
	next, err := w.nextInChain(r)
	if err != nil {
		// PHP throws from dispatchNextJobInChain after handle() succeeded, and retries the job,
		// running its handler again each time; no retry reads the link better.
		w.exception(ctx, r, limits, damagedPayload{err})
		return
	}
	batch, callbacks := w.batchSuccess(r)
	if !w.completeLocked(r.rj, "delete", func(ctx context.Context) error { return w.deleteWithChain(ctx, j, next, batch) }, counter) {
		return
	}
	if next != nil {
		w.stats.chained.Add(1)
		w.observeQueued(next.queue, next.class)
		w.log.Info("Chain continued", "class", r.displayName, "id", j.ID, "next", next.class, "queue", next.queue)
	}
	if !untilProcessing(r.h) {
		w.releaseUniqueLock(ctx, r)
	}
	if callbacks != nil && len(*callbacks) > 0 {
		w.log.Info("Batch callbacks queued for PHP", "batch", batch.ID, "callbacks", *callbacks, "class", w.cfg.BatchCompanion, "queue", j.Queue)
	}
	w.report(r, EventSuccess, "deleted", nil)
	if w.logs(w.jobLevel()) {
		w.log.Log(ctx, w.jobLevel(), "Processed", "class", r.displayName, "id", j.ID, "duration", time.Since(r.rj.started))
	}
}

// completionTimeout bounds one completion, retries included.
const completionTimeout = 60 * time.Second

// completionDeadline hands out a context whose deadline is completionTimeout away, give or take
// completionSlack: one context serves every completion that starts within completionSlack, instead of
// a timer per job. A context is cancelled before its deadline only by StopNow, which gives up every
// completion, so handing it out again is safe.
type completionDeadline struct {
	parent  context.Context // cancelled by StopNow
	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	expires time.Time
}

// completionSlack is how long one completion context is handed out.
const completionSlack = time.Second

// get returns a context with at least completionTimeout-completionSlack left.
func (d *completionDeadline) get() context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if d.parent == nil {
		d.parent = context.Background()
	}
	if d.ctx == nil || now.After(d.expires) {
		if d.cancel != nil {
			// Completions that took the old context may still run until its deadline.
			time.AfterFunc(completionTimeout, d.cancel)
		}
		d.ctx, d.cancel = context.WithTimeout(d.parent, completionTimeout)
		d.expires = now.Add(completionSlack)
	}
	return d.ctx
}

// completeLocked runs one completion of a job, serialized with its renewal, at most once. Deadlocks
// and busy errors are retried; a lost reservation is logged and otherwise ignored (another worker owns
// the row now). It reports whether the completion was applied, and counts it in counter.
func (w *Worker) completeLocked(rj *runningJob, what string, op func(context.Context) error, counter *atomic.Int64) bool {
	return w.completeIn(nil, rj, what, op, counter)
}

// completeIn is completeLocked bounded by ctx instead of completionTimeout (nil: completionTimeout).
func (w *Worker) completeIn(ctx context.Context, rj *runningJob, what string, op func(context.Context) error, counter *atomic.Int64) bool {
	rj.mu.Lock()
	defer rj.mu.Unlock()
	if rj.done {
		return false
	}
	rj.done = true
	if ctx == nil {
		ctx = w.completionCtx.get()
	}
	err := w.applyCompletion(ctx, rj, what, op)
	switch {
	case err == nil:
		counter.Add(1)
		if w.obs != nil {
			rj.obs.outcome.Store(uint32(w.outcomeOf(counter)))
		}
		return true
	case errors.Is(err, laravel.ErrReservationLost):
		w.stats.lost.Add(1)
		rj.obs.outcome.Store(uint32(OutcomeLost))
		w.log.Warn("reservation lost", "action", what, "id", rj.job.ID, "queue", rj.job.Queue)
	default:
		// The row keeps its reservation and is claimed again after retry_after: nothing is lost.
		rj.obs.outcome.Store(uint32(OutcomeError))
		w.unapplied(rj, what, err)
	}
	return false
}

// sameClass compares PHP class names as PHP does: case-insensitively, a leading backslash aside.
func sameClass(a, b string) bool {
	return strings.EqualFold(strings.TrimPrefix(a, `\`), strings.TrimPrefix(b, `\`))
}
