package worker

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// keyWaits lets the jobs of one worker hold a key one at a time, lowest job id first, as one PHP worker
// runs them: WithoutOverlapping's jobs of one key then meet only across workers, as they do between PHP
// workers. Keys no job holds or waits for take no memory.
type keyWaits struct {
	mu   sync.Mutex
	keys map[string][]*keyWaiter // the jobs waiting for a held key, lowest id first
}

type keyWaiter struct {
	id   int64
	turn chan struct{} // closed when the key is handed to this job
}

// take waits until no other job of this worker holds key and no job with a lower id waits for it, and
// returns the function that hands the key on. It gives up (ok false) when ctx is done or stop is closed.
// When maxWaiting jobs wait already, it does not wait (full): the job goes on without the key.
func (k *keyWaits) take(ctx context.Context, stop <-chan struct{}, key string, id int64, maxWaiting int) (leave func(), ok, full bool) {
	leave = func() { k.leave(key) }
	k.mu.Lock()
	if k.keys == nil {
		k.keys = map[string][]*keyWaiter{}
	}
	waiting, held := k.keys[key]
	if !held {
		k.keys[key] = nil
		k.mu.Unlock()
		return leave, true, false
	}
	if len(waiting) >= maxWaiting {
		k.mu.Unlock()
		return nil, true, true
	}
	me := &keyWaiter{id: id, turn: make(chan struct{})}
	i, _ := slices.BinarySearchFunc(waiting, id, func(w *keyWaiter, id int64) int { return cmp.Compare(w.id, id) })
	k.keys[key] = slices.Insert(waiting, i, me)
	k.mu.Unlock()
	select {
	case <-me.turn:
		return leave, true, false
	case <-ctx.Done():
	case <-stop:
	}
	k.mu.Lock()
	select {
	case <-me.turn: // handed over meantime: pass it on
		k.mu.Unlock()
		k.leave(key)
		return nil, false, false
	default:
	}
	k.keys[key] = slices.DeleteFunc(k.keys[key], func(w *keyWaiter) bool { return w == me })
	k.mu.Unlock()
	return nil, false, false
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
// one of them ends.
type keyLimits struct {
	mu   sync.Mutex
	keys map[string]*keyLimit
}

type keyLimit struct {
	running int64
	changed chan struct{} // closed when one of them ends; made by the first that waits
}

// enter counts one more job running under key when fewer than limit do, and returns the function that
// ends it; otherwise it returns a channel closed when one of them ends.
func (k *keyLimits) enter(key string, limit int64) (leave func(), ended <-chan struct{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys == nil {
		k.keys = map[string]*keyLimit{}
	}
	kl := k.keys[key]
	if kl == nil {
		kl = &keyLimit{}
		k.keys[key] = kl
	}
	if kl.running < limit {
		kl.running++
		var once sync.Once
		return func() { once.Do(func() { k.leave(key, kl) }) }, nil
	}
	if kl.changed == nil {
		kl.changed = make(chan struct{})
	}
	return nil, kl.changed
}

func (k *keyLimits) leave(key string, kl *keyLimit) {
	k.mu.Lock()
	defer k.mu.Unlock()
	kl.running--
	if kl.changed != nil {
		close(kl.changed)
		kl.changed = nil
	}
	if kl.running == 0 {
		delete(k.keys, key)
	}
}
