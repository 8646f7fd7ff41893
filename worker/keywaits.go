package worker

import (
	"cmp"
	"context"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// keyWaits lets the jobs of one worker hold a key one at a time, in the order they were claimed
// (ticket), as one PHP worker runs them: WithoutOverlapping's jobs of one key then meet only across
// workers, as they do between PHP workers. Keys no job holds or waits for take no memory.
type keyWaits struct {
	mu   sync.Mutex
	keys map[string][]*keyWaiter // the jobs waiting for a held key, lowest ticket first
}

type keyWaiter struct {
	ticket uint64
	turn   chan struct{} // closed when the key is handed to this job
}

// take waits until no other job of this worker holds key and no job claimed before this one (ticket)
// waits for it, and returns the function that hands the key on; waited says whether it had to wait.
// It gives up (ok false) when ctx is done or stop is closed. When maxWaiting jobs wait already, it does
// not wait (full): the job goes on without the key. in is called once the job holds the key or is in
// line for it, before it waits.
func (k *keyWaits) take(ctx context.Context, stop <-chan struct{}, key string, ticket uint64, maxWaiting int, in func()) (leave func(), ok, full, waited bool) {
	leave = func() { k.leave(key) }
	k.mu.Lock()
	if k.keys == nil {
		k.keys = map[string][]*keyWaiter{}
	}
	waiting, held := k.keys[key]
	if !held {
		k.keys[key] = nil
		k.mu.Unlock()
		in()
		return leave, true, false, false
	}
	if len(waiting) >= maxWaiting {
		k.mu.Unlock()
		in()
		return nil, true, true, false
	}
	me := &keyWaiter{ticket: ticket, turn: make(chan struct{})}
	i, _ := slices.BinarySearchFunc(waiting, ticket, func(w *keyWaiter, t uint64) int { return cmp.Compare(w.ticket, t) })
	k.keys[key] = slices.Insert(waiting, i, me)
	k.mu.Unlock()
	in()
	select {
	case <-me.turn:
		return leave, true, false, true
	case <-ctx.Done():
	case <-stop:
	}
	k.mu.Lock()
	select {
	case <-me.turn: // handed over meantime: pass it on
		k.mu.Unlock()
		k.leave(key)
		return nil, false, false, true
	default:
	}
	k.keys[key] = slices.DeleteFunc(k.keys[key], func(w *keyWaiter) bool { return w == me })
	k.mu.Unlock()
	return nil, false, false, true
}

// leave hands key to the first job waiting for it, or frees it.
func (k *keyWaits) leave(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	waiting := k.keys[key]
	if len(waiting) == 0 {
		delete(k.keys, key)
		return
	}
	close(waiting[0].turn)
	k.keys[key] = waiting[1:]
}

// keyLimits bounds how many jobs of one worker run under a key at once, the bound read again each time
// one of them ends, and lets them in in the order they were claimed (ticket).
type keyLimits struct {
	mu   sync.Mutex
	keys map[string]*keyLimit
	// ended counts the jobs that ended, by a hash of their key (keyLimitsEnded buckets): a limit read
	// before one of them ended may not count what that job did (its exception), so enter refuses it.
	ended [keyLimitsEnded]uint64
}

// keyLimitsEnded is how many buckets keyLimits.ended has; keys sharing one only look again more often.
const keyLimitsEnded = 64

// bucket is key's place in ended.
func (k *keyLimits) bucket(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % keyLimitsEnded)
}

// endedSoFar returns the count of jobs ended under key (and the keys sharing its bucket), to read before
// the limit and give to enter.
func (k *keyLimits) endedSoFar(key string) uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ended[k.bucket(key)]
}

type keyLimit struct {
	running int64
	waiting []uint64      // tickets of the jobs waiting, lowest first
	changed chan struct{} // closed when one of them ends or gives up; made by the first that waits
}

