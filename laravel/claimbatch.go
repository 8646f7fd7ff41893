package laravel

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// DefaultBatch is how many rows the batch strategy claims per round trip when QueueParams.Batch is 0
// and no worker has said how many jobs it runs at once (see batchQueue.AddSlots).
const DefaultBatch = 32

// maxAutoBatch bounds the claim a batch queue sizes from its workers' concurrency: as many rows as one
// grouped delete takes.
const maxAutoBatch = maxGroup

// newBatchQueue builds the batch strategy: in lanes (see laneQueue) where p.Lanes asks for more than
// one, and at p.Lanes 0 where claims skip locked rows, in lanes that run while the queue leads the
// table's claims (see laneLead).
func newBatchQueue(c *Conn, p QueueParams) (Queue, error) {
	switch {
	case p.Lanes > 1:
		return newLaneQueue(c, p, p.Lanes)
	case p.Lanes == 0 && c.caps.SkipLocked:
		q, err := newLaneQueue(c, p, autoLanes)
		if err != nil {
			return nil, err
		}
		q.lead = &laneLead{c: c, table: c.tables.Jobs}
		return q, nil
	}
	return newBatchLane(c, p)
}

// newBatchLane builds one lane of the batch strategy.
func newBatchLane(c *Conn, p QueueParams) (Queue, error) {
	q := &batchQueue{Fenced: NewFenced(c, p), size: p.Batch, buf: map[string][]*Job{}, out: map[*Job]time.Time{}, memo: map[string]*claimMemo{}}
	if q.size <= 0 {
		q.size, q.sizeFromSlots = DefaultBatch, true
	}
	q.claimer.c, q.claimer.batches = c, true
	q.group.f = &q.Fenced
	q.group.settled = q.allSettled
	q.group.wake = make(chan struct{}, 1)
	q.group.run = q.deleteAndPrefetch
	q.counted = deleteGroup{f: &q.Fenced, settled: q.allSettled, wake: make(chan struct{}, 1), runItems: q.Fenced.deleteAndPushMany}
	return q, nil
}

// batchQueue is the fast path. One short statement or transaction claims up to Batch rows (see
// rowClaimer); the rows the caller did not ask for are kept and handed out by the next claims without a
// round trip, and given back by JobReturnPrefetched when the worker stops. Concurrent deletes are
// coalesced into grouped, fenced deletes (see deleteGroup).
type batchQueue struct {
	Fenced
	claimer rowClaimer
	group   deleteGroup
	// counted groups the deletes that insert rows or count in a batch (JobDeleteAndPush): a batch's
	// members then share one locked update of its row per group instead of one transaction each.
	counted deleteGroup

	claimMu sync.Mutex // serializes claims that go to the database
	mu      sync.Mutex
	// size is how many rows a claim in the database takes; with sizeFromSlots (QueueParams.Batch 0) it
	// follows the workers' concurrency once they announce it (AddSlots). Guarded by mu.
	size          int
	sizeFromSlots bool
	slots         int                   // the concurrency of the workers using the queue, summed
	buf           map[string][]*Job     // claimed, not yet handed out, by queue
	out           map[*Job]time.Time    // handed out, no completion called yet: until when it is awaited
	memo          map[string]*claimMemo // per queue: the latest claim asked for, and whether more rows wait
	stopped       bool                  // JobReturnPrefetched ran: deletes claim nothing more
}

// claimMemo is the latest JobClaim of a queue, which a grouped delete may repeat for the rows its
// jobs' slots will ask for next, as long as the queue's last claim in the database filled its batch.
type claimMemo struct {
	p    JobClaimParams
	at   time.Time
	full bool
}

// Strategy returns "batch".
func (q *batchQueue) Strategy() string { return "batch" }

// JobClaim hands out prefetched rows first and claims a new batch when they do not cover Limit.
// Prefetched rows that the caller now excludes, or whose reservation has aged past a quarter of
// retry_after, are given back instead of handed out.
func (q *batchQueue) JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	jobs, err := q.claim(ctx, p)
	// A job the worker leaves reserved (a timeout left for retry_after) never calls a completion;
	// after retry_after its claim may be another worker's anyway, so it is no longer awaited.
	until := q.C.clock().Add(time.Duration(max(p.RetryAfter, 1)) * time.Second)
	q.mu.Lock()
	for _, j := range jobs {
		q.out[j] = until
	}
	q.mu.Unlock()
	return jobs, err
}

