package laravel

import (
	"context"
	"fmt"
	"sync"
)

// OptimisticWindow is how many available rows the optimistic strategy reads per claim beyond those it
// was asked for; racing claimers pick among them at random.
const OptimisticWindow = 8

func init() {
	RegisterStrategy("optimistic", func(c *Conn, p QueueParams) (Queue, error) {
		return &optimistic{Fenced: NewFenced(c, p)}, nil
	})
}

// optimistic claims without row locks or transactions (see casClaim). On a stock table the attempts
// column together with the availability predicate is the version the compare-and-set checks; when the
// table has a version column (queue:migrate-index --strategy optimistic adds one) that is checked and
// incremented too, which also fences out writers that reset attempts.
type optimistic struct {
	Fenced
	mu          sync.Mutex
	known       bool // the columns have been read
	withVersion bool
}

// hasVersion reports, once the table could be read, whether it has a version column.
func (q *optimistic) hasVersion(ctx context.Context) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.known {
		cols, err := q.C.jobsColumns(ctx)
		if err != nil {
			return false, err
		}
		q.withVersion, q.known = cols["version"], true
	}
	return q.withVersion, nil
}

// Strategy returns "optimistic".
func (q *optimistic) Strategy() string { return "optimistic" }

// JobClaim reads a window of available rows and takes up to Limit of them by compare-and-set.
func (q *optimistic) JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	withVersion, err := q.hasVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("claim job: %w", err)
	}
	limit := max(p.Limit, 1)
	where, args := claimWhere(p, p.ExcludeIDs, 0)
	jobs, err := casClaim(ctx, q.C, p, where, args, limit, limit+OptimisticWindow, withVersion)
	if err != nil {
		if len(jobs) > 0 {
			return jobs, nil // the claimed rows must reach the worker; the next call sees the error
		}
		return nil, fmt.Errorf("claim job: %w", err)
	}
	return jobs, nil
}
