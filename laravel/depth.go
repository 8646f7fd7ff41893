package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// DefaultDepthLimit bounds how many rows QueueDepth counts per queue.
const DefaultDepthLimit = 100000

// QueueDepthParams says which queues QueueDepth samples.
type QueueDepthParams struct {
	Queues     []string
	Now        int64 // worker clock, Unix seconds
	RetryAfter int64 // seconds; an older reservation counts as available, as Laravel's claim takes it
	// Limit bounds the count per queue; 0 means DefaultDepthLimit.
	Limit int
	// AfterID, when positive, makes AvailableJobIDs list only the rows with a higher id (a next page).
	AfterID int64
}

// QueueDepth is one queue's sample.
type QueueDepth struct {
	Queue string
	// Available counts the rows a claim could take now (Laravel's availability rule), up to the limit.
	Available int64
	// Capped says Available reached the limit: there are at least that many.
	Capped bool
	// OldestAvailableAt is the available_at of the queue's head, the row the next claim takes
	// (the lowest available id); 0 when nothing is available.
	OldestAvailableAt int64
}

// QueueDepth samples each queue with two statements that walk the queue's index (Laravel's jobs
// migration indexes queue; every secondary index carries the primary key, so rows come in id order)
// and stop early, whatever the table's size: the count reads at most Limit matching rows, and the
// head is the first available row in id order, the one Laravel's own claim would take. Its
// available_at stands for the oldest available job: rows are appended in time order, and a row
// released or delayed later gets a higher id and a later available_at.
func (c *Conn) QueueDepth(ctx context.Context, p *QueueDepthParams) ([]QueueDepth, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultDepthLimit
	}
	avail := " where queue = ? and ((reserved_at is null and available_at <= ?) or reserved_at <= ?)"
	count := c.rebind(fmt.Sprintf("select count(*) from (select 1 as one from %s%s limit %d) capped", c.quote(c.tables.Jobs), avail, limit))
	head := c.rebind("select available_at from " + c.quote(c.tables.Jobs) + avail + " order by id asc limit 1")
	out := make([]QueueDepth, 0, len(p.Queues))
	for _, q := range p.Queues {
		args := []any{q, p.Now, p.Now - p.RetryAfter}
		d := QueueDepth{Queue: q}
		if err := c.db.QueryRowContext(ctx, count, args...).Scan(&d.Available); err != nil {
			return nil, fmt.Errorf("count jobs of queue %q: %w", q, c.translate(err))
		}
		d.Capped = d.Available >= int64(limit)
		err := c.db.QueryRowContext(ctx, head, args...).Scan(&d.OldestAvailableAt)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("read the head of queue %q: %w", q, c.translate(err))
		}
		out = append(out, d)
	}
	return out, nil
}

// Ping checks that the database answers.
func (c *Conn) Ping(ctx context.Context) error {
	if err := c.db.PingContext(ctx); err != nil {
		return fmt.Errorf("ping %s database %s: %w", c.name, c.where, c.translate(err))
	}
	return nil
}

// AvailableJobIDs returns the ids of the rows a claim could take now on the queues (as QueueDepth
// counts them), in id order per queue, up to p.Limit of them (DefaultDepthLimit for 0) and one more,
// so that a caller can tell a list that holds them all from one that was cut; only those after
// p.AfterID when it is set.
func (c *Conn) AvailableJobIDs(ctx context.Context, p *QueueDepthParams) ([]int64, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultDepthLimit
	}
	q := c.rebind(fmt.Sprintf("select id from %s where queue = ? and ((reserved_at is null and available_at <= ?) or reserved_at <= ?) and id > ? order by id limit %d",
		c.quote(c.tables.Jobs), limit+1))
	var ids []int64
	for _, queue := range p.Queues {
		var some []int64
		if err := c.db.SelectContext(ctx, &some, q, queue, p.Now, p.Now-p.RetryAfter, max(p.AfterID, 0)); err != nil {
			return nil, fmt.Errorf("list jobs of queue %q: %w", queue, c.translate(err))
		}
		ids = append(ids, some...)
		if len(ids) > limit {
			return ids[:limit+1], nil
		}
	}
	return ids, nil
}

// AvailableJobs returns, without claiming them, up to limit rows a claim on p.Queue could take now
// from p.MinID on, in claim order (p's Queue, Now, RetryAfter and MinID are read): for a caller that
// looks past rows its claims pass over for the next one it runs.
func (c *Conn) AvailableJobs(ctx context.Context, p *JobClaimParams, limit int) ([]*Job, error) {
	q, args := c.AvailableJobsSQL(p, nil, limit, "")
	rows, err := c.db.QueryxContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read jobs of queue %q: %w", p.Queue, c.translate(err))
	}
	jobs, err := ScanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("read jobs of queue %q: %w", p.Queue, c.translate(err))
	}
	return jobs, nil
}
