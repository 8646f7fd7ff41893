package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
)

// unknownClaimWait bounds how long rows of a claim whose COMMIT went unanswered are given back for.
const unknownClaimWait = 2 * time.Minute

// returnUnknownClaim gives back, once the database answers again, the rows a claim reserved in a
// transaction whose COMMIT was sent but never answered. If it committed, the rows are reserved for a
// worker that never got them, and would wait for retry_after with an attempt used up (with tries 1, a
// job that never ran would fail); if it did not, the fenced return finds no claim and does nothing.
// xid is the claim transaction's id where the server can say whether it committed (0 elsewhere).
func (c *Conn) returnUnknownClaim(err error, jobs []*Job, xid int64) {
	if len(jobs) == 0 || !errors.Is(err, ErrCommitUnknown) {
		return
	}
	// Until the return is done, this Conn's claims leave the rows alone: if the COMMIT did not happen
	// and a claim here took them again within the same second, the fenced return (second-granular)
	// would take them from under that claim.
	c.unknownMu.Lock()
	if c.unknown == nil {
		c.unknown = map[int64]bool{}
	}
	for _, j := range jobs {
		c.unknown[j.ID] = true
	}
	c.unknownMu.Unlock()
	c.returning.Add(1)
	go func() {
		defer func() {
			c.unknownMu.Lock()
			for _, j := range jobs {
				delete(c.unknown, j.ID)
			}
			c.unknownMu.Unlock()
			c.returned.Add(1)
			c.returning.Add(-1)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), unknownClaimWait)
		defer cancel()
		// A lock wait that timed out (MySQL's innodb_lock_wait_timeout) means the claim's transaction
		// is still open on the server: wait for it again.
		again := RetryPolicy{Tries: 16, Pause: 50 * time.Millisecond, Retry: func(err error) bool { return ConnectionLost(err) || errors.Is(err, ErrBusy) }}
		_ = again.Do(ctx, func() error { return c.returnAfterClaim(ctx, jobs, xid) })
	}()
}

// returnAfterClaim gives back the rows of a claim whose COMMIT went unanswered, fenced as JobReturn
// does, once that claim's transaction has ended on the server. The lost connection is known here
// before the server is done with it: the COMMIT may still be on its way, or waiting for the server to
// read it. The rows are therefore read with a lock first, which waits for the claim's transaction to
// commit or roll back; the fence is then checked against what it left. A fenced UPDATE alone would not
// wait on PostgreSQL: the rows' versions from before the claim do not match the fence, so it passes
// them by, finds nothing to return, and the COMMIT that follows leaves them reserved.
//
// The fence is second-granular: if the claim did not commit, another worker may have claimed the rows
// since, within the same second and with the same attempts, and the return would take them from under
// that claim. Where the server says whether the claim's transaction (xid) committed, a claim that
// did not is left alone.
func (c *Conn) returnAfterClaim(ctx context.Context, jobs []*Job, xid int64) error {
	ids := make([]any, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	lock := c.rebind("select id from " + c.quote(c.tables.Jobs) + " where id in (" + placeholders(len(ids)) + ") order by id" + c.forUpdate())
	ret := c.returnFencedSQL()
	err := c.retry(ctx, DefaultDeleteRetries, func() error {
		return c.inTxIsolation(ctx, c.caps.ClaimIsolation, func(tx *sqlx.Tx) error {
			rows, err := tx.QueryContext(ctx, lock, ids...)
			if err != nil {
				return err
			}
			if _, err := scanIDSet(rows); err != nil {
				return err
			}
			if xid != 0 && c.xactStatusSQL != "" {
				var status sql.NullString
				if err := tx.QueryRowContext(ctx, c.xactStatusSQL, xid).Scan(&status); err != nil {
					return err
				}
				switch status.String {
				case "aborted":
					return nil // nothing was claimed; rows reserved now are another claim's
				case "in progress":
					// It holds none of these rows (or the lock would have waited): try again later.
					return fmt.Errorf("the claim's transaction %d is still in progress: %w", xid, ErrBusy)
				}
			}
			for _, j := range jobs {
				// No row: the claim did not commit, or another worker has the row now.
				if _, err := tx.ExecContext(ctx, ret, j.ID, j.Attempts, j.ReservedAt); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("return %d jobs of an unanswered claim: %w", len(jobs), err)
	}
	// The rows are claimable again: the next claims start low enough to take them first.
	c.floors.lower(jobs)
	return nil
}

// ReturningClaims reports how many claims whose COMMIT went unanswered are still having their rows
// given back: rows that may become claimable any moment, so a worker that stops when the queue is
// empty waits for them.
func (c *Conn) ReturningClaims() int64 { return c.returning.Load() }

// ReturnedClaims counts the returns of such claims that have finished: a claim that found nothing
// while one finished may have missed its rows.
func (c *Conn) ReturnedClaims() int64 { return c.returned.Load() }

// withUnknown returns exclude with the ids of rows being given back after an unanswered COMMIT, and
// the lowest of those (0 when there are none): a claim that leaves them out must not move its queue's
// bound above them (see idFloors.claimed), or they would wait below it for a probe once given back.
func (c *Conn) withUnknown(exclude []int64) (ids []int64, lowest int64) {
	c.unknownMu.Lock()
	defer c.unknownMu.Unlock()
	if len(c.unknown) == 0 {
		return exclude, 0
	}
	out := slices.Clone(exclude)
	for id := range c.unknown {
		out = append(out, id)
		if lowest == 0 || id < lowest {
			lowest = id
		}
	}
	return out, lowest
}
