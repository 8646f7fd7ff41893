package laravel

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// CleanupStatus is what holds back the server's removal of deleted jobs rows. A long transaction
// keeps a snapshot that may still see them, so PostgreSQL's vacuum and InnoDB's purge leave them in
// place, and every claim's index scan wades through them: a queue that churns slows down for as long
// as that transaction stays open.
type CleanupStatus struct {
	OldestPID   int64         // the server process (PostgreSQL) or connection id (MySQL) of the oldest open transaction; 0 for none
	OldestAge   time.Duration // how long it has been open
	OldestState string        // what it is doing ("idle in transaction", "RUNNING", ...)
	// DeadRows is how many removed row versions wait for clean-up: the jobs table's dead tuples on
	// PostgreSQL, InnoDB's history list length (every table) on MySQL and MariaDB.
	DeadRows     int64
	DeadRowsKind string
	End          string // the statement that ends the oldest transaction
	// AutovacuumOff names what keeps PostgreSQL's autovacuum away from the jobs table, "" when
	// nothing does: the server setting "autovacuum", or the table's "autovacuum_enabled".
	AutovacuumOff string
}

// Cleanup reads the cleanup status of the server behind c; nil on SQLite, where nothing holds
// deleted rows back.
func (c *Conn) Cleanup(ctx context.Context) (*CleanupStatus, error) {
	s, err := c.d.cleanup(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("read the oldest transaction and dead rows: %w", c.translate(err))
	}
	return s, nil
}

// AutovacuumDeadRowsWarning is how many dead tuples a PostgreSQL jobs table that autovacuum never
// visits may hold before the doctor's note about it becomes a warning.
const AutovacuumDeadRowsWarning = 10000

// diagnoseCleanup adds a finding for a transaction open longer than p.LongTransaction, with its
// process and the rows waiting for clean-up, and one for a jobs table that autovacuum never visits.
func (c *Conn) diagnoseCleanup(ctx context.Context, p DoctorParams, add func(code string, sev Severity, fix, format string, args ...any)) error {
	if p.LongTransaction <= 0 {
		return nil
	}
	s, err := c.Cleanup(ctx)
	if err != nil {
		// Reading other sessions' transactions takes a privilege a worker's user may lack (PROCESS on
		// MySQL): say so, and go on with the other checks.
		add("long-transaction-unknown", SeverityNote, "grant the user PROCESS (MySQL, MariaDB) or pg_read_all_stats (PostgreSQL) to see them",
			"open transactions could not be read: %v", err)
		return nil
	}
	if s == nil {
		return nil
	}
	// Off is a note on a table with few deleted rows (a team may vacuum it from cron), and a warning
	// once they pile up.
	sev := SeverityNote
	if s.DeadRows >= AutovacuumDeadRowsWarning {
		sev = SeverityWarning
	}
	switch s.AutovacuumOff {
	case "autovacuum":
		add("autovacuum-off", sev, "turn it on: ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf(); (or VACUUM the table every minute from cron)",
			"the server runs with autovacuum = off: deleted jobs rows are never removed, so every claim scans more of them and the queue slows down for good (%s: %d)", s.DeadRowsKind, s.DeadRows)
	case "autovacuum_enabled":
		add("autovacuum-off", sev, "ALTER TABLE "+c.tables.Jobs+" RESET (autovacuum_enabled);",
			"the table %s has autovacuum_enabled off: deleted jobs rows are never removed, so every claim scans more of them and the queue slows down for good (%s: %d)", c.tables.Jobs, s.DeadRowsKind, s.DeadRows)
	}
	if s.OldestPID == 0 || s.OldestAge < p.LongTransaction {
		return nil
	}
	add("long-transaction", SeverityWarning, "end it ("+s.End+") and fix the client that leaves it open; a statement or idle-in-transaction timeout on the server bounds such transactions",
		"a transaction (pid %d, %s) has been open for %v: deleted jobs rows cannot be removed while it runs, so claims scan more and more of them (%s: %d)",
		s.OldestPID, s.OldestState, s.OldestAge.Round(time.Second), s.DeadRowsKind, s.DeadRows)
	return nil
}

// HoldSnapshot opens a REPEATABLE READ transaction on its own connection and reads the jobs table in
// it, so that the server keeps the snapshot (and every row version it may see) until release is
// called: the long transaction that queue:bench --long-tx runs beside the workers, as a report or a
// forgotten console session would. On SQLite it holds nothing.
func (c *Conn) HoldSnapshot(ctx context.Context) (release func() error, err error) {
	if !c.caps.RowLocks {
		return func() error { return nil }, nil
	}
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("hold a snapshot: %w", c.translate(err))
	}
	// Its own connection, without the pool's idle transaction timeout (see idleTxTimeout), closed
	// when released rather than given back to the pool so.
	discard := func() error {
		// ErrBadConn makes database/sql close the connection instead of pooling it.
		if err := conn.Raw(func(any) error { return driver.ErrBadConn }); !errors.Is(err, driver.ErrBadConn) {
			return conn.Close()
		}
		return nil
	}
	if c.idleGuard.Load() {
		if _, err := conn.ExecContext(ctx, c.d.idleTxOffSQL()); err != nil {
			_ = discard()
			return nil, fmt.Errorf("hold a snapshot: %w", c.translate(err))
		}
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		_ = discard()
		return nil, fmt.Errorf("hold a snapshot: %w", c.translate(err))
	}
	var n int64
	if err := tx.QueryRowContext(ctx, "select count(*) from "+c.d.quote(c.tables.Jobs)).Scan(&n); err != nil {
		_ = tx.Rollback()
		_ = discard()
		return nil, fmt.Errorf("hold a snapshot: %w", c.translate(err))
	}
	return func() error { return errors.Join(tx.Rollback(), discard()) }, nil
}
