package worker

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// Observer is told what a Worker does, for metrics, traces and Laravel Pulse. Its methods are called
// from the worker's goroutines, concurrently, on the path of every job: they must be safe for
// concurrent use and quick (count, and hand anything slow to a goroutine of their own).
type Observer interface {
	// Claimed is called after each claim call on one queue, with the rows it returned, how long the
	// call took and its error.
	Claimed(queue string, rows int, took time.Duration, err error)
	// JobStarted is called when a job that has a handler starts processing (Laravel's JobProcessing
	// event, before the attempts check). The context it returns is the handler's.
	JobStarted(ctx context.Context, e *JobEvent) context.Context
	// JobFinished is called once for each claimed job the worker processed, after its completion was
	// applied, whether it started or not (a job left for PHP, moved, or with an unreadable payload
	// never starts: e.Started is zero), and for each row a claim passed over for PHP (outcome
	// OutcomeLeftForPHP, Claimed and Finished the same time). ctx is what JobStarted returned, or the
	// worker's context.
	JobFinished(ctx context.Context, e *JobEvent)
}

// QueuedObserver is an Observer that is also told of the jobs the worker pushes onto a queue (the next
// link of a chain), as Laravel raises JobQueued for them. Observers that do not implement it are not
// told.
type QueuedObserver interface {
	// JobQueued is called once the push is committed, with the connection and queue pushed onto and
	// the job's class.
	JobQueued(connection, queue, class string)
}

// Outcome is what became of a claimed job.
type Outcome uint8

// Outcomes, as JobEvent.Outcome reports them.
const (
	// OutcomeNone: no completion was applied; the row stays reserved until retry_after. A timed-out
	// job that is not failed ends so, as under PHP.
	OutcomeNone Outcome = iota
	OutcomeProcessed
	OutcomeDeleted    // the handler deleted it without the success path
	OutcomeReleased   // put back on its queue: by the handler, or after an exception (JobEvent.Err)
	OutcomeFailed     // written to failed_jobs
	OutcomeLeftForPHP // handed back untouched for PHP workers
	OutcomeMoved      // moved to the queue PHP works
	OutcomeReturned   // given back at shutdown
	OutcomeLost       // the completion found the reservation taken by another worker
	OutcomeError      // the completion failed; the row is claimed again after retry_after
)

var outcomeNames = [...]string{"none", "processed", "deleted", "released", "failed", "left_for_php", "moved", "returned", "lost", "error"}

// String returns the outcome's snake_case name, used as a metric label.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// JobEvent describes one job for an Observer. It is only valid during the call.
type JobEvent struct {
	ID          int64
	Connection  string
	Queue       string
	Class       string // commandName, or the class of a raw job; "" when the payload is unreadable
	DisplayName string // what Laravel's resolveName returns: displayName, else the payload's job key
	Attempts    int
	AvailableAt int64     // Unix seconds: when the row became available
	Claimed     time.Time // when the worker took it from its queue
	Started     time.Time // when processing started; zero for a job that never started
	Finished    time.Time // set for JobFinished
	Outcome     Outcome   // set for JobFinished
	// Err is the exception for a job released after one or failed, nil otherwise.
	Err error
	// Threw says the handler threw (returned an error, panicked or timed out), which decided the
	// outcome; a job failed by its handler (Fail) or before it ran (attempts exceeded) did not.
	Threw bool
	// Reported says PHP's worker would hand Err to the application's exception handler (its log):
	// an exception thrown out of the job's processing (the handler's, a damaged payload's, the
	// attempts check's), not a timeout (PHP's worker kills itself) nor a failure the handler chose.
	Reported bool
	// Envelope is the payload as read; nil when it could not be read.
	Envelope *payload.Envelope
	// Handler is where the job's handler is defined, the place Err is reported at when it carries
	// none (see Throwables); zero when no handler ran.
	Handler Frame
}

// Config returns the options the worker runs with, New's defaults filled in.
func (w *Worker) Config() Config { return w.cfg }

// Slots returns how many jobs are in flight and how many can be at once.
func (w *Worker) Slots() (busy, total int) { return len(w.slots), cap(w.slots) }

// Queue returns the queue the worker claims from.
func (w *Worker) Queue() laravel.Queue { return w.queue }

