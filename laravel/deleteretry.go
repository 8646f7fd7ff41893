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
// lock (plain FOR UPDATE or SKIP LOCKED by server version), then mark it reserved with attempts
// computed in Go; where the server has UPDATE … RETURNING (PostgreSQL, SQLite), the same select and
// update as one statement from the queue's lower bound on id, as batch's claim, unless ForceForUpdate
// asks for Laravel's lock. Completions are fenced and retried on deadlock. On MySQL and MariaDB the
// transaction runs at READ COMMITTED, from the head of the queue as PHP's.
type deleteRetry struct {
	Fenced
}

// Strategy returns "delete-retry".
func (q *deleteRetry) Strategy() string { return "delete-retry" }

// JobClaim claims one row per transaction, up to Limit, so each transaction stays as short as PHP's.
// Rows p.Skip passes over count towards Limit: a backlog of them costs one call a round trip each
// only up to Limit.
func (q *deleteRetry) JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	exclude := slices.Clone(p.ExcludeIDs)
	var out, skipped []*Job
	defer func() { reportLeft(p, skipped) }()
	for len(out)+len(skipped) < max(p.Limit, 1) {
		j, pass, err := q.claimOne(ctx, p, exclude)
		skipped = append(skipped, pass...)
		if err != nil {
			if len(out) > 0 {
				return out, nil // the claimed rows must reach the worker; the next call sees the error
			}
			return nil, fmt.Errorf("claim job: %w", err)
		}
		if j == nil && len(pass) == 0 {
			break
		}
		if j != nil {
			out = append(out, j)
			exclude = append(exclude, j.ID)
		}
		for _, s := range pass {
			exclude = append(exclude, s.ID)
		}
	}
	return out, nil
}

// claimOne claims the first available row, or returns the rows p.Skip passed over on the way.
func (q *deleteRetry) claimOne(ctx context.Context, p *JobClaimParams, exclude []int64) (*Job, []*Job, error) {
	c := q.C
	if c.caps.UpdateReturning && c.lock == c.claimLock {
		// The same row, lock and update in one statement (PostgreSQL, SQLite): on PostgreSQL two
		// round trips where the select-then-update transaction takes four, the commit sent once the
		// row is known (see claimStatement). The statement starts at the queue's lower bound on id
		// and, while the queue has a backlog, walks the primary key from it (see idFloors): from the
		// head, PostgreSQL planned it as a read of every row of the queue and a sort, for each job.
		jobs, skipped, err := (&rowClaimer{c: c}).claim(ctx, p, exclude, 1)
		if err != nil || len(jobs) == 0 {
			return nil, skipped, err
		}
		return jobs[0], skipped, nil
	}
	sel, args := c.AvailableJobsSQL(p, exclude, 1, c.lock)
	upd := c.rebind("update " + c.quote(c.tables.Jobs) + " set reserved_at = ?, attempts = ? where id = ?")
	var claimed *Job
	var skipped []*Job
	// The claim's own isolation (READ COMMITTED on MySQL and MariaDB): the same row is selected and
	// locked as under PHP's REPEATABLE READ, without the gap locks that make claimers wait for each
	// other and for inserts, and deadlock with them, as workers are added.
	err := c.inTxIsolation(ctx, c.caps.ClaimIsolation, func(tx *sqlx.Tx) error {
		claimed, skipped = nil, nil
		rows, err := tx.QueryxContext(ctx, sel, args...)
		if err != nil {
			return err
		}
		jobs, err := ScanJobs(rows)
		if err != nil || len(jobs) == 0 {
			return err
		}
		if jobs, skipped = splitSkipped(p, jobs); len(jobs) == 0 {
			return nil // passed over: locked until the commit, never updated
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
	if err != nil {
		return nil, nil, err
	}
	return claimed, skipped, nil
}

// ClaimsInParallel reports whether Laravel's own lock clause skips rows other claims hold: with plain
// FOR UPDATE (ForceForUpdate, or an old server) parallel claims only queue up behind one another.
func (q *deleteRetry) ClaimsInParallel() bool { return hasSkipLocked(q.C.lock) }
