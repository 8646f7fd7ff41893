package laravel

import (
	"context"
	"database/sql"
)

// Execer is a handle rows can be written through: *sql.DB, *sql.Tx, *sql.Conn and sqlx's handles all
// implement it, so a job can be queued inside the caller's own transaction.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// JobTable is a jobs table in one dialect, written through a handle the caller holds rather than a
// Conn's pool. Laravel's own queue writes rows the same way; dispatch uses it to join the caller's
// transaction. It is safe for concurrent use.
type JobTable struct {
	d      dialect
	insert string
}

// NewJobTable returns the jobs table named table (a plain SQL identifier; "" means "jobs") of
// the dialect d. An unknown dialect or a malformed name gives an error wrapping ErrInvalid.
func NewJobTable(d Dialect, table string) (*JobTable, error) {
	impl, err := dialectFor(d)
	if err != nil {
		return nil, err
	}
	t := Tables{Jobs: table}.withDefaults()
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return newJobTable(impl, t.Jobs), nil
}

// jobRow is the insert's arguments in dialect d. An available_at past what the column holds (a
// backoff or delay of many years) is written as the column's largest, which is as good as never, rather
// than refused: a refused release would leave its row reserved, to be run again after retry_after.
func jobRow(d dialect, p *JobPushParams) []any {
	at := p.AvailableAt
	if limit := d.maxTimestamp(); limit > 0 && at > limit {
		at = limit
	}
	return []any{p.Queue, p.Attempts, nil, at, p.Now, string(p.Payload)}
}

func newJobTable(d dialect, table string) *JobTable {
	cols := []string{"queue", "attempts", "reserved_at", "available_at", "created_at", "payload"}
	return &JobTable{d: d, insert: d.rebind("insert into " + d.quote(table) + " (" + quoteAll(d, cols) + ") values (" + placeholders(len(cols)) + ")")}
}

// JobInsert inserts one row as Laravel's DatabaseQueue::buildDatabaseRecord does (reserved_at NULL,
// the payload byte for byte) through ex and returns its id. The driver's error is returned as it is.
func (t *JobTable) JobInsert(ctx context.Context, ex Execer, p *JobPushParams) (int64, error) {
	return t.d.insertID(ctx, ex, t.insert, jobRow(t.d, p))
}

// Pool is the connection's own pool as an Execer, for a statement that commits on its own (a job
// dispatched outside the caller's transaction).
func (c *Conn) Pool() Execer { return c.db }
