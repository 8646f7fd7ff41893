package worker

import (
	"context"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
)

type nopObserver struct{}

func (nopObserver) Claimed(string, int, time.Duration, error)                   {}
func (nopObserver) JobStarted(ctx context.Context, _ *JobEvent) context.Context { return ctx }
func (nopObserver) JobFinished(context.Context, *JobEvent)                      {}

// BenchmarkObserverHooks is what the worker's side of the Observer hooks costs a job (the events it
// builds and the calls), with an observer that does nothing.
func BenchmarkObserverHooks(b *testing.B) {
	w := &Worker{obs: nopObserver{}, cfg: Defaults()}
	job := &laravel.Job{ID: 1, Queue: "default", Attempts: 1, AvailableAt: 1}
	rj := &runningJob{job: job}
	r := &jobRun{rj: rj, class: `App\Jobs\A`, displayName: `App\Jobs\A`}
	b.ReportAllocs()
	for b.Loop() {
		rj.obs = observed{}
		w.obs.Claimed("default", 1, time.Millisecond, nil)
		ctx := w.observeStart(bg, r)
		rj.obs.outcome.Store(uint32(w.outcomeOf(&w.stats.processed)))
		w.observeFinish(ctx, r)
	}
}
