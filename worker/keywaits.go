package worker

import (
	"context"
	"sync"
)

// keyWaits lets the jobs of one worker hold a key one at a time, each waiting for the one before it:
// WithoutOverlapping's jobs of one key meet only across workers, as they do between PHP workers, which
// run one job each. Keys no job holds or waits for take no memory.
type keyWaits struct {
	mu   sync.Mutex
	keys map[string]*keyWait
}

type keyWait struct {
	turn  chan struct{} // holds a token while a job has the key
	users int           // jobs holding or waiting for the key
}

// take waits until no other job of this worker holds key, or ctx is done, and returns the function that
// gives the key up.
func (k *keyWaits) take(ctx context.Context, key string) (leave func(), err error) {
	k.mu.Lock()
	if k.keys == nil {
		k.keys = map[string]*keyWait{}
	}
	kw := k.keys[key]
	if kw == nil {
		kw = &keyWait{turn: make(chan struct{}, 1)}
		k.keys[key] = kw
	}
	kw.users++
	k.mu.Unlock()
	gone := func() {
		k.mu.Lock()
		if kw.users--; kw.users == 0 {
			delete(k.keys, key)
		}
		k.mu.Unlock()
	}
	select {
	case kw.turn <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-kw.turn; gone() }) }, nil
	case <-ctx.Done():
		gone()
		return nil, ctx.Err()
	}
}