// enter counts one more job running under key when fewer than limit do and no job claimed before it
// waits, and returns the function that ends it; otherwise the job waits in line, and enter returns a
// channel closed when that may have changed (call enter again, or giveUp).
func (k *keyLimits) enter(key string, limit int64, ticket uint64, ended uint64) (leave func(), changed <-chan struct{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ended[k.bucket(key)] != ended {
		// A job of the key ended after the limit was read: read it again.
		return nil, closedChan
	}
	if k.keys == nil {
		k.keys = map[string]*keyLimit{}
	}
	kl := k.keys[key]
	if kl == nil {
		kl = &keyLimit{}
		k.keys[key] = kl
	}
	i, queued := slices.BinarySearch(kl.waiting, ticket)
	if kl.running < limit && i == 0 {
		if queued {
			kl.waiting = kl.waiting[1:]
			kl.wake() // the next in line may fit too
		}
		kl.running++
		var once sync.Once
		return func() { once.Do(func() { k.leave(key, kl) }) }, nil
	}
	if !queued {
		kl.waiting = slices.Insert(kl.waiting, i, ticket)
	}
	if kl.changed == nil {
		kl.changed = make(chan struct{})
	}
	return nil, kl.changed
}

// giveUp takes a job that waited out of line.
func (k *keyLimits) giveUp(key string, ticket uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	kl := k.keys[key]
	if kl == nil {
		return
	}
	if i, queued := slices.BinarySearch(kl.waiting, ticket); queued {
		kl.waiting = slices.Delete(kl.waiting, i, i+1)
	}
	kl.wake()
	if kl.running == 0 && len(kl.waiting) == 0 {
		delete(k.keys, key)
	}
}

func (k *keyLimits) leave(key string, kl *keyLimit) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ended[k.bucket(key)]++
	kl.running--
	kl.wake()
	if kl.running == 0 && len(kl.waiting) == 0 {
		delete(k.keys, key)
	}
}

// closedChan is a channel that is always closed.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// wake tells the jobs waiting under the key to look again.
func (kl *keyLimit) wake() {
	if kl.changed != nil {
		close(kl.changed)
		kl.changed = nil
	}
}

// preGate lets a job with gates wait until every job claimed before it has taken its place at its own
// (holds its key, or is in line for it), so that jobs of one key meet there in the order they were
// claimed, not in the order their goroutines got there.
type preGate struct {
	mu      sync.Mutex
	waiters atomic.Int32
	changed chan struct{} // closed when a job passes while some wait; made by the first that waits
}

// passedPreGate records that rj took its place at its first gate, or has none, or left before them.
func (w *Worker) passedPreGate(rj *runningJob) {
	if !rj.preGate.Swap(false) || w.preGate.waiters.Load() == 0 {
		return
	}
	w.preGate.mu.Lock()
	if w.preGate.changed != nil {
		close(w.preGate.changed)
		w.preGate.changed = nil
	}
	w.preGate.mu.Unlock()
}

// waitClaimedBefore waits until no running job claimed before rj is short of its gates; false when
// ctx is done or the worker stops first.
func (w *Worker) waitClaimedBefore(ctx context.Context, rj *runningJob) bool {
	w.preGate.waiters.Add(1)
	defer w.preGate.waiters.Add(-1)
	for {
		w.preGate.mu.Lock()
		if w.preGate.changed == nil {
			w.preGate.changed = make(chan struct{})
		}
		changed := w.preGate.changed
		w.preGate.mu.Unlock()
		blocked := false
		w.mu.Lock()
		for o := range w.running {
			if o.ticket < rj.ticket && o.preGate.Load() {
				blocked = true
				break
			}
		}
		w.mu.Unlock()
		if !blocked {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		case <-rj.stopping:
			return false
		}
	}
}

// runStop is what a Run stops on that a job checks when its turn comes after a wait.
type runStop struct {
	started time.Time
	restart string // queue:restart's value when the Run started
}

// stoppedMeanwhile reports whether the Run stopped, or should stop, by --max-time or queue:restart
// while a job waited for its turn: PHP's worker checks them after each job, so the job it would have
// popped next does not start. It then tells the waiting jobs (closeStopping).
func (w *Worker) stoppedMeanwhile(ctx context.Context, rj *runningJob) bool {
	select {
	case <-rj.stopping:
		return true
	default:
	}
	rs := w.runStop.Load()
	if rs == nil {
		return false
	}
	stop := w.cfg.MaxTime > 0 && time.Since(rs.started) >= w.cfg.MaxTime
	if !stop && w.cfg.CacheEnabled {
		if v, err := w.cacheGet(ctx, restartKey); err == nil && v != rs.restart {
			stop = true
		}
	}
	if stop {
		w.closeStopping()
	}
	return stop
}
