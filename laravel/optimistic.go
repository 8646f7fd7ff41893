package laravel

import (
	"context"
	"fmt"
)

// OptimisticWindow is how many available rows the optimistic strategy reads per claim beyond those it
// was asked for; racing claimers pick among them at random.
const OptimisticWindow = 8

// newOptimistic builds the optimistic strategy.
func newOptimistic(c *Conn, p QueueParams) (Queue, error) {
	return &optimistic{Fenced: NewFenced(c, p), version: columnProbe{name: "version"}}, nil
}

// optimistic claims without row locks or transactions (see casClaim). On a stock table the attempts
// column together with the availability predicate is the version the compare-and-set checks; when the
// table has a version column (queue:migrate-index --strategy optimistic adds one) that is checked and
// incremented too, which also fences out writers that reset attempts.
type optimistic struct {
	Fenced
	version columnProbe
}

// Strategy returns "optimistic".
func (q *optimistic) Strategy() string { return "optimistic" }

// JobClaim reads a window of available rows and takes up to Limit of them by compare-and-set.
func (q *optimistic) JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	withVersion, err := q.version.check(ctx, q.C)
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
