package laravel

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// laneQueue runs the batch strategy as several lanes: batch queues on the same connection, each with
// its share of the workers' slots and of the claim size, its own buffer and its own grouped delete.
// One lane alternates between its transaction (the finished jobs' delete and the next claim) and the
// jobs that transaction brought; with one lane the server waits while the jobs run and the jobs wait
// while the transaction runs. Lanes drift apart, so that one lane's transaction runs beside another
// lane's jobs and, on a server, beside another lane's transaction on a second connection. A job's
// completion goes to the lane that handed it out.
type laneQueue struct {
	*batchQueue // the first lane: what needs no lane (renewals, pushes, sweeps, scopes) runs on it
	lanes       []*batchQueue

	batch int // QueueParams.Batch: split over the running lanes when given

	// lead is set for QueueParams.Lanes 0: the lanes past the first then run only while the queue
	// leads the table's claims (see laneLead) and its workers run autoLaneSlots jobs at once per lane.
	lead *laneLead

	mu    sync.Mutex
	slots int // announced by the workers, summed; split over the running lanes
}

// newLaneQueue builds n lanes of the batch strategy.
func newLaneQueue(c *Conn, p QueueParams, n int) (*laneQueue, error) {
	q := &laneQueue{batch: p.Batch}
	for range n {
		l, err := newBatchLane(c, p)
		if err != nil {
			return nil, err
		}
		q.lanes = append(q.lanes, l.(*batchQueue))
	}
	q.batchQueue = q.lanes[0]
	return q, nil
}

// share is lane i's part of total split over n lanes, the first ones taking the remainder.
func share(total, n, i int) int {
	s := total / n
	if i < total%n {
		s++
	}
	return s
}

// AddSlots splits the workers' slots, and a given claim size, over the lanes that run; the others
// get none and are not asked to claim.
func (q *laneQueue) AddSlots(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.slots = max(q.slots+n, 0)
	active := q.LanesFor(q.slots)
	if q.lead != nil && active == 1 {
		q.lead.release()
	}
	for i, l := range q.lanes {
		want := 0
		if i < active {
			want = share(q.slots, active, i)
		}
		l.mu.Lock()
		have := l.slots
		if q.batch > 0 && i < active {
			l.size = max(share(q.batch, active, i), 1)
		}
		l.mu.Unlock()
		if want != have {
			l.AddSlots(want - have)
		}
	}
}

// LanesFor is how many lanes run for workers announcing slots in all: every lane, but never more
// lanes than slots. At QueueParams.Lanes 0, more than one only with autoLaneSlots slots per lane, and
// only while the queue leads the table's claims, which it becomes here when no other session does.
func (q *laneQueue) LanesFor(slots int) int {
	n := min(len(q.lanes), slots)
	if q.lead != nil {
		if n = min(n, slots/autoLaneSlots); n > 1 && !q.lead.take(time.Now()) {
			n = 1
		}
	}
	return max(n, 1)
}

// LanesFor is 1: a batch queue built alone is one lane.
func (q *batchQueue) LanesFor(int) int { return 1 }

// Lanes is how many lanes run now: those the slots are split over (one while no worker runs).
func (q *laneQueue) Lanes() int {
	n := 0
	for _, l := range q.lanes {
		if !l.idle() {
			n++
		}
	}
	return max(n, 1)
}

// Lanes is 1: a batch queue built alone is one lane.
func (q *batchQueue) Lanes() int { return 1 }

