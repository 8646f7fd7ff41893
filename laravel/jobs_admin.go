package laravel

import (
	"context"
	"database/sql"
	"fmt"
)

// JobClearParams names the queue JobClear empties.
type JobClearParams struct {
	Queue string
}

// JobClear deletes every row of the queue, reserved ones included, in one statement, as
// DatabaseQueue::clear does for queue:clear, and returns how many it deleted.
func (c *Conn) JobClear(ctx context.Context, p *JobClearParams) (int64, error) {
	res, err := c.db.ExecContext(ctx, c.rebind("delete from "+c.quote(c.tables.Jobs)+" where queue = ?"), p.Queue)
	if err != nil {
		return 0, fmt.Errorf("clear queue %s: %w", p.Queue, c.translate(err))
	}
	return res.RowsAffected()
}

// QueueSizesParams names the queue QueueSizes counts, and the clock.
type QueueSizesParams struct {
	Queue string
	Now   int64 // Unix seconds, the worker's clock
}

// QueueSizes are the counts queue:monitor shows for one queue: Size as DatabaseQueue::size counts it
// (every row), and the pendingSize, delayedSize, reservedSize and creationTimeOfOldestPendingJob of
// Laravel 12.19+.
type QueueSizes struct {
	Size, Pending, Delayed, Reserved int64
	// OldestPending is the available_at of the oldest pending job; 0 when none is pending.
	OldestPending int64
}

// QueueSizes counts one queue in one statement.
func (c *Conn) QueueSizes(ctx context.Context, p *QueueSizesParams) (*QueueSizes, error) {
	q := c.rebind("select count(*)," +
		" coalesce(sum(case when reserved_at is null and available_at <= ? then 1 else 0 end), 0)," +
		" coalesce(sum(case when reserved_at is null and available_at > ? then 1 else 0 end), 0)," +
		" coalesce(sum(case when reserved_at is not null then 1 else 0 end), 0)," +
		" min(case when reserved_at is null and available_at <= ? then available_at end)" +
		" from " + c.quote(c.tables.Jobs) + " where queue = ?")
	var s QueueSizes
	var oldest sql.NullInt64
	if err := c.db.QueryRowxContext(ctx, q, p.Now, p.Now, p.Now, p.Queue).Scan(&s.Size, &s.Pending, &s.Delayed, &s.Reserved, &oldest); err != nil {
		return nil, fmt.Errorf("count queue %s: %w", p.Queue, c.translate(err))
	}
	s.OldestPending = oldest.Int64
	return &s, nil
}
