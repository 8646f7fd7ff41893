package laravel

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy is how an operation that failed with a transient error is tried again: up to Tries times
// in all, pausing Pause before the second try and twice as long before each next one, plus up to Pause
// of random jitter so that the transactions that collided do not collide again in step. Every retry in
// artisan-go goes through it: completions and claims inside this package (deadlocks only, briefly) and
// the worker's completions and bookkeeping (TransientRetry).
type RetryPolicy struct {
	Tries int           // attempts in all; below 1 means 1
	Pause time.Duration // the first pause
	// Retry reports whether an error is worth another try; nil means Transient.
	Retry func(error) bool
}

// TransientRetry is the worker's policy for completions and bookkeeping (batch counters, unique
// locks): deadlocks and lock timeouts are tried six times over about 600 ms.
var TransientRetry = RetryPolicy{Tries: 6, Pause: 20 * time.Millisecond}

// Transient reports whether err is a lost race that may succeed when tried again as it is: the server
// rolled the transaction back as a deadlock victim or serialization failure (ErrDeadlock), or a lock
// was not granted in time (ErrBusy).
func Transient(err error) bool { return errors.Is(err, ErrDeadlock) || errors.Is(err, ErrBusy) }

// Refused reports whether the server rejected a statement for what it writes or names, which trying
// it again does not change: a value that does not fit its column, a constraint (a check, a unique or
// foreign key, a trigger that raises), a missing table or column, a privilege. A lost connection, a
// deadlock, a lock or statement timeout and a cancelled statement are not refusals.
func Refused(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrMissingTable) || errors.Is(err, ErrDuplicate) {
		return true
	}
	return mysqlRefused(err) || pgsqlRefused(err) || sqliteRefused(err)
}

// deadlockRetry is the policy of a Conn's own operations: only deadlock victims are tried again, at
// once, since the transaction that won will finish in a moment; a lock timeout has already waited and
// is left to the caller.
func deadlockRetry(tries int) RetryPolicy {
	return RetryPolicy{Tries: tries, Pause: 5 * time.Millisecond, Retry: func(err error) bool { return errors.Is(err, ErrDeadlock) }}
}

// Do runs fn until it succeeds, fails with an error the policy does not retry, or has been tried Tries
// times, and returns its last error. When ctx ends during a pause, that error is joined with ctx's.
func (p RetryPolicy) Do(ctx context.Context, fn func() error) error { return p.do(ctx, fn, nil) }

// do is Do that calls retried before each retry.
func (p RetryPolicy) do(ctx context.Context, fn func() error, retried func()) error {
	again := p.Retry
	if again == nil {
		again = Transient
	}
	var err error
	for i := 0; i < max(p.Tries, 1); i++ {
		if i > 0 {
			if retried != nil {
				retried()
			}
			pause := p.Pause<<(i-1) + time.Duration(rand.Int64N(int64(p.Pause)+1))
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return errors.Join(err, ctx.Err())
			case <-t.C:
			}
		}
		if err = fn(); err == nil || !again(err) {
			return err
		}
	}
	return err
}
