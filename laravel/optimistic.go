package laravel

import (
	"context"
	"fmt"
	"sync/atomic"
)

// OptimisticWindow is how many available rows the optimistic strategy reads per claim beyond those it
// was asked for; racing claimers pick among them at random.
const OptimisticWindow = 8

// optimisticSpread is how many times wider the window of a claim is, beyond its limit, while the
// queue's last claim lost a race: many workers then read the same head of the queue, and each lost
// race costs a wait for the winner's row lock, so they pick at random from a wider window instead of
// all trying the first row.
const optimisticSpread = 4

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
	version   columnProbe
	contended atomic.Bool // the last claim lost a race
}

// Strategy returns "optimistic".
func (q *optimistic) Strategy() string { return "optimistic" }

// JobClaim reads a window of available rows and takes up to Limit of them by compare-and-set. The
// window starts at the queue's lower bound on id and, while the queue has a backlog, is read walking
// the primary key from it (see idFloors), as batch's claims are.
func (q *optimistic) JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	withVersion, err := q.version.check(ctx, q.C)
	if err != nil {
		return nil, fmt.Errorf("claim job: %w", err)
	}
	jobs, skipped, lowered, err := q.claimOnce(ctx, p, withVersion, true)
	if err == nil && lowered {
		var more []*Job
		jobs, more, _, err = q.claimOnce(ctx, p, withVersion, false)
		skipped = append(skipped, more...)
	}
	reportLeft(p, skipped)
	if err != nil {
		if len(jobs) > 0 {
			return jobs, nil // the claimed rows must reach the worker; the next call sees the error
		}
		return nil, fmt.Errorf("claim job: %w", err)
	}
	return jobs, nil
}

// claimOnce is one claim from the bound; with probe, an empty one probes below the bound and reports
// whether it was lowered (see rowClaimer.claimOnce).
func (q *optimistic) claimOnce(ctx context.Context, p *JobClaimParams, withVersion, probe bool) ([]*Job, []*Job, bool, error) {
	c := q.C
	floor, walk := c.floors.get(c, p.Queue)
	if p.Whole {
		floor, walk = 0, false
	}
	limit := max(p.Limit, 1)
	where, args := claimWhere(p, p.ExcludeIDs, floor)
	window, spread := limit+OptimisticWindow, q.contended.Load()
	if spread {
		window = optimisticSpread*limit + optimisticSpread*OptimisticWindow
	}
	r, err := casClaim(ctx, c, p, where, args, limit, window, withVersion, spread, walk)
	q.contended.Store(r.lost > 0)
	jobs := r.jobs
	if err != nil {
		return jobs, r.skipped, false, err
	}
	// Candidates it did not try (picked at random from the window) stay above the next bound.
	seen := seenRows(jobs, r.skipped)
	c.floors.claimed(c, p.Queue, floor, seen, limit, r.passed)
	if !probe {
		return jobs, r.skipped, false, nil
	}
	rc := &rowClaimer{c: c}
	lowered := c.floors.probe(c, p.Queue, len(seen) == 0, func() probeFunc { return rc.prober(p, p.ExcludeIDs) })
	return jobs, r.skipped, lowered, nil
}
