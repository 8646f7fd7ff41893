package laravel

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// JobMoveUnclaimed moves rows that no claim of this worker holds (rows a claim passed over, see
// JobClaimParams.Skip) to queue target, byte for byte, their attempts as they were: in one transaction
// it locks them, deletes those still as jobs read them (same attempts and reserved_at: no claim took
// them since) and inserts each again on target, available at at. It returns the rows it moved; a row
// a claim took first is that claim's to run, and is left as it is. No attempt is ever spent, so a
// worker killed at any moment leaves each row where it was or moved.
func (c *Conn) JobMoveUnclaimed(ctx context.Context, jobs []*Job, target string, at int64) ([]*Job, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	ids := make([]any, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	in := "(" + placeholders(len(jobs)) + ")"
	lock := c.rebind("select id, attempts, reserved_at from " + c.quote(c.tables.Jobs) + " where id in " + in + c.forUpdate())
	var moved []*Job
	err := c.retry(ctx, DefaultDeleteRetries, func() error {
		moved = moved[:0]
		return c.InTx(ctx, func(tx *sqlx.Tx) error {
			type state struct {
				attempts int
				reserved sql.NullInt64
			}
			current := map[int64]state{}
			rows, err := tx.QueryContext(ctx, lock, ids...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				var s state
				if err := rows.Scan(&id, &s.attempts, &s.reserved); err != nil {
					rows.Close()
					return err
				}
				current[id] = s
			}
			if err := rows.Close(); err != nil {
				return err
			}
			var del []any
			for _, j := range jobs {
				if s, ok := current[j.ID]; ok && s.attempts == j.Attempts && s.reserved.Int64 == j.ReservedAt && s.reserved.Valid == (j.ReservedAt != 0) {
					moved = append(moved, j)
					del = append(del, j.ID)
				}
			}
			if len(del) == 0 {
				return nil
			}
			q := c.rebind("delete from " + c.quote(c.tables.Jobs) + " where id in (" + placeholders(len(del)) + ")")
			if _, err := tx.ExecContext(ctx, q, del...); err != nil {
				return err
			}
			for _, j := range moved {
				p := &JobPushParams{Queue: target, Payload: j.Payload, Attempts: j.Attempts, Now: at, AvailableAt: at}
				if _, err := c.insertJob(ctx, tx, p); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("move %d jobs to queue %q: %w", len(jobs), target, err)
	}
	return moved, nil
}
