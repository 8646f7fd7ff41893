package laravel

import (
	"context"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
)

// newDeleteRetry builds the delete-retry strategy.
func newDeleteRetry(c *Conn, p QueueParams) (Queue, error) {
	return &deleteRetry{Fenced: NewFenced(c, p)}, nil
}

// deleteRetry is Laravel's own claim: in one transaction, select the first available row with the pop
// lock (plain FOR UPDATE or SKIP LOCKED by server version; BEGIN IMMEDIATE on SQLite), then mark it
// reserved with attempts computed in Go. Completions are fenced and retried on deadlock.
type deleteRetry struct {
	Fenced
}

// Strategy returns "delete-retry".
func (q *deleteRetry) Strategy() string { return "delete-retry" }

// JobClaim claims one row per transaction, up to Limit, so each transaction stays as short as PHP's.
func (q *deleteRetry) JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	exclude := slices.Clone(p.ExcludeIDs)
	var out []*Job
	for len(out) < max(p.Limit, 1) {
		j, err := q.claimOne(ctx, p, exclude)
		if err != nil {
			if len(out) > 0 {
				return out, nil // the claimed rows must reach the worker; the next call sees the error
			}
			return nil, fmt.Errorf("claim job: %w", err)
		}
		if j == nil {
			break
		}
		out = append(out, j)
		exclude = append(exclude, j.ID)
	}
	return out, nil
}

func (q *deleteRetry) claimOne(ctx context.Context, p *JobClaimParams, exclude []int64) (*Job, error) {
	c := q.C
	sel, args := c.AvailableJobsSQL(p, exclude, 1, c.lock)
	upd := c.rebind("update " + c.quote(c.tables.Jobs) + " set reserved_at = ?, attempts = ? where id = ?")
	var claimed *Job
	err := c.InTx(ctx, func(tx *sqlx.Tx) error {
		rows, err := tx.QueryxContext(ctx, sel, args...)
		if err != nil {
			return err
		}
		jobs, err := ScanJobs(rows)
		if err != nil || len(jobs) == 0 {
			return err
		}
		j := jobs[0]
		j.Attempts = min(j.Attempts+1, c.MaxAttempts())
		j.ReservedAt = p.Now
		if _, err := tx.ExecContext(ctx, upd, j.ReservedAt, j.Attempts, j.ID); err != nil {
			return err
		}
		claimed = j
		return nil
	})
	return claimed, err
}
