package worker

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
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

// reportRecorder records, per class, whether each finished job's exception is one PHP's worker reports.
type reportRecorder struct {
	nopObserver
	mu       sync.Mutex
	reported map[string][]bool
}

func (o *reportRecorder) JobFinished(_ context.Context, e *JobEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reported[e.Class] = append(o.reported[e.Class], e.Reported)
}

// TestReportedExceptions: an exception the handler throws is one PHP's worker reports to the
// application's handler, when the job is released and when it fails (two tries), and so is the
// attempts check's; a failure the handler asks for is not.
func TestReportedExceptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	boom := errors.New("boom")
	f.reg.Register(`App\Jobs\Throws`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return boom }))
	f.reg.Register(`App\Jobs\Fails`, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error { j.Fail(boom); return nil }))
	f.reg.Register(`App\Jobs\Exceeded`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
	f.push(t, "default", envelope(t, `App\Jobs\Throws`, "", nil))
	f.push(t, "default", envelope(t, `App\Jobs\Fails`, "", nil))
	f.push(t, "default", envelope(t, `App\Jobs\Exceeded`, `"maxTries":1`, nil))
	if _, err := queuetest.DB(f.Conn).Exec(`update ` + queuetest.Q(f.Conn, f.Conn.Tables().Jobs) + ` set attempts = 1 where payload like '%Exceeded%'`); err != nil {
		t.Fatal(err)
	}
	rec := &reportRecorder{reported: map[string][]bool{}}
	w := f.worker(t, func(c *Config) { c.Tries = 2; c.StopWhenEmpty = true })
	w.obs = rec
	if err := runAll(w); err != nil {
		t.Fatal(err)
	}
	want := map[string][]bool{`App\Jobs\Throws`: {true, true}, `App\Jobs\Fails`: {false}, `App\Jobs\Exceeded`: {true}}
	if !reflect.DeepEqual(rec.reported, want) {
		t.Fatalf("reported = %v, want %v", rec.reported, want)
	}
}
