package laravel

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// MarkedReservedAt is the reserved_at value of a finished row that the delete-mark strategy marked
// instead of deleting. It is how a marked row stays invisible to every claimer without any new column:
// Laravel's predicate takes a row when `reserved_at is null and available_at <= now` (false: reserved_at
// is set) or when `reserved_at <= now - retry_after` (false until January 2038). So PHP workers, which
// know nothing of marking, skip marked rows exactly as artisan-go's claims do, and every fenced
// completion of a stale claim finds reserved_at changed and reports ErrReservationLost. The value is the
// largest that fits every dialect's reserved_at column (PostgreSQL's is a signed integer), and a marked
// row lives only until the next sweep.
const MarkedReservedAt = 2147483647

// Sweep tuning of the delete-mark strategy. Marked rows stay in the queue's index until a sweep, and
// every claim's scan passes the marked rows of every worker above its lower bound, so with many workers
// frequent small sweeps (a commit per 128 jobs) cost less than long scans: at 16 workers on MariaDB,
// 128 marks or 250 ms drained about a tenth faster than 512 or a second.
const (
	SweepEvery = 250 * time.Millisecond // a claim sweeps when marked rows are this old
	SweepMarks = 128                    // or when this many rows were marked since the last sweep
	SweepBatch = 1000                   // rows removed per sweep statement
)

// newDeleteMark builds the delete-mark strategy.
func newDeleteMark(c *Conn, p QueueParams) (Queue, error) {
	q := &deleteMark{Fenced: NewFenced(c, p), mark: columnProbe{name: "delete_mark"}}
	q.claimer.c = c
	q.marks = &deleteGroup{run: q.markMany, settled: func() bool { return true }}
	return q, nil
}

// deleteMark marks finished jobs instead of deleting them: the hot path is a one-row autocommit UPDATE
// (see MarkedReservedAt) instead of a locking delete in a transaction, and the marked rows are removed
// in batches by a sweep that claims run every SweepEvery or SweepMarks marks. That sweep deletes the
// rows this queue marked by primary key, so it locks nothing else; JobSweep also looks for rows other
// workers marked and left behind. When the table has a
// delete_mark column (queue:migrate-index --strategy delete-mark adds it, with an index), marking sets
// it too and the sweep finds rows through its index. Releases and failures delete as usual. Until a
// sweep, Laravel's size() counts marked rows.
type deleteMark struct {
	Fenced
	claimer rowClaimer

	mark  columnProbe  // the delete_mark column
	marks *deleteGroup // marks that finish while another runs share its next statement and commit

	mu        sync.Mutex
	marked    []int64 // ids this queue marked since its last sweep
	lastSweep time.Time
	sweeping  atomic.Bool
}

// Strategy returns "delete-mark".
func (q *deleteMark) Strategy() string { return "delete-mark" }

// JobClaim sweeps the rows this queue marked when a sweep is due, then claims up to Limit rows with
// Laravel's predicate, which skips marked rows by itself.
func (q *deleteMark) JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	q.mu.Lock()
	due := len(q.marked) >= SweepMarks || len(q.marked) > 0 && q.C.clock().Sub(q.lastSweep) >= SweepEvery
	q.mu.Unlock()
	if due {
		if err := q.sweepOwn(ctx); err != nil {
			return nil, fmt.Errorf("claim job: %w", err)
		}
	}
	jobs, skipped, err := q.claimer.claim(ctx, p, p.ExcludeIDs, max(p.Limit, 1))
	reportLeft(p, skipped)
	if err != nil {
		return nil, fmt.Errorf("claim job: %w", err)
	}
	return jobs, nil
}

// noteMarked remembers a marked row for the next sweep.
func (q *deleteMark) noteMarked(id int64) {
	q.mu.Lock()
	q.marked = append(q.marked, id)
	q.mu.Unlock()
}