// JobClaim asks the lanes for the rows their free slots can start, together at most p.Limit: first
// the lanes holding prefetched rows of p.Queue (all of those rows, free slots or not), then those with
// the most free slots. Without announced slots (a caller of JobClaim alone) the first lane claims
// them all. Once a lane's claim came back short, the queue is empty but for rows other lanes hold:
// only those are asked. When the lead is due, it is checked first; a lane the lead no longer lets run
// gives its prefetched rows back, which no claim would otherwise hand out.
func (q *laneQueue) JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error) {
	q.mu.Lock()
	slots := q.slots
	q.mu.Unlock()
	if slots == 0 {
		return q.lanes[0].JobClaim(ctx, p)
	}
	if now := time.Now(); q.lead != nil && slots >= autoLanes*autoLaneSlots && q.lead.due(now) {
		q.lead.take(now) // check the lead, or try for it again, outside q.mu: no claim waits for it
		q.AddSlots(0)    // and split the slots as it says
		for _, l := range q.lanes {
			if l.idle() {
				_ = l.JobReturnPrefetched(ctx) // a lane without slots: its rows would wait for retry_after
			}
		}
	}
	want := max(p.Limit, 1)
	type lane struct {
		q              *batchQueue
		free, buffered int
	}
	order := make([]lane, len(q.lanes))
	total := 0
	for i, l := range q.lanes {
		free := l.free()
		l.mu.Lock()
		order[i] = lane{l, free, len(l.buf[p.Queue])}
		l.mu.Unlock()
		total += max(free, 0)
	}
	slices.SortStableFunc(order, func(a, b lane) int {
		if (a.buffered > 0) != (b.buffered > 0) {
			if a.buffered > 0 {
				return -1
			}
			return 1
		}
		return b.free - a.free
	})
	// A slot the worker counts free may still be held in a lane by a job it gave up on (a timeout left
	// for retry_after): the worker's count rules, and the first lane claims the rest.
	if total < want {
		order[0].free = max(order[0].free, 0) + want - total
	}
	var out []*Job
	dry := false
	for _, l := range order {
		// Rows a lane holds claimed are handed out even past its free slots (its share shrank when
		// the queue took the lead, or a claim batch above the concurrency filled it): claiming new
		// rows in another lane would leave them waiting, reserved, behind busy slots.
		n := min(want-len(out), max(l.free, l.buffered))
		if n <= 0 || dry && l.buffered == 0 {
			continue
		}
		lp := *p
		lp.Limit = n
		jobs, err := l.q.JobClaim(ctx, &lp)
		out = append(out, jobs...)
		if err != nil {
			if len(out) > 0 {
				return out, nil // as one lane does: the rows in hand reach the worker first
			}
			return nil, err
		}
		dry = dry || len(jobs) < n
		if len(out) == want {
			break
		}
	}
	return out, nil
}

// free is how many more jobs the lane's slots can start: its slots less the jobs it handed out that
// are still running or whose grouped delete has not answered (their slots are not free until it has).
func (q *batchQueue) free() int {
	waiting := q.group.waiting()
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.slots - len(q.out) - waiting
}

// idle says whether the lane has no slots: the lead was lost, or never taken.
func (q *batchQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.slots == 0
}

// laneOf returns the lane that handed out j; the first lane for a job none awaits (its completion
// came after retry_after, or it was claimed elsewhere).
func (q *laneQueue) laneOf(j *Job) *batchQueue {
	for _, l := range q.lanes {
		l.mu.Lock()
		_, ok := l.out[j]
		l.mu.Unlock()
		if ok {
			return l
		}
	}
	return q.lanes[0]
}

// JobDelete is the lane's: grouped with the deletes of its other jobs.
func (q *laneQueue) JobDelete(ctx context.Context, j *Job) error {
	return q.laneOf(j).JobDelete(ctx, j)
}

// JobDeleteAndPush is the lane's.
func (q *laneQueue) JobDeleteAndPush(ctx context.Context, j *Job, push []*JobPushParams, batch *BatchStep) ([]int64, error) {
	return q.laneOf(j).JobDeleteAndPush(ctx, j, push, batch)
}

// JobRelease is the lane's.
func (q *laneQueue) JobRelease(ctx context.Context, j *Job, p *JobReleaseParams) error {
	return q.laneOf(j).JobRelease(ctx, j, p)
}

// JobFail is the lane's.
func (q *laneQueue) JobFail(ctx context.Context, j *Job, p *JobFailParams) error {
	return q.laneOf(j).JobFail(ctx, j, p)
}

// JobReturn gives each job back through its lane.
func (q *laneQueue) JobReturn(ctx context.Context, jobs []*Job) error {
	by := map[*batchQueue][]*Job{}
	var order []*batchQueue
	for _, j := range jobs {
		l := q.laneOf(j)
		if by[l] == nil {
			order = append(order, l)
		}
		by[l] = append(by[l], j)
	}
	var errs []error
	for _, l := range order {
		errs = append(errs, l.JobReturn(ctx, by[l]))
	}
	return errors.Join(errs...)
}

// JobReturnPrefetched gives back every lane's prefetched rows.
func (q *laneQueue) JobReturnPrefetched(ctx context.Context) error {
	var errs []error
	for _, l := range q.lanes {
		errs = append(errs, l.JobReturnPrefetched(ctx))
	}
	return errors.Join(errs...)
}
