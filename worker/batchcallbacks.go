package worker

import (
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// companionTries is the tries of the companion jobs that run PHP callbacks and failed() hooks, with
// maxExceptions 1: a hook that throws is failed, never run again, but an attempt spent without running
// (the row claimed by a Go worker, which has no handler for it, and killed before it handed the row
// back) does not fail the hooks unrun, as tries 1 did.
const companionTries = int64(3)

// Batch callback kinds, as the keys of a batch's options.
const (
	batchThen    = "then"
	batchCatch   = "catch"
	batchFinally = "finally"
	// batchProgress callbacks run at every success (10.37.2+) and at each failure of a batch that
	// allows failures, there before batchFailureKind's (12.32+); both before then, catch and finally.
	batchProgress    = "progress"
	batchFailureKind = "failure"
)

// batchCallbacksCommand is the command of the companion that hands a batch's PHP callbacks to PHP, for
// the callbacks of the given kinds its options (PHP-serialized) hold, and their names; nil when it
// holds none of them or no companion is configured. The callbacks are closures serialized in the
// options, which Go cannot run; when this worker's bookkeeping is the one that triggers them (the
// locked counter update that took pending_jobs to 0, the first failure, the last job run), one job of
// the companion class Config.BatchCompanion is queued on the job's queue, in the transaction that
// updates the counters, and a PHP worker runs it through Laravel's own callback invocation.
func (w *Worker) batchCallbacksCommand(id string, options []byte, kinds []string, cause error) (*payload.Object, []payload.Value) {
	if len(kinds) == 0 || w.cfg.BatchCompanion == "" {
		return nil, nil
	}
	o, _ := payload.Unserialize(options)
	opts, _ := o.(*payload.Array)
	var names []payload.Value
	for _, k := range kinds {
		if cbs, _ := opts.Get(k); !phpFalsy(cbs) {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	cmd := payload.NewObject(w.cfg.BatchCompanion).Set("batchId", id).Set("callbacks", payload.NewList(names...)).
		Set("exceptionClass", nil).Set("exceptionMessage", nil).Set("tries", companionTries).Set("maxExceptions", int64(1))
	if cause != nil {
		class, msg := exceptionClassMessage(cause)
		cmd.Set("exceptionClass", class).Set("exceptionMessage", msg)
	}
	return cmd, names
}

// failedHooksPush hands the PHP side of a failure to PHP: the chain's catch callbacks and the job
// class's failed() method, which CallQueuedHandler::failed runs after a PHP worker fails a job. It is
// the row of one job of the companion class Config.FailedCompanion carrying the failed job's
// data.command (serialized or encrypted, as it was), to insert in the transaction that fails the job,
// so that a worker killed in between neither leaves a failed job whose hooks never run nor runs them
// twice; nil for none. Raw Class@method jobs are left out.
func (w *Worker) failedHooksPush(r *jobRun, cause error) *laravel.JobPushParams {
	if r.env == nil || r.env.IsRaw() || r.env.Command == "" || r.class == w.cfg.FailedCompanion {
		return nil
	}
	if w.cfg.FailedCompanion == "" {
		if w.failedWarned.add(r.class) {
			w.log.Warn("a job failed here and no companion runs its PHP failure hooks: if its class has a failed() method, PHP did not run it; copy testdata/laravel/app/Jobs/RunFailedHooks.php into the app and set worker.failed_companion to its class",
				"class", r.displayName)
		}
		return nil
	}
	class, msg := exceptionClassMessage(cause)
	cmd := payload.NewObject(w.cfg.FailedCompanion).Set("command", r.env.Command).
		Set("exceptionClass", class).Set("exceptionMessage", msg).Set("tries", companionTries).Set("maxExceptions", int64(1))
	push, err := w.companionPush(r, cmd)
	if err != nil {
		w.log.Error("queue failed hooks", "class", r.displayName, "uuid", r.env.UUID, "error", err)
		return nil
	}
	return push
}

// companionPush is the row of a companion job on the queue of the job that triggered it.
func (w *Worker) companionPush(r *jobRun, cmd *payload.Object) (*laravel.JobPushParams, error) {
	now := w.clock()
	p, err := w.newJobPayload(cmd, now, 0)
	if err != nil {
		return nil, err
	}
	return &laravel.JobPushParams{Queue: r.rj.job.Queue, Payload: p, Now: now.Unix(), AvailableAt: now.Unix()}, nil
}

// exceptionClassMessage names an error as the failed_jobs text does: its PHP class and its message.
func exceptionClassMessage(err error) (string, string) {
	return phpClassOf(err), err.Error()
}
