package laravel

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/jmoiron/sqlx"
)

// openGated opens a fresh SQLite file with a short busy timeout and a table t.
func openGated(t *testing.T) *Conn {
	t.Helper()
	db := testenv.SQLite(t)
	c, err := Open(context.Background(), OpenParams{Dialect: SQLite, DSN: db.DSN, BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.db.Exec("create table t (id integer primary key, v integer not null)"); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSQLiteWriteGateIsLeftEveryWay runs a write of every shape, ending every way a write ends, each
// followed by a write on another connection of the pool: a gate left held makes that one wait out
// the busy timeout and fail.
func TestSQLiteWriteGateIsLeftEveryWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openGated(t)
	next := 0
	write := func() error {
		next++
		_, err := c.db.ExecContext(ctx, "insert into t (id, v) values (?, 0)", 1000+next)
		return err
	}
	for _, w := range []struct {
		name string
		run  func() error
	}{
		{"exec", func() error { _, err := c.db.ExecContext(ctx, "insert into t (id, v) values (1, 1)"); return err }},
		{"failing exec", func() error { _, err := c.db.ExecContext(ctx, "insert into t (id, v) values (1, 1)"); return err }},
		{"query with returning", func() error {
			rows, err := c.db.QueryContext(ctx, "update t set v = v + 1 returning id")
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			return rows.Close()
		}},
		{"query with returning, one row read", func() error {
			var id int
			return c.db.QueryRowContext(ctx, "update t set v = v + 1 where id = 1 returning id").Scan(&id)
		}},
		{"failing query", func() error {
			_, err := c.db.QueryContext(ctx, "update missing set v = 1 returning id")
			return err
		}},
		{"commit", func() error {
			return c.inTxIsolation(ctx, 0, func(tx *sqlx.Tx) error {
				_, err := tx.ExecContext(ctx, "update t set v = 2")
				return err
			})
		}},
		{"rollback", func() error {
			return c.inTxIsolation(ctx, 0, func(tx *sqlx.Tx) error {
				if _, err := tx.ExecContext(ctx, "update t set v = 3"); err != nil {
					return err
				}
				return errors.New("undo")
			})
		}},
		{"failing statement in a transaction", func() error {
			return c.inTxIsolation(ctx, 0, func(tx *sqlx.Tx) error {
				_, err := tx.ExecContext(ctx, "insert into t (id, v) values (1, 1)")
				return err
			})
		}},
	} {
		_ = w.run()
		if err := write(); err != nil {
			t.Fatalf("a write after %s: %v", w.name, err)
		}
	}
}

// TestSQLiteWriteGateWaits checks the two sides of the gate: a read runs beside a transaction that
// holds it, and a write that waits longer than the busy timeout fails as SQLite's busy error does.
func TestSQLiteWriteGateWaits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openGated(t)
	tx, err := c.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "insert into t (id, v) values (1, 1)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.db.QueryRowContext(ctx, "select count(*) from t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("read beside an open write: %d rows, %v; want 0 rows, no error", n, err)
	}
	_, err = c.db.ExecContext(ctx, "insert into t (id, v) values (2, 2)")
	if !errors.Is(c.translate(err), ErrBusy) {
		t.Fatalf("write held past the busy timeout: %v, want ErrBusy", err)
	}
	// A write that starts while the transaction runs goes through once it commits.
	var wg sync.WaitGroup
	wg.Add(1)
	var werr error
	go func() {
		defer wg.Done()
		_, werr = c.db.ExecContext(ctx, "insert into t (id, v) values (3, 3)")
	}()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if werr != nil {
		t.Fatalf("write after the commit: %v", werr)
	}
}

func TestIsWrite(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]bool{
		"select 1": false, "  SELECT id from t": false, "(select 1)": false, "explain select 1": false,
		"update t set v = 1 returning id": true, "delete from t": true, "insert into t values (1)": true,
		"with x as (select 1) delete from t": true, "pragma journal_mode = wal": true,
	} {
		if got := isWrite(q); got != want {
			t.Errorf("isWrite(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestSQLiteWritesCounted counts a write statement outside a transaction and a whole transaction as
// one write each, and reads as none.
func TestSQLiteWritesCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openGated(t)
	before := c.Stats().Writes
	if _, err := c.db.ExecContext(ctx, "insert into t (id, v) values (1, 0)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.db.GetContext(ctx, &n, "select count(*) from t"); err != nil {
		t.Fatal(err)
	}
	if err := c.InTx(ctx, func(tx *sqlx.Tx) error {
		for _, id := range []int{2, 3} {
			if _, err := tx.ExecContext(ctx, "insert into t (id, v) values (?, 0)", id); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var ids []int
	if err := c.db.SelectContext(ctx, &ids, "update t set v = v + 1 returning id"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stats().Writes - before; got != 3 || len(ids) != 3 {
		t.Fatalf("writes counted %d (want 3: an insert, a transaction, an update … returning); update returned %d rows", got, len(ids))
	}
}
