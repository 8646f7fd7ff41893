package worker

import (
	"context"
	"log/slog"
	"strings"

	"github.com/artisan-go/artisan-go/laravel"
)

// NoHandlerClass is the exception class a job fails with under the "fail" policy for classes without a
// Go handler.
const NoHandlerClass = `ArtisanGo\Worker\NoHandlerException`

// unhandled applies the policy for a job whose class has no Go handler. Such a job is never run and
// never lost: "leave" hands the row back untouched (attempt undone) and remembers its id so this worker
// does not claim it again while PHP workers can; "move:<queue>" pushes the exact payload onto another
// queue in the transaction that deletes this row; "fail" fails it into failed_jobs.
func (w *Worker) unhandled(ctx context.Context, r *jobRun) {
	j := r.rj.job
	policy := w.cfg.Unhandled
	if r.class != "" && (r.class == w.cfg.BatchCompanion || r.class == w.cfg.FailedCompanion) {
		policy = UnhandledLeave // it only ever runs under PHP
	}
	switch {
	case strings.HasPrefix(policy, UnhandledMove):
		target := strings.TrimPrefix(policy, UnhandledMove)
		now := w.clock().Unix()
		push := &laravel.JobPushParams{Queue: target, Payload: j.Payload, Attempts: max(j.Attempts-1, 0), Now: now, AvailableAt: now}
		if w.completeLocked(r.rj, "move", func(ctx context.Context) error {
			_, err := w.queue.JobDeleteAndPush(ctx, j, []*laravel.JobPushParams{push}, nil)
			return err
		}, &w.stats.moved) {
			w.log.Info("Moved (no Go handler)", "class", r.displayName, "id", j.ID, "from", j.Queue, "to", target)
		}
	case policy == UnhandledFail:
		w.fail(ctx, r, newException(NoHandlerClass, "No Go handler is registered for "+r.class+"; register one, or run artisan-go with unhandled: leave so PHP workers run it.", nil))
	default:
		w.leave(r, "no Go handler")
	}
}

// leave hands a claimed row back untouched (reservation and attempt undone) for PHP workers, and
// remembers its id so that this worker does not claim it again.
func (w *Worker) leave(r *jobRun, why string) {
	j := r.rj.job
	again := w.leftBefore.seen(j.ID)
	if again {
		w.stats.leftAgain.Add(1) // claimed again after the claims forgot it (see leftChurn)
	}
	// Remember the id before handing the row back, so no claim in between takes it again.
	if w.excluded.add(j.ID) && w.leaveWarned.CompareAndSwap(false, true) {
		w.log.Warn("more jobs are left for PHP than this worker remembers; it may claim some of them again and again. Run PHP workers on these queues, or set unhandled to move:<queue>",
			"remembered", w.cfg.ExcludeLimit)
	}
	if w.completeLocked(r.rj, "leave for PHP", func(ctx context.Context) error {
		return w.queue.JobReturn(ctx, []*laravel.Job{j})
	}, &w.stats.left) {
		// The first row of each class and reason at info; the others, which beside PHP's workers are
		// many (a line per row), and rows left again, at debug.
		level := slog.LevelDebug
		if !again && w.leftLogged.add(r.class+"\x00"+why) {
			level = slog.LevelInfo
		}
		w.log.Log(context.Background(), level, "Left for PHP ("+why+")", "class", r.displayName, "id", j.ID, "queue", j.Queue)
	}
}