// observed is what the observer hooks keep on a running job.
type observed struct {
	outcome atomic.Uint32 // an Outcome
	err     error         // the exception of a release or failure; written before the completion
	threw   bool          // the handler threw or timed out
	// reported: PHP's worker would hand err to the application's exception handler (see
	// JobEvent.Reported)
	reported bool
	ctx      context.Context
	started  time.Time
	ev       *JobEvent // built at the start, completed at the finish
}

// outcomeOf maps a completion's counter to its outcome.
func (w *Worker) outcomeOf(counter *atomic.Int64) Outcome {
	switch counter {
	case &w.stats.processed:
		return OutcomeProcessed
	case &w.stats.deleted:
		return OutcomeDeleted
	case &w.stats.released:
		return OutcomeReleased
	case &w.stats.failed:
		return OutcomeFailed
	case &w.stats.left:
		return OutcomeLeftForPHP
	case &w.stats.moved:
		return OutcomeMoved
	case &w.stats.returned:
		return OutcomeReturned
	}
	return OutcomeNone
}

// event describes r for the observer, in the one JobEvent the job's hooks share.
func (w *Worker) event(r *jobRun) *JobEvent {
	j, e := r.rj.job, r.rj.obs.ev
	if e == nil {
		e = &JobEvent{}
		r.rj.obs.ev = e
	}
	*e = JobEvent{
		ID: j.ID, Connection: w.cfg.Connection, Queue: j.Queue, Class: r.class, DisplayName: r.displayName,
		Attempts: j.Attempts, AvailableAt: j.AvailableAt, Claimed: r.rj.started, Started: r.rj.obs.started,
		Envelope: r.env, Handler: r.at,
	}
	return e
}

// observeStart tells the observer that r starts, and returns the handler's context.
func (w *Worker) observeStart(ctx context.Context, r *jobRun) context.Context {
	if w.obs == nil {
		return ctx
	}
	r.rj.obs.started = time.Now()
	ctx = w.obs.JobStarted(ctx, w.event(r))
	r.rj.obs.ctx = ctx
	return ctx
}

// observeFinish tells the observer how r ended.
func (w *Worker) observeFinish(ctx context.Context, r *jobRun) {
	if r == nil {
		return
	}
	o := Outcome(r.rj.obs.outcome.Load())
	e := w.event(r)
	e.Finished, e.Outcome, e.Threw = time.Now(), o, r.rj.obs.threw
	if o == OutcomeReleased || o == OutcomeFailed {
		e.Err = r.rj.obs.err
	}
	e.Reported = r.rj.obs.reported && e.Err != nil
	if r.rj.obs.ctx != nil {
		ctx = r.rj.obs.ctx
	}
	w.obs.JobFinished(ctx, e)
}

// Observers returns one Observer that calls each non-nil one in turn, or nil when there is none.
func Observers(list ...Observer) Observer {
	var m multiObserver
	for _, o := range list {
		if o != nil {
			m = append(m, o)
		}
	}
	switch len(m) {
	case 0:
		return nil
	case 1:
		return m[0]
	}
	return m
}

type multiObserver []Observer

func (m multiObserver) Claimed(queue string, rows int, took time.Duration, err error) {
	for _, o := range m {
		o.Claimed(queue, rows, took, err)
	}
}

func (m multiObserver) JobStarted(ctx context.Context, e *JobEvent) context.Context {
	for _, o := range m {
		ctx = o.JobStarted(ctx, e)
	}
	return ctx
}

func (m multiObserver) JobFinished(ctx context.Context, e *JobEvent) {
	for _, o := range m {
		o.JobFinished(ctx, e)
	}
}

// JobQueued tells each observer that implements QueuedObserver.
func (m multiObserver) JobQueued(connection, queue, class string) {
	for _, o := range m {
		if q, ok := o.(QueuedObserver); ok {
			q.JobQueued(connection, queue, class)
		}
	}
}

// observeQueued tells the observer, when it listens, of a job pushed onto queue.
func (w *Worker) observeQueued(queue, class string) {
	if q, ok := w.obs.(QueuedObserver); ok {
		q.JobQueued(w.cfg.Connection, queue, class)
	}
}
