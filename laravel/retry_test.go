package laravel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
)

func TestRetryPolicy(t *testing.T) {
	t.Parallel()
	deadlock := fmt.Errorf("%w: 1213", laravel.ErrDeadlock)
	busy := fmt.Errorf("%w: 1205", laravel.ErrBusy)
	other := errors.New("syntax error")
	p := laravel.RetryPolicy{Tries: 3, Pause: time.Microsecond}
	for _, tc := range []struct {
		name  string
		errs  []error // what each call returns, the last one repeated
		calls int
		want  error
	}{
		{"success at once", []error{nil}, 1, nil},
		{"deadlock then success", []error{deadlock, nil}, 2, nil},
		{"busy then success", []error{busy, busy, nil}, 3, nil},
		{"transient to the end", []error{deadlock}, 3, laravel.ErrDeadlock},
		{"not transient", []error{other}, 1, other},
		{"deadlock then not transient", []error{deadlock, other}, 2, other},
	} {
		calls := 0
		err := p.Do(context.Background(), func() error {
			calls++
			return tc.errs[min(calls, len(tc.errs))-1]
		})
		if calls != tc.calls || !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: %d calls, err %v; want %d calls, err %v", tc.name, calls, err, tc.calls, tc.want)
		}
	}

	// Retry narrows what is tried again; a context that ends during a pause ends the retries.
	deadlockOnly := laravel.RetryPolicy{Tries: 5, Pause: time.Microsecond, Retry: func(err error) bool { return errors.Is(err, laravel.ErrDeadlock) }}
	calls := 0
	if err := deadlockOnly.Do(context.Background(), func() error { calls++; return busy }); calls != 1 || !errors.Is(err, laravel.ErrBusy) {
		t.Errorf("deadlock-only policy on busy: %d calls, err %v; want 1 call", calls, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	slow := laravel.RetryPolicy{Tries: 5, Pause: time.Hour}
	err := slow.Do(ctx, func() error { calls++; cancel(); return deadlock })
	if calls != 1 || !errors.Is(err, context.Canceled) || !errors.Is(err, laravel.ErrDeadlock) {
		t.Errorf("cancelled during the pause: %d calls, err %v; want 1 call, the deadlock and the cancellation", calls, err)
	}
	if !laravel.Transient(deadlock) || !laravel.Transient(busy) || laravel.Transient(other) || laravel.Transient(laravel.ErrReservationLost) {
		t.Error("Transient: want deadlocks and busy errors only")
	}
}
