package laravel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
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

// TestRefused tells the server's refusals of a statement (a check or not-null constraint, a value too
// long, a missing table) from failures a retry may undo (a statement timeout, a cancelled context), on
// each database, from the driver's own errors.
func TestRefused(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		c := queuetest.Open(t, queuetest.OpenParams(db))
		raw := queuetest.DB(c)
		name := c.Tables().Jobs + "_refusals"
		if _, err := raw.Exec("create table " + name + " (n integer not null check (n > 0), s varchar(4))"); err != nil {
			t.Fatal(err)
		}
		refused := map[string]string{
			"check":     "insert into " + name + " (n) values (0)",
			"not null":  "insert into " + name + " (n) values (null)",
			"no table":  "insert into " + name + "_missing (n) values (1)",
			"no column": "insert into " + name + " (m) values (1)",
		}
		if db.Dialect != "sqlite" { // SQLite keeps a longer string in a varchar
			refused["too long"] = "insert into " + name + " (n, s) values (1, 'longer')"
		}
		for what, stmt := range refused {
			if _, err := raw.Exec(stmt); !laravel.Refused(err) {
				t.Errorf("%s: Refused(%v) = false", what, err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := raw.ExecContext(ctx, "insert into "+name+" (n) values (1)"); err == nil || laravel.Refused(err) {
			t.Errorf("cancelled: Refused(%v), want an error that is not a refusal", err)
		}
		// The sleep outlasts the timeout by far: on a loaded machine the server's timer can fire late,
		// and a sleep that ends first is no timeout.
		timeout := map[string][]string{
			"pgsql": {"set statement_timeout = 1", "select pg_sleep(20)"},
			"mysql": {"set session max_statement_time = 0.001", "select sleep(20)"}, // MariaDB's
		}[db.Dialect]
		if timeout == nil {
			return
		}
		conn, err := raw.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(context.Background(), timeout[0]); err != nil {
			t.Logf("no statement timeout to try: %v", err) // MySQL names it max_execution_time
			return
		}
		rows, err := conn.QueryContext(context.Background(), timeout[1])
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err == nil || laravel.Refused(err) {
			t.Errorf("statement timeout: Refused(%v), want an error that is not a refusal", err)
		}
	})
}
