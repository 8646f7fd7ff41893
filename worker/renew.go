package worker

import (
	"context"
	"errors"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
)

// startRenewer starts the goroutine that keeps long jobs reserved: a job whose reservation is older than
// half of retry_after gets reserved_at moved to now, so that neither another artisan-go worker nor a PHP
// worker takes it as expired. Renewal holds the job's mutex, so it never races the job's completion.
// The returned function stops it.
func (w *Worker) startRenewer() func() {
	ctx, cancel := context.WithCancel(context.Background())
	half := int64(w.cfg.RetryAfter/time.Second) / 2
	tick := min(time.Second, w.cfg.RetryAfter/4)
	tick = max(tick, 50*time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticks, stop := w.renewTicker(tick)
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticks:
				w.renewDue(half)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// renewDue renews every running job whose reservation is at least half a retry_after old.
func (w *Worker) renewDue(half int64) {
	w.mu.Lock()
	due := make([]*runningJob, 0, len(w.running))
	now := w.clock().Unix()
	for rj := range w.running {
		due = append(due, rj)
	}
	w.mu.Unlock()
	for _, rj := range due {
		if w.stoppingNow() {
			return
		}
		rj.mu.Lock()
		if !rj.done && !rj.lost && now-rj.job.ReservedAt >= max(half, 1) {
			// Not cut short by stopping, only by StopNow: a renewal cancelled at its commit could leave
			// the row and j.ReservedAt (the completion's fence) disagreeing, and the job run again.
			rctx, cancel := context.WithTimeout(w.completionCtx.parent, claimTimeout)
			err := w.queue.JobRenew(rctx, rj.job, now)
			cancel()
			switch {
			case err == nil:
				w.stats.renewed.Add(1)
			case errors.Is(err, laravel.ErrReservationLost):
				rj.lost = true
				w.log.Warn("reservation lost", "action", "renew", "id", rj.job.ID, "queue", rj.job.Queue)
			default:
				w.log.Warn("renew reservation", "id", rj.job.ID, "queue", rj.job.Queue, "error", err)
			}
		}
		rj.mu.Unlock()
	}
}

// tickerFunc starts a ticker of period d and returns its channel and the function that stops it. The
// renewer's is time.NewTicker's; tests substitute ticks of their own, sent when they move their clock.
type tickerFunc func(d time.Duration) (ticks <-chan time.Time, stop func())

// realTicker is a time.Ticker.
func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