// sweepOwn deletes the rows this queue marked, by primary key and still marked. Rows it cannot delete
// now stay listed for the next sweep.
func (q *deleteMark) sweepOwn(ctx context.Context) error {
	q.mu.Lock()
	ids := q.marked
	q.marked = nil
	q.lastSweep = q.C.clock()
	q.mu.Unlock()
	c := q.C
	for i := 0; i < len(ids); i += SweepBatch {
		chunk := ids[i:min(i+SweepBatch, len(ids))]
		args := make([]any, 0, len(chunk)+1)
		for _, id := range chunk {
			args = append(args, id)
		}
		args = append(args, MarkedReservedAt)
		del := c.rebind("delete from " + c.quote(c.tables.Jobs) + " where id in (" + placeholders(len(chunk)) + ") and reserved_at = ?")
		err := c.retry(ctx, q.Tries, func() error {
			_, err := c.db.ExecContext(ctx, del, args...)
			return c.translate(err)
		})
		if err != nil {
			q.mu.Lock()
			q.marked = append(q.marked, ids[i:]...)
			q.mu.Unlock()
			return fmt.Errorf("sweep marked jobs: %w", err)
		}
	}
	return nil
}

// markSQL returns the fenced statement that marks a finished row.
func (q *deleteMark) markSQL(ctx context.Context) (string, error) {
	withMark, err := q.mark.check(ctx, q.C)
	if err != nil {
		return "", err
	}
	set := "reserved_at = ?"
	if withMark {
		set += ", delete_mark = 1"
	}
	return q.C.rebind("update " + q.C.quote(q.C.tables.Jobs) + " set " + set + " where id = ? and attempts = ? and reserved_at = ?"), nil
}

// JobDelete marks a finished job, fenced on its claim, in one statement and commit with the marks that
// finish while the previous one runs (see deleteGroup).
func (q *deleteMark) JobDelete(ctx context.Context, j *Job) error {
	return q.marks.delete(ctx, j, nil)
}

// JobDeleteAndPush marks a finished job and inserts the new jobs in one transaction, fenced.
func (q *deleteMark) JobDeleteAndPush(ctx context.Context, j *Job, push []*JobPushParams, batch *BatchStep) ([]int64, error) {
	if len(push) == 0 && batch == nil {
		return nil, q.JobDelete(ctx, j)
	}
	upd, err := q.markSQL(ctx)
	if err != nil {
		return nil, fmt.Errorf("delete job %d: %w", j.ID, err)
	}
	ids, err := q.finishAndPush(ctx, j, push, batch, func(tx *sqlx.Tx) error {
		return q.C.execFenced(ctx, tx, upd, MarkedReservedAt, j.ID, j.Attempts, j.ReservedAt)
	})
	if err != nil {
		return nil, err
	}
	q.noteMarked(j.ID)
	return ids, nil
}

// JobSweep removes every marked row: first the ones this queue marked, then, in batches of
// SweepBatch in READ COMMITTED transactions (so the scan locks only the rows it deletes), any that other
// workers marked and left behind. It returns how many rows the table-wide pass removed. Only one sweep
// runs at a time per queue; a call while one runs returns 0 at once.
func (q *deleteMark) JobSweep(ctx context.Context) (int64, error) {
	if !q.sweeping.CompareAndSwap(false, true) {
		return 0, nil
	}
	defer q.sweeping.Store(false)
	if err := q.sweepOwn(ctx); err != nil {
		return 0, err
	}
	withMark, err := q.mark.check(ctx, q.C)
	if err != nil {
		return 0, fmt.Errorf("sweep marked jobs: %w", err)
	}
	c := q.C
	cond, arg := "reserved_at = ?", any(MarkedReservedAt)
	if withMark {
		cond, arg = "delete_mark = ?", any(1)
	}
	del := c.rebind(fmt.Sprintf("delete from %s where id in (select id from %s where %s limit %d)", c.quote(c.tables.Jobs), c.quote(c.tables.Jobs), cond, SweepBatch))
	if c.caps.DeleteLimit {
		// Such a server (MySQL) cannot delete from a table it selects from in a subquery.
		del = c.rebind(fmt.Sprintf("delete from %s where %s limit %d", c.quote(c.tables.Jobs), cond, SweepBatch))
	}
	var total int64
	for {
		var n int64
		err := c.retry(ctx, q.Tries, func() error {
			return c.inTxIsolation(ctx, sql.LevelReadCommitted, func(tx *sqlx.Tx) error {
				res, err := tx.ExecContext(ctx, del, arg)
				if err != nil {
					return err
				}
				n, err = res.RowsAffected()
				return err
			})
		})
		if err != nil {
			return total, fmt.Errorf("sweep marked jobs: %w", err)
		}
		total += n
		if n < SweepBatch {
			return total, nil
		}
	}
}
