package interop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
)

// uniqueHandler is a handler of App\Jobs\Unique, whose uniqueId() returns its key property: it tells
// the worker the same id, so that the worker can release the lock PHP took at dispatch.
type uniqueHandler struct{ handlers.Handler }

// UniqueID returns the job's key, as App\Jobs\Unique::uniqueId does.
func (uniqueHandler) UniqueID(job *handlers.Job) string {
	v, _ := job.Command.Get("key")
	s, _ := v.(string)
	return s
}

// intProp reads an integer property of the job's command (0 when absent or not an integer).
func intProp(job *handlers.Job, name string) int {
	if job.Command == nil {
		return 0
	}
	v, _ := job.Command.Get(name)
	switch n := v.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// throwsFirst fails the attempts up to the command's property n, as App\Jobs\Flaky and
// App\Jobs\RetryUntil do.
func throwsFirst(prop string) func(*handlers.Job) error {
	return func(job *handlers.Job) error {
		if job.Attempts <= intProp(job, prop) {
			return fmt.Errorf("%s attempt %d", job.Class, job.Attempts)
		}
		return nil
	}
}

// registerMirrors registers Go handlers that behave as the PHP classes of testdata/laravel do, and
// record what they saw with runner "go", except the classes named. Listeners, notifications, mailables and closures are left
// to PHP.
func (s *side) registerMirrors(except ...string) {
	register := func(class string, h handlers.Handler) {
		if !slices.Contains(except, class) {
			s.reg.Register(class, h)
		}
	}
	for _, class := range []string{`App\Jobs\Plain`, `App\Jobs\Secret`, `App\Jobs\WithModel`, `App\Jobs\Typed`} {
		register(class, s.record(nil))
	}
	register(`App\Jobs\Noop`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
	register(`App\Jobs\Flaky`, s.record(throwsFirst("failTimes")))
	register(`App\Jobs\RetryUntil`, s.record(throwsFirst("failTimes")))
	register(`App\Jobs\Failing`, s.record(func(job *handlers.Job) error {
		v, _ := job.Command.Get("reason")
		return fmt.Errorf("%v", v)
	}))
	register(`App\Jobs\RawHandler`, s.record(nil))
	register(`App\Jobs\Releasing`, s.record(func(job *handlers.Job) error {
		if job.Attempts == 1 {
			job.Release(time.Duration(intProp(job, "releaseDelay")) * time.Second)
		}
		return nil
	}))
	register(`App\Jobs\Unique`, uniqueHandler{s.record(nil)})
	register(`App\Jobs\Slow`, handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
		v, _ := job.Command.Get("seconds")
		secs, _ := v.(float64)
		select {
		case <-time.After(time.Duration(secs * float64(time.Second))):
		case <-ctx.Done():
			return ctx.Err()
		}
		return s.record(nil).Handle(ctx, job)
	}))
	// Chain links and batch members throw when their fail property is true.
	for _, class := range []string{`App\Jobs\ChainLink`, `App\Jobs\BatchMember`} {
		register(class, s.record(func(job *handlers.Job) error {
			if v, _ := job.Command.Get("fail"); v == true {
				return errors.New(job.Class + " fails")
			}
			return nil
		}))
	}
}
