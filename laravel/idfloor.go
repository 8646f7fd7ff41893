package laravel

import (
	"context"
	"sync"
	"time"
)

// Tuning of the claims' lower bound on id (see idFloors).
const (
	// floorMargin is how far below the highest id a claim took its queue's next claim starts, so that
	// a row whose insert drew its id a moment before a higher one but committed after it is reached
	// by the next claim itself rather than by the next probe.
	floorMargin = 64
	// floorProbeEvery is how often, at the most, a probe looks for claimable rows below a queue's
	// bound. It bounds how long such a row waits while the database is healthy: one whose reservation
	// expired, one given back by another worker, a delayed one whose time came after the bound passed
	// it, or an insert that committed long after its id was drawn.
	floorProbeEvery = time.Second
	// floorProbeSpacing keeps slow probes rare: after a probe that took d the next waits at least
	// floorProbeSpacing × d, so probes hold one connection a twentieth of the time at the most. A probe
	// reads from the head of the queue, through every deleted row that vacuum or purge has not removed
	// yet (a long transaction keeps them all), and is the only read that does.
	floorProbeSpacing = 20
	// floorProbeWaitMax: a claim that came back empty waits for a probe only while the last probe
	// took less than this, so that it never holds up the claims that follow when deleted rows have
	// piled up (a probe then reads them all).
	floorProbeWaitMax = 10 * time.Millisecond
	// floorProbeTimeout bounds one probe.
	floorProbeTimeout = time.Minute
)

// idFloors holds a moving lower bound on id per queue for the claims of the strategies that scan the
// queue from its head (batch, delete-mark, optimistic, and delete-retry where its claim is one
// UPDATE … RETURNING). Every row below a bound was not claimable when the bound
// was set: it was taken, reserved by a running job, deleted but not yet purged, or not yet committed.
// A claim that starts at the bound does not wade through those rows, whatever their number; without
// it, a claim beside a long transaction reads every row deleted since the transaction began.
//
// A row below the bound can become claimable again: given back, its reservation expired, a delayed
// row whose time came, an insert that committed late. This process lowers the bound itself for the
// rows it gives back (see lower). For the others a probe, a non-locking read, looks below the bound
// every floorProbeEvery (see floorProbeSpacing) and lowers the bound to the first claimable row it
// finds: off the claim's path while claims find rows, so that the next claim takes it; before an
// empty claim returns otherwise, so that an idle worker takes such a row as soon as it polls.
type idFloors struct {
	mu     sync.Mutex
	m      map[string]*idFloor
	dry    map[string]bool // the queue's last claim on this connection came back empty
	ctx    context.Context // ends the probes when the connection closes
	cancel context.CancelFunc
	probes sync.WaitGroup
}

type idFloor struct {
	id        int64     // claims start here
	dense     bool      // the last claim filled its batch: the queue has a backlog from id on
	took      time.Time // when a claim last took rows from id on
	probing   bool      // a probe runs
	nextProbe time.Time
	spaced    time.Time     // the last probe's end plus floorProbeSpacing × its duration
	lastProbe time.Duration // how long the last probe took
}

// get returns queue's bound (0: claims start at the head) and whether a claim should walk the primary
// key from it: when the queue has a backlog from the bound on, or had claimable rows there within the
// last floorProbeEvery. A queue whose rows come rarely is left to the server's plan, which may read
// its own index instead of every other queue's rows since the bound.
func (f *idFloors) get(c *Conn, queue string) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.m[queue]
	if b == nil || b.id <= 0 {
		return 0, false
	}
	return b.id, b.dense || c.clock().Sub(b.took) < floorProbeEvery
}

// probeFunc returns the lowest claimable id below floor, or 0.
type probeFunc func(ctx context.Context, floor int64) int64

