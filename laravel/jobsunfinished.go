package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// JobUnfinishedExistsParams selects the rows JobUnfinishedExists looks at.
type JobUnfinishedExistsParams struct {
	// Queue limits the look to one queue; empty looks at every queue.
	Queue string
}

// JobUnfinishedExists reports whether the jobs table still holds a job whose completion is not
// committed: a row that is neither deleted nor marked finished by the delete-mark strategy (see
// MarkedReservedAt). A worker's or a benchmark's drain is over, with every completion committed, once
// it returns false. It reads one row at most, so it can be polled often while workers drain.
func (c *Conn) JobUnfinishedExists(ctx context.Context, p *JobUnfinishedExistsParams) (bool, error) {
	where, args := p.where()
	// In primary-key order, so that PostgreSQL walks the index, whose entries of deleted rows the first
	// walk marks dead and later ones skip (0.1 ms at 20,000 deleted rows where a scan of the table
	// takes 1.2 ms), and InnoDB its clustered index.
	var id int64
	err := c.db.QueryRowContext(ctx, c.d.rebind("select id from "+c.d.quote(c.tables.Jobs)+" where "+where+" order by id limit 1"), args...).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look for unfinished jobs: %w", c.translate(err))
	}
	return true, nil
}

// JobUnfinishedCount counts the jobs JobUnfinishedExists looks for: the queue's depth, waiting and
// running.
func (c *Conn) JobUnfinishedCount(ctx context.Context, p *JobUnfinishedExistsParams) (int64, error) {
	where, args := p.where()
	var n int64
	if err := c.db.QueryRowContext(ctx, c.d.rebind("select count(*) from "+c.d.quote(c.tables.Jobs)+" where "+where), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count unfinished jobs: %w", c.translate(err))
	}
	return n, nil
}

// where is the predicate of an unfinished job, with ? placeholders, and its arguments.
func (p *JobUnfinishedExistsParams) where() (string, []any) {
	if p != nil && p.Queue != "" {
		return "queue = ? and (reserved_at is null or reserved_at <> ?)", []any{p.Queue, MarkedReservedAt}
	}
	return "(reserved_at is null or reserved_at <> ?)", []any{MarkedReservedAt}
}
