package laravel

import (
	"context"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
)

// markMany marks finished jobs whose claims (id, attempts, reserved_at) still hold, in groups of at
// most maxGroup rows, each group one statement where the server says which rows an UPDATE changed
// (UPDATE … RETURNING), otherwise one transaction that locks and reads the rows first. It remembers
// the marked rows for the next sweep and returns the jobs whose claims were gone. Deadlocks are
// retried.
func (q *deleteMark) markMany(ctx context.Context, jobs []*Job) ([]*Job, error) {
	withMark, err := q.mark.check(ctx, q.C)
	if err != nil {
		return nil, fmt.Errorf("delete %d jobs: %w", len(jobs), err)
	}
	set := "reserved_at = ?"
	if withMark {
		set += ", delete_mark = 1"
	}
	c := q.C
	var lost []*Job
	for chunk := range slices.Chunk(jobs, maxGroup) {
		var marked map[int64]bool
		err := c.retry(ctx, q.Tries, func() error {
			if c.caps.UpdateReturning {
				var err error
				marked, err = c.markFencedRows(ctx, c.db, chunk, set)
				return c.translate(err)
			}
			return c.InTx(ctx, func(tx *sqlx.Tx) error {
				var err error
				marked, err = c.markFencedRows(ctx, tx, chunk, set)
				return err
			})
		})
		if err != nil {
			return lost, fmt.Errorf("delete %d jobs: %w", len(chunk), err)
		}
		for id := range marked {
			q.noteMarked(id)
		}
		lost = append(lost, lostJobs(chunk, marked)...)
	}
	return lost, nil
}

// markFencedRows sets set (with MarkedReservedAt as its argument) on the jobs whose claims still hold
// and returns the ids it changed. Without UPDATE … RETURNING, ex must be a transaction.
func (c *Conn) markFencedRows(ctx context.Context, ex sqlx.ExtContext, jobs []*Job, set string) (map[int64]bool, error) {
	where, args := fencedRowsWhere(jobs)
	table := c.d.quote(c.tables.Jobs)
	if c.caps.UpdateReturning {
		rows, err := ex.QueryContext(ctx, c.d.rebind("update "+table+" set "+set+where+" returning id"), append([]any{MarkedReservedAt}, args...)...)
		if err != nil {
			return nil, err
		}
		return scanIDSet(rows)
	}
	rows, err := ex.QueryContext(ctx, c.d.rebind("select id from "+table+where+" for update"), args...)
	if err != nil {
		return nil, err
	}
	marked, err := scanIDSet(rows)
	if err != nil || len(marked) == 0 {
		return marked, err
	}
	ids := []any{MarkedReservedAt}
	for id := range marked {
		ids = append(ids, id)
	}
	_, err = ex.ExecContext(ctx, c.d.rebind("update "+table+" set "+set+" where id in ("+placeholders(len(marked))+")"), ids...)
	return marked, err
}
