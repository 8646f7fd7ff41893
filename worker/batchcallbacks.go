package worker

import (
	"context"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// Batch callback kinds, as the keys of a batch's options.
const (
	batchThen    = "then"
	batchCatch   = "catch"
	batchFinally = "finally"
)

// queueBatchCallbacks hands a batch's PHP callbacks to PHP. The callbacks are closures serialized in the
// batch's options, which Go cannot run; when this worker's bookkeeping is the one that triggers them
// (the locked counter update that took pending_jobs to 0, the first failure, the last job run), it
// queues one job of the companion class Config.BatchCompanion on the job's queue, which a PHP worker
// runs through Laravel's own callback invocation. Only callbacks the batch has are named; nothing is
// queued when it has none. The companion is queued after the counter update commits: if the process
// dies in between, those callbacks do not run.
func (w *Worker) queueBatchCallbacks(ctx context.Context, r *jobRun, id string, kinds []string, cause error) {
	if len(kinds) == 0 || w.cfg.BatchCompanion == "" {
		return // without a companion, jobs of batches with callbacks are PHP's (BatchCallbacks "php") or their callbacks are skipped ("run")
	}
	b, err := w.conn.BatchFind(ctx, id)
	if err != nil {
		w.log.Error("read batch for its callbacks", "batch", id, "error", err)
		return
	}
	options, _ := payload.Unserialize(b.Options)
	opts, _ := options.(*payload.Array)
	var names []payload.Value
	for _, k := range kinds {
		if cbs, _ := opts.Get(k); !phpFalsy(cbs) {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return
	}
	cmd := payload.NewObject(w.cfg.BatchCompanion).Set("batchId", id).Set("callbacks", payload.NewList(names...)).
		Set("exceptionClass", nil).Set("exceptionMessage", nil).Set("tries", int64(1))
	if cause != nil {
		class, msg := exceptionClassMessage(cause)
		cmd.Set("exceptionClass", class).Set("exceptionMessage", msg)
	}
	if err := w.pushCompanion(ctx, r, cmd); err != nil {
		w.log.Error("queue batch callbacks", "batch", id, "callbacks", names, "error", err)
		return
	}
	w.log.Info("Batch callbacks queued for PHP", "batch", id, "callbacks", names, "class", w.cfg.BatchCompanion, "queue", r.rj.job.Queue)
}

// queueFailedHooks hands the PHP side of a failure to PHP: the chain's catch callbacks and the job
// class's failed() method, which CallQueuedHandler::failed runs after a PHP worker fails a job. It
// queues one job of the companion class Config.FailedCompanion carrying the failed job's data.command
// (serialized or encrypted, as it was). Raw Class@method jobs are left out.
func (w *Worker) queueFailedHooks(ctx context.Context, r *jobRun, cause error) {
	if r.env == nil || r.env.IsRaw() || r.env.Command == "" || r.class == w.cfg.FailedCompanion {
		return
	}
	if w.cfg.FailedCompanion == "" {
		if w.failedWarned.add(r.class) {
			w.log.Warn("a job failed here and no companion runs its PHP failure hooks: if its class has a failed() method, PHP did not run it; copy testdata/laravel/app/Jobs/RunFailedHooks.php into the app and set worker.failed_companion to its class",
				"class", r.displayName)
		}
		return
	}
	class, msg := exceptionClassMessage(cause)
	cmd := payload.NewObject(w.cfg.FailedCompanion).Set("command", r.env.Command).
		Set("exceptionClass", class).Set("exceptionMessage", msg).Set("tries", int64(1))
	if err := w.pushCompanion(ctx, r, cmd); err != nil {
		w.log.Error("queue failed hooks", "class", r.displayName, "uuid", r.env.UUID, "error", err)
		return
	}
	w.log.Info("Failed hooks queued for PHP", "class", r.displayName, "uuid", r.env.UUID, "companion", w.cfg.FailedCompanion, "queue", r.rj.job.Queue)
}

// pushCompanion queues a companion job for PHP workers on the queue of the job that triggered it.
func (w *Worker) pushCompanion(ctx context.Context, r *jobRun, cmd *payload.Object) error {
	now := w.clock()
	p, err := w.newJobPayload(cmd, now, 0)
	if err != nil {
		return err
	}
	_, err = w.queue.JobPush(ctx, &laravel.JobPushParams{Queue: r.rj.job.Queue, Payload: p, Now: now.Unix(), AvailableAt: now.Unix()})
	return err
}

// exceptionClassMessage names an error as the failed_jobs text does: its PHP class and its message.
func exceptionClassMessage(err error) (string, string) {
	return phpClassOf(err), err.Error()
}
