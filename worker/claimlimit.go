package worker

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Claims in parallel help one worker fill its slots while each claim waits for its commit, but every
// worker on the table adds its own. On MariaDB, 16 workers of 8 parallel single-row claims ran at half
// the rate of 4 such workers: each claim walked past the rows that the other claims held or had just
// reserved (49 index entries per claim against 3 for one worker), and took 31 ms at the median against
// 0.6 ms for the quickest. No worker knows how many others there are, so each compares what a claimed
// row costs it now with the least it has cost, and claims with fewer at once while the cost is more
// than claimSlowdown times that: whatever the number of workers, the claims in flight on the server
// settle about where the server starts to queue them.

// The limit is each worker's own; the workers of a host also share one bound (claimGate): on one
// queue of one jobs table they run no more claims at once between them than one worker alone may
// (maxParallelClaims), within a process through tokens and across processes through lock files. Without
// it, each worker's limit settled above what the server took without queueing: 16 workers of 8 claims
// in one process ran every single-row strategy on MariaDB below the rate of one worker, and 16
// `queue:work` processes of delete-mark at their defaults ran 1,112–3,786 jobs/s where one ran 22,000.

// claimGates holds a claimGate per claim scope (see laravel.ClaimScoper).
var (
	claimGatesMu sync.Mutex
	claimGates   = map[string]*claimGate{}
)

// claimGate is the bound shared by the claims of one scope: a token of this process, and a slot of
// the host while the files for it could be opened (hostErr says why they could not).
type claimGate struct {
	tokens  chan struct{}
	host    *hostSlots
	hostErr error
}

// claimGateFor returns the bound of one scope, and whether this call made it.
func claimGateFor(scope string) (g *claimGate, made bool) {
	claimGatesMu.Lock()
	defer claimGatesMu.Unlock()
	g = claimGates[scope]
	if g == nil {
		g = &claimGate{tokens: make(chan struct{}, maxParallelClaims)}
		g.host, g.hostErr = openHostSlots(scope, maxParallelClaims)
		claimGates[scope] = g
		made = true
	}
	return g, made
}

// enter waits for a token and a slot, or for ctx, and returns what leaves them.
func (g *claimGate) enter(ctx context.Context) (func(), error) {
	select {
	case g.tokens <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if g.host == nil {
		return func() { <-g.tokens }, nil
	}
	release, err := g.host.acquire(ctx)
	if err != nil {
		<-g.tokens
		return nil, err
	}
	return func() { release(); <-g.tokens }, nil
}

// claimSlowdown is how many times its least cost a claimed row may cost before the worker claims with
// fewer at once. Measured on MariaDB with 8 in flight per worker (queue:bench, 1/4/16 workers), 2 gave
// delete-mark and optimistic their best rates at every worker count, and delete-retry about the same
// as 4 and 8; a lone worker of single-row claims still keeps several at once, because their commits
// share a flush.
const claimSlowdown = 2

// claimBaseDrift is how much the quiet cost is let rise per claim measured, so that a server that
// became slower for good is eventually the new quiet: 10% over a thousand claims.
const claimBaseDrift = 1.0001

// claimBackoff is the factor by which the parallel claims shrink after a round that was too slow;
// each round that was not adds claimGrowth.
const (
	claimBackoff = 0.75
	claimGrowth  = 0.5
)

// claimLimiter chooses how many claims a worker runs at once.
type claimLimiter struct {
	mu    sync.Mutex
	most  float64 // maxParallelClaims
	limit float64
	base  float64 // the least a claimed row has cost, in seconds, drifting up by claimBaseDrift
}

func newClaimLimiter(most int) *claimLimiter {
	return &claimLimiter{most: float64(most), limit: float64(most)}
}

// parallel returns how many claims to run at once for limit free slots.
func (l *claimLimiter) parallel(limit int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(1, min(limit, int(l.limit)))
}

// claimSample is one claim of a round: how long it took and how many rows it brought.
type claimSample struct {
	took time.Duration
	rows int
}

// observe adjusts the limit from one round of claims. Only claims that brought rows count: an empty
// or failed claim costs no write and says nothing about contention.
func (l *claimLimiter) observe(round []claimSample) {
	var costs []float64
	for _, s := range round {
		if s.rows > 0 {
			costs = append(costs, s.took.Seconds()/float64(s.rows))
		}
	}
	if len(costs) == 0 {
		return
	}
	slices.Sort(costs)
	l.mu.Lock()
	defer l.mu.Unlock()
	for range costs {
		l.base *= claimBaseDrift
	}
	if l.base == 0 || costs[0] < l.base {
		l.base = costs[0]
	}
	if median := costs[len(costs)/2]; median > claimSlowdown*l.base {
		l.limit = max(1, l.limit*claimBackoff)
	} else {
		l.limit = min(l.most, l.limit+claimGrowth)
	}
}
