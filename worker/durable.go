package worker

import (
	"context"
	"errors"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
)

// reconnectPause bounds the pause between two tries of a completion kept through a lost connection.
const (
	reconnectFirst = 50 * time.Millisecond
	reconnectMax   = 2 * time.Second
)

// applyCompletion runs a fenced completion (delete, release, fail, return), retrying lost races at
// once. When the connection is lost (the server was restarted, the network cut) the completion is kept:
// it is tried again, still fenced, until it applies, its claim turns out gone, or the job's reservation
// has expired and at least completionTimeout has passed. A job that finished is then not run again
// because its delete was dropped, and with --tries 1 it does not land in failed_jobs as attempted too
// many times.
func (w *Worker) applyCompletion(ctx context.Context, rj *runningJob, what string, op func(context.Context) error) error {
	err := retryTransient(ctx, func() error { return op(ctx) })
	if !passing(ctx, err) {
		return err
	}
	j := rj.job
	limit := max(time.Unix(j.ReservedAt, 0).Add(w.cfg.RetryAfter).Sub(w.clock()), completionTimeout)
	why := "database connection lost"
	if !laravel.ConnectionLost(err) {
		why = "the database did not apply it in time (a lock held long, or a statement timeout)"
	}
	w.log.Warn(why+"; the completion is kept and tried again", "action", what, "id", j.ID, "queue", j.Queue, "error", err, "for_up_to", limit.Round(time.Second))
	w.stats.waiting.Add(1)
	defer w.stats.waiting.Add(-1)
	// Kept until StopNow at the latest: a worker told to stop now does not wait for the database.
	rctx, cancel := context.WithTimeout(w.completionCtx.parent, limit)
	defer cancel()
	pause := reconnectFirst
	for {
		sleepCtx(rctx, pause)
		if rctx.Err() != nil {
			return err
		}
		pause = min(2*pause, reconnectMax)
		err = retryTransient(rctx, func() error { return op(rctx) })
		switch {
		case err == nil:
		case errors.Is(err, laravel.ErrReservationLost):
			// The try the connection broke under may have committed: then the row is gone.
			gone, gerr := w.jobGone(rctx, j.ID)
			if laravel.ConnectionLost(gerr) {
				continue
			}
			if gerr != nil || !gone {
				return err
			}
		case passing(rctx, err):
			continue
		default:
			return err
		}
		w.stats.reapplied.Add(1)
		w.log.Info("completion applied after the connection came back", "action", what, "id", j.ID, "queue", j.Queue)
		return nil
	}
}

// retryDurable runs a bookkeeping step (batch counters, unique locks) as retryTransient does, and also
// through a lost connection, for up to completionTimeout, unless the connection broke while its
// COMMIT was under way: a counter change that may already have committed is not repeated.
func retryDurable(ctx context.Context, fn func() error) error {
	err := retryTransient(ctx, fn)
	if !reconnectable(err) {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), completionTimeout)
	defer cancel()
	return reconnectRetry.Do(rctx, func() error { return retryTransient(rctx, fn) })
}

// reconnectRetry tries a step again while the connection is lost, pausing twice as long each time;
// the caller's context bounds it.
var reconnectRetry = laravel.RetryPolicy{Tries: 16, Pause: reconnectFirst, Retry: reconnectable}

// reconnectable reports whether err is a lost connection that left nothing half-done.
func reconnectable(err error) bool {
	return laravel.ConnectionLost(err) && !errors.Is(err, laravel.ErrCommitUnknown)
}

// passing reports whether a completion failed for a reason that passes, so that it is kept and tried
// again until its reservation runs out: a lost connection, or a statement that waited too long for a
// lock or ran past the server's statement timeout (changing nothing) while ctx went on.
func passing(ctx context.Context, err error) bool {
	return laravel.ConnectionLost(err) || ctx.Err() == nil && (laravel.Transient(err) || laravel.StatementTimeout(err))
}

// unapplied reports a completion that could not be applied. The row keeps its reservation, so
// nothing is lost; when the database refused the completion itself (not the connection), this worker
// stops claiming the row, which would otherwise fail the same way every retry_after.
func (w *Worker) unapplied(rj *runningJob, what string, err error) {
	w.stats.unapplied.Add(1)
	j := rj.job
	if w.stoppingNow() {
		w.log.Error("completion not applied before stopping now: the job's row stays reserved and the job runs again after retry_after", "action", what, "id", j.ID, "queue", j.Queue, "error", err)
		return
	}
	if laravel.ConnectionLost(err) {
		w.log.Error("completion not applied: the database stayed unreachable; the job runs again after retry_after", "action", what, "id", j.ID, "queue", j.Queue, "error", err)
		return
	}
	w.excluded.add(j.ID)
	w.stats.refused.Add(1)
	w.log.Error("COMPLETION REFUSED: the row stays reserved and this worker no longer claims it; fix the cause, then retry or delete it by hand", "action", what, "id", j.ID, "queue", j.Queue, "error", err)
}

// stoppingNow reports whether StopNow was called.
func (w *Worker) stoppingNow() bool {
	select {
	case <-w.now:
		return true
	default:
		return false
	}
}

// returnPrefetched gives back, as soon as the worker is told to stop, the rows a prefetching strategy
// claimed that no job has started on, so that other workers take them now rather than after the
// running jobs finish (or after retry_after, if this worker never finishes).
func (w *Worker) returnPrefetched(ctx context.Context) {
	p, ok := w.queue.(laravel.Prefetcher)
	if !ok {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	err := p.JobReturnPrefetched(rctx)
	if err == nil {
		return
	}
	if !laravel.ConnectionLost(err) {
		w.log.Warn("give back claimed jobs not started", "error", err)
		return
	}
	// The connection is lost (a server restarting, a network cut): the rows are given back once it
	// is back, as long as their reservation holds (past it other workers take them anyway) and until
	// StopNow, while the running jobs finish; otherwise the next worker would take them at their next
	// attempt, and with --tries 1 fail them unrun.
	w.log.Warn("database connection lost; the claimed jobs not started are given back once it is back", "error", err, "for_up_to", w.cfg.RetryAfter)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		rctx, cancel := context.WithTimeout(w.completionCtx.parent, w.cfg.RetryAfter)
		defer cancel()
		pause := reconnectFirst
		for laravel.ConnectionLost(err) && rctx.Err() == nil {
			sleepCtx(rctx, pause)
			pause = min(2*pause, reconnectMax)
			err = p.JobReturnPrefetched(rctx)
		}
		if err != nil {
			w.log.Warn("give back claimed jobs not started: not given back; they run again after retry_after", "error", err)
		}
	}()
}

// jobGoner is implemented by queues that can say whether a jobs row is gone (every strategy, through
// laravel.Fenced).
type jobGoner interface {
	JobGone(ctx context.Context, p laravel.JobGoneParams) (bool, error)
}

// jobGone reports whether the row of job id is gone; false when the queue cannot say.
func (w *Worker) jobGone(ctx context.Context, id int64) (bool, error) {
	g, ok := w.queue.(jobGoner)
	if !ok {
		return false, nil
	}
	return g.JobGone(ctx, laravel.JobGoneParams{ID: id})
}