func (q *batchQueue) claim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	q.mu.Lock()
	m := q.memo[p.Queue]
	if m == nil {
		m = &claimMemo{}
		q.memo[p.Queue] = m
	}
	m.p, m.at = *p, q.C.clock()
	m.p.Whole = false // a grouped delete's claim starts at the bound
	q.stopped = false
	q.mu.Unlock()
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
	q.mu.Lock()
	want := max(need, min(q.size, q.roomLocked()-len(out)))
	q.mu.Unlock()
	jobs, skipped, err := q.claimer.claim(ctx, p, p.ExcludeIDs, want)
	reportLeft(p, skipped)
	q.mu.Lock()
	m.full = err == nil && len(jobs)+len(skipped) == want
	q.mu.Unlock()
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
		_ = q.Fenced.JobReturn(ctx, stale)
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

// JobReturnPrefetched gives back every prefetched row, reservation and attempt undone. Grouped
// deletes claim nothing more afterwards, until the next JobClaim.
func (q *batchQueue) JobReturnPrefetched(ctx context.Context) error {
	q.claimMu.Lock() // a delete claiming now puts its rows in the buffer first
	defer q.claimMu.Unlock()
	q.mu.Lock()
	q.stopped = true
	var all []*Job
	for name, jobs := range q.buf {
		all = append(all, jobs...)
		delete(q.buf, name)
	}
	q.mu.Unlock()
	if len(all) == 0 {
		return nil
	}
	err := q.Fenced.JobReturn(ctx, all)
	if err != nil && ConnectionLost(err) {
		// Kept for the caller to try again once the connection is back (the return is fenced: rows
		// a try that lost its answer did give back are not touched twice).
		q.mu.Lock()
		for _, j := range all {
			q.buf[j.Queue] = append(q.buf[j.Queue], j)
		}
		q.mu.Unlock()
	}
	return err
}

// deleteAndPrefetch deletes a group of finished jobs. When the last claim filled its batch and the
// buffer will not cover the slots these jobs free, the same transaction claims the next rows into the
// buffer: one commit then does what a delete and a claim would do in two, and the worker's next claim
// is served without a round trip.
func (q *batchQueue) deleteAndPrefetch(ctx context.Context, done []*Job) ([]*Job, error) {
	if !q.claimer.canDeleteAndClaim() || !q.claimMu.TryLock() {
		return q.deleteMany(ctx, done)
	}
	defer q.claimMu.Unlock()
	p := q.prefetchFor(done)
	if p == nil {
		return q.deleteMany(ctx, done)
	}
	jobs, skipped, deleted, err := q.claimer.deleteAndClaim(ctx, q.Tries, done, p, p.Limit)
	if err != nil {
		return nil, fmt.Errorf("delete %d jobs: %w", len(done), err)
	}
	reportLeft(p, skipped)
	q.mu.Lock()
	q.buf[p.Queue] = append(q.buf[p.Queue], jobs...)
	q.memo[p.Queue].full = len(jobs)+len(skipped) == p.Limit
	q.mu.Unlock()
	return lostJobs(done, deleted), nil
}

// prefetchFor returns the claim a grouped delete of done should make, or nil: the queue the finished
// jobs came from, when its last claim filled its batch and its buffer will not cover their slots.
func (q *batchQueue) prefetchFor(done []*Job) *JobClaimParams {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped || len(done) == 0 {
		return nil
	}
	m := q.memo[done[0].Queue]
	if m == nil || !m.full {
		return nil
	}
	buffered := len(q.buf[m.p.Queue])
	limit := min(q.size-buffered, q.roomLocked())
	if buffered >= len(done) || limit <= 0 {
		return nil
	}
	p := m.p
	p.Now += int64(q.C.clock().Sub(m.at) / time.Second)
	p.Limit = limit
	return &p
}