// probe runs the probe that mk builds below queue's bound when one is due (mk runs only then, so that
// claims between probes build nothing). With wait (the claim came back empty: the worker has nothing else to do, and a row
// found is claimed at once), and while probes are quick (floorProbeWaitMax), it runs on this
// goroutine and reports whether the bound was lowered; otherwise on a goroutine of its own, and the
// next claim starts from what it found.
func (f *idFloors) probe(c *Conn, queue string, wait bool, mk func() probeFunc) bool {
	f.mu.Lock()
	b := f.m[queue]
	if b == nil || b.id <= 0 || b.probing || f.ctx.Err() != nil {
		f.mu.Unlock()
		return false
	}
	now := c.clock()
	// A claim that comes back empty within the probe period of a claim that took rows finds the queue
	// just run dry, which is when rows the claims passed are left behind the bound (rows another
	// transaction held as a claim went by: SKIP LOCKED passes them). It probes as soon as the spacing
	// allows instead of at the period, so that a backlog does not end with such rows waiting out the
	// second while the worker backs off. One queue:work draining 10,000 jobs on MariaDB with
	// delete-mark ended 2 runs in 60 with its last 83 rows started 1.2 s after the others; with this,
	// no pause between two of its log lines exceeded 64 ms in 40 runs.
	dry := wait && now.Sub(b.took) < floorProbeEvery && !now.Before(b.spaced)
	if now.Before(b.nextProbe) && !dry {
		f.mu.Unlock()
		return false
	}
	b.probing = true
	floor := b.id
	wait = wait && b.lastProbe < floorProbeWaitMax
	f.probes.Add(1)
	f.mu.Unlock()
	fn := mk()
	run := func() bool {
		defer f.probes.Done()
		ctx, cancel := context.WithTimeout(f.ctx, floorProbeTimeout)
		defer cancel()
		start := time.Now()
		found := fn(ctx, floor)
		took := time.Since(start)
		f.mu.Lock()
		defer f.mu.Unlock()
		b.probing, b.lastProbe = false, took
		b.spaced = c.clock().Add(floorProbeSpacing * took)
		b.nextProbe = c.clock().Add(max(floorProbeEvery, floorProbeSpacing*took))
		if found > 0 && found < b.id {
			b.id, b.dense = found, false
			return true
		}
		return false
	}
	if wait {
		return run()
	}
	go run()
	return false
}

// claimed moves queue's bound after a claim that started at from and asked for limit rows, with the
// jobs it took sorted by id. Past the last row taken, a full batch did not look; a short one looked
// to the end of the queue and found nothing more, so the bound does not go below where it started.
// held, when not 0, is the lowest id the claim left out because its row was being given back after
// an unanswered COMMIT: the bound stays at or below it, since the return may end before this claim
// does, and the row must then be the next claims' to take, not a probe's to find (with
// --stop-when-empty, a worker stopped with 16 such rows below the bound in a network-fault test), or
// a row the claim saw available and did not try (optimistic's random picks from its window).
func (f *idFloors) claimed(c *Conn, queue string, from int64, jobs []*Job, limit int, held int64) {
	if len(jobs) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*idFloor{}
		f.ctx, f.cancel = context.WithCancel(context.Background())
	}
	b := f.m[queue]
	if b == nil {
		b = &idFloor{nextProbe: c.clock().Add(floorProbeEvery)}
		f.m[queue] = b
	}
	b.took = c.clock()
	next := jobs[len(jobs)-1].ID + 1 - floorMargin
	dense := len(jobs) >= limit
	if !dense {
		next = max(next, from)
	}
	if held > 0 && next > held {
		next, dense = held, false
	}
	if b.id < from {
		// Lowered while this claim ran (a probe, a row given back): the rows there come first.
		b.id, b.dense = min(b.id, max(next, 0)), false
		return
	}
	b.id, b.dense = max(next, 0), dense
}

// setDry records whether queue's last claim came back empty.
func (f *idFloors) setDry(queue string, dry bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dry == nil {
		f.dry = map[string]bool{}
	}
	f.dry[queue] = dry
}

// isDry reports whether queue's last claim came back empty.
func (f *idFloors) isDry(queue string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dry[queue]
}

// lower moves the bounds of the jobs' queues down to the jobs, given back and claimable again.
func (f *idFloors) lower(jobs []*Job) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range jobs {
		if b := f.m[j.Queue]; b != nil && j.ID < b.id {
			b.id, b.dense = j.ID, false
		}
	}
}

// close ends the probes still running and waits for them.
func (f *idFloors) close() {
	f.mu.Lock()
	if f.cancel != nil {
		f.cancel()
	}
	f.mu.Unlock()
	f.probes.Wait()
}

// wait waits for the probes running now (tests).
func (f *idFloors) wait() { f.probes.Wait() }
