package worker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

// TestJobEvents checks the events a job's run reports, in Laravel's order: starting, then success
// (deleted or released by the handler), released_after_exception, or failed (deleted, with the class and
// message) followed by success when the handler failed its job itself and returned.
func TestJobEvents(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var mu sync.Mutex
		var got []string
		f.reg.Register(`App\Jobs\Ok`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
		f.reg.Register(`App\Jobs\Throws`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return errors.New("boom") }))
		f.reg.Register(`App\Jobs\Fails`, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error {
			j.Fail(errors.New("refused"))
			return nil
		}))
		f.reg.Register(`App\Jobs\FailsThenThrows`, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error {
			j.Fail(errors.New("refused"))
			return errors.New("after failing")
		}))
		f.reg.Register(`App\Jobs\ReleasesThenThrows`, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error {
			j.Release(0)
			return errors.New("after releasing")
		}))
		f.reg.Register(`App\Jobs\WithPHPMiddleware`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
		cfg := Defaults()
		cfg.Tries, cfg.Timeout = 2, 0
		w, err := New(Params{Queue: f.Queue, Conn: f.Conn, Registry: f.reg, Config: cfg, Clock: f.clock.Now,
			Events: func(e RunEvent) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, strings.Join([]string{e.Job, e.Status, e.Result, e.Exception, e.Message}, " "))
			}})
		if err != nil {
			t.Fatal(err)
		}
		for _, class := range []string{`App\Jobs\Ok`, `App\Jobs\Fails`, `App\Jobs\Throws`, `App\Jobs\FailsThenThrows`, `App\Jobs\ReleasesThenThrows`} {
			f.push(t, "default", envelope(t, class, "", nil))
			runOnce(t, w)
			f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs)) // the released ones too
		}
		// The name PHP prints (JobName::resolve): a numeric displayName as written, an empty one or "0"
		// the job key; a payload that reads as no job prints nothing.
		for _, name := range []string{"123", `""`, `"0"`} {
			p := strings.Replace(string(envelope(t, `App\Jobs\Ok`, "", nil)), `"displayName":"App\\Jobs\\Ok"`, `"displayName":`+name, 1)
			f.push(t, "default", []byte(p))
			runOnce(t, w)
		}
		f.push(t, "default", []byte(`{"job":`))
		runOnce(t, w)
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
		// A job with middleware only PHP applies is left to PHP before it starts: no event.
		mw := payload.NewList(payload.NewObject(`App\Http\Middleware\Custom`))
		f.push(t, "default", envelope(t, `App\Jobs\WithPHPMiddleware`, "", map[string]payload.Value{"middleware": mw}))
		runOnce(t, w)
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
		// So is a job whose models cannot be checked (their table is not there).
		f.push(t, "default", envelope(t, `App\Jobs\WithPHPMiddleware`, "", map[string]payload.Value{"invoice": modelID(`App\Models\Invoice`, int64(1))}))
		runOnce(t, w)
		if w.Stats().LeftForPHP != 2 {
			t.Errorf("stats %+v: want the job with PHP middleware and the one with unchecked models left", w.Stats())
		}
		want := []string{
			`App\Jobs\Ok starting   `, `App\Jobs\Ok success deleted  `,
			`App\Jobs\Fails starting   `, `App\Jobs\Fails failed deleted RuntimeException refused`, `App\Jobs\Fails success deleted  `,
			`App\Jobs\Throws starting   `, `App\Jobs\Throws released_after_exception released  `,
			// PHP's exception path follows a job that failed or released itself and then threw: no success.
			`App\Jobs\FailsThenThrows starting   `, `App\Jobs\FailsThenThrows failed deleted RuntimeException refused`,
			`App\Jobs\ReleasesThenThrows starting   `,
			`123 starting   `, `123 success deleted  `,
			`Illuminate\Queue\CallQueuedHandler@call starting   `, `Illuminate\Queue\CallQueuedHandler@call success deleted  `,
			`Illuminate\Queue\CallQueuedHandler@call starting   `, `Illuminate\Queue\CallQueuedHandler@call success deleted  `,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestQueuePausedEvents reports, from Laravel 13.26, a queue the worker sees paused, as PHP's worker
// raises WorkerQueuePaused (queue:work prints a line for it); before 13.26 nothing.
func TestQueuePausedEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	if err := f.Conn.CachePut(bg, pausedPrefix+"database:default", "b:1;", time.Hour); err != nil {
		t.Fatal(err)
	}
	for version, want := range map[string]string{"13.26": "paused default", "13.25": ""} {
		var mu sync.Mutex
		var got []string
		cfg := Defaults()
		cfg.LaravelVersion, cfg.MaxTime, cfg.Sleep = version, 200*time.Millisecond, 20*time.Millisecond
		w, err := New(Params{Queue: f.Queue, Conn: f.Conn, Registry: f.reg, Config: cfg, Clock: f.clock.Now,
			Events: func(e RunEvent) { mu.Lock(); defer mu.Unlock(); got = append(got, e.Status+" "+e.Queue) }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: events %q, want %q", version, got, want)
		}
	}
}