// roomLocked is how many more rows the queue's workers can start: their slots less the jobs handed out
// and not yet completed and the rows waiting in the buffer. A claim takes no more than that (nor more
// than the claim size), so that no claimed row waits behind busy slots, out of every other worker's
// reach; a claim size above the workers' concurrency keeps the difference claimed, as asked. With no
// worker announced (a caller of JobClaim alone) there is no bound but the claim size. q.mu is held.
func (q *batchQueue) roomLocked() int {
	if q.slots == 0 {
		return math.MaxInt / 2
	}
	room := max(q.slots, q.size) - len(q.out)
	for _, jobs := range q.buf {
		room -= len(jobs)
	}
	return room
}

// settle records that a completion was called for handed-out jobs, and wakes a grouped delete waiting
// for them when none is left running.
func (q *batchQueue) settle(jobs ...*Job) {
	q.mu.Lock()
	for _, j := range jobs {
		delete(q.out, j)
	}
	idle := len(q.out) == 0
	q.mu.Unlock()
	if idle {
		q.group.poke()
		q.counted.poke()
	}
}

// allSettled reports whether a grouped delete can expect no more deletes soon: every handed-out job
// has had its completion called, and no prefetched row waits to be handed out (a worker with free
// slots takes them at once, and their deletes belong in the same group).
func (q *batchQueue) allSettled() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.C.clock()
	for j, until := range q.out {
		if now.After(until) {
			delete(q.out, j)
		}
	}
	if len(q.out) > 0 {
		return false
	}
	for _, jobs := range q.buf {
		if len(jobs) > 0 {
			return false
		}
	}
	return true
}

// AddSlots records that a worker running up to n jobs at once started using the queue, or with -n
// that it stopped. A grouped delete then commits as soon as as many deletes wait as the queue's running
// workers run jobs at once: every slot is waiting, none is left to start the rows the queue holds
// claimed, and no more deletes can join. A claim batch larger than the concurrency kept those rows,
// and so every group, waiting for the whole linger.
//
// With QueueParams.Batch 0 the claims then take as many rows as those workers run at once (at most
// maxAutoBatch), as queue:work's claim batch follows its concurrency: a worker running one job at a
// time reserves one row, not DefaultBatch rows that would wait behind it, hidden from other workers,
// and for retry_after if the process died.
func (q *batchQueue) AddSlots(n int) {
	q.mu.Lock()
	q.slots = max(q.slots+n, 0)
	if q.sizeFromSlots {
		q.size = DefaultBatch
		if q.slots > 0 {
			q.size = min(q.slots, maxAutoBatch)
		}
	}
	for _, g := range []*deleteGroup{&q.group, &q.counted} {
		g.mu.Lock()
		g.flushAt = q.slots
		g.mu.Unlock()
	}
	q.mu.Unlock()
	q.group.poke()
	q.counted.poke()
}

// JobDelete deletes a finished job, fenced, grouped with the deletes other goroutines make meanwhile.
func (q *batchQueue) JobDelete(ctx context.Context, j *Job) error {
	// Settled only once the delete is in the group, so that a lingering leader woken by it takes it;
	// woken only when no handed-out job is left running.
	return q.group.delete(ctx, j, func() { q.settle(j) })
}

// JobDeleteAndPush is Fenced's, grouped with the others made meanwhile (see batchQueue.counted).
func (q *batchQueue) JobDeleteAndPush(ctx context.Context, j *Job, push []*JobPushParams, batch *BatchStep) ([]int64, error) {
	p := &pendingDelete{job: j, push: push, batch: batch}
	if err := q.counted.join(ctx, p, func() { q.settle(j) }); err != nil {
		return nil, err
	}
	return p.ids, nil
}

// JobRelease is Fenced's, recorded as settled.
func (q *batchQueue) JobRelease(ctx context.Context, j *Job, p *JobReleaseParams) error {
	q.settle(j)
	return q.Fenced.JobRelease(ctx, j, p)
}

// JobFail is Fenced's, recorded as settled.
func (q *batchQueue) JobFail(ctx context.Context, j *Job, p *JobFailParams) error {
	q.settle(j)
	return q.Fenced.JobFail(ctx, j, p)
}

// JobReturn is Fenced's, recorded as settled.
func (q *batchQueue) JobReturn(ctx context.Context, jobs []*Job) error {
	q.settle(jobs...)
	return q.Fenced.JobReturn(ctx, jobs)
}
