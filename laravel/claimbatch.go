package laravel

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// DefaultBatch is how many rows the batch strategy claims per round trip when QueueParams.Batch is 0.
const DefaultBatch = 32

func init() {
	RegisterStrategy("batch", func(c *Conn, p QueueParams) (Queue, error) {
		q := &batchQueue{Fenced: NewFenced(c, p), size: p.Batch, buf: map[string][]*Job{}}
		if q.size <= 0 {
			q.size = DefaultBatch
		}
		q.claimer.c = c
		q.group.f = &q.Fenced
		return q, nil
	})
}

// batchQueue is the fast path. One short statement or transaction claims up to Batch rows (see
// rowClaimer); the rows the caller did not ask for are kept and handed out by the next claims without a
// round trip, and given back by JobReturnPrefetched when the worker stops. Concurrent deletes are
// coalesced into grouped, fenced deletes (see deleteGroup).
type batchQueue struct {
	Fenced
	claimer rowClaimer
	group   deleteGroup
	size    int

	claimMu sync.Mutex // serializes claims that go to the database
	mu      sync.Mutex
	buf     map[string][]*Job // claimed, not yet handed out, by queue
}

// Strategy returns "batch".
func (q *batchQueue) Strategy() string { return "batch" }

// JobClaim hands out prefetched rows first and claims a new batch when they do not cover Limit.
// Prefetched rows that the caller now excludes, or whose reservation has aged past a quarter of
// retry_after, are given back instead of handed out.
func (q *batchQueue) JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	limit := max(p.Limit, 1)
	out, stale := q.takeBuffered(p, limit)
	q.giveBack(ctx, stale)
	if len(out) == limit {
		return out, nil
	}
	// One round trip at a time per queue: callers claiming in parallel (a worker splits its free slots
	// over several claims) share the batch it brings instead of each prefetching a batch of its own.
	q.claimMu.Lock()
	defer q.claimMu.Unlock()
	more, stale := q.takeBuffered(p, limit-len(out))
	q.giveBack(ctx, stale)
	if out = append(out, more...); len(out) == limit {
		return out, nil
	}
	need := limit - len(out)
	jobs, err := q.claimer.claim(ctx, p, p.ExcludeIDs, max(need, q.size))
	if err != nil {
		if len(out) > 0 {
			return out, nil // the rows in hand must reach the worker; the next call sees the error
		}
		return nil, fmt.Errorf("claim job: %w", err)
	}
	n := min(need, len(jobs))
	out = append(out, jobs[:n]...)
	if rest := jobs[n:]; len(rest) > 0 {
		q.mu.Lock()
		q.buf[p.Queue] = append(q.buf[p.Queue], rest...)
		q.mu.Unlock()
	}
	return out, nil
}

// giveBack returns prefetched rows that must not be handed out. A lost claim here means another
// worker already took the row over: nothing to give back.
func (q *batchQueue) giveBack(ctx context.Context, stale []*Job) {
	if len(stale) > 0 {
		_ = q.JobReturn(ctx, stale)
	}
}

// takeBuffered removes up to limit usable prefetched rows of p.Queue, and the stale ones.
func (q *batchQueue) takeBuffered(p *JobClaimParams, limit int) (out, stale []*Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	buf := q.buf[p.Queue]
	if len(buf) == 0 {
		return nil, nil
	}
	keep := buf[:0]
	for _, j := range buf {
		switch {
		case slices.Contains(p.ExcludeIDs, j.ID) || p.Now-j.ReservedAt >= max(p.RetryAfter/4, 1):
			stale = append(stale, j)
		case len(out) < limit:
			out = append(out, j)
		default:
			keep = append(keep, j)
		}
	}
	q.buf[p.Queue] = keep
	return out, stale
}

// JobReturnPrefetched gives back every prefetched row, reservation and attempt undone.
func (q *batchQueue) JobReturnPrefetched(ctx context.Context) error {
	q.mu.Lock()
	var all []*Job
	for name, jobs := range q.buf {
		all = append(all, jobs...)
		delete(q.buf, name)
	}
	q.mu.Unlock()
	if len(all) == 0 {
		return nil
	}
	return q.JobReturn(ctx, all)
}

// JobDelete deletes a finished job, fenced, grouped with the deletes other goroutines make meanwhile.
func (q *batchQueue) JobDelete(ctx context.Context, j *Job) error {
	return q.group.delete(ctx, j)
}
