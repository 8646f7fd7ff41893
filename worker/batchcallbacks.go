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
// queues one job of the companion class Config.BatchCallbacks on the job's queue, which a PHP worker
// runs through Laravel's own callback invocation. Only callbacks the batch has are named; nothing is
// queued when it has none. The companion is queued after the counter update commits: if the process
// dies in between, those callbacks do not run.
func (w *Worker) queueBatchCallbacks(ctx context.Context, r *jobRun, id string, kinds []string, cause error) {
	if len(kinds) == 0 {
		return
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
	if w.cfg.BatchCallbacks == "" {
		w.log.Warn("batch callbacks not run: set worker.batch_callbacks to the PHP companion job class that runs them",
			"batch", id, "callbacks", names)
		return
	}
	cmd := payload.NewObject(w.cfg.BatchCallbacks).Set("batchId", id).Set("callbacks", payload.NewList(names...)).
		Set("exceptionClass", nil).Set("exceptionMessage", nil).Set("tries", int64(1))
	if cause != nil {
		class, msg := exceptionClassMessage(cause)
		cmd.Set("exceptionClass", class).Set("exceptionMessage", msg)
	}
	now := w.clock()
	p, err := w.newJobPayload(cmd, now, 0)
	if err == nil {
		_, err = w.queue.JobPush(ctx, &laravel.JobPushParams{Queue: r.rj.job.Queue, Payload: p, Now: now.Unix(), AvailableAt: now.Unix()})
	}
	if err != nil {
		w.log.Error("queue batch callbacks", "batch", id, "callbacks", names, "error", err)
		return
	}
	w.log.Info("Batch callbacks queued for PHP", "batch", id, "callbacks", names, "class", w.cfg.BatchCallbacks, "queue", r.rj.job.Queue)
}

// exceptionClassMessage names an error as the failed_jobs text does: its PHP class (or Go type) and
// its message.
func exceptionClassMessage(err error) (string, string) {
	if c, ok := err.(phpClasser); ok && c.PHPClass() != "" {
		return c.PHPClass(), err.Error()
	}
	return goTypeName(err), err.Error()
}
