//go:build unix

package worker

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"

	"github.com/artisan-go/artisan-go/internal/hostlock"
)

// hostSlots extends a claim bound to the other processes of the host: one lock file per claim that may
// run at once, of which a claim holds one (flock, which the kernel releases when a process dies). A
// process keeps one descriptor per file; flock does not exclude two holders of one descriptor, so held
// marks the files this process's claims hold or wait for.
type hostSlots struct {
	mu    sync.Mutex
	files []*os.File
	held  []bool        // held or waited on by a claim of this process
	freed chan struct{} // closed when a slot of this process is freed
}

// openHostSlots opens the n lock files of scope (see hostlock.Open), or says why it cannot (the bound
// then holds within the process only).
func openHostSlots(scope string, n int) (*hostSlots, error) {
	h := &hostSlots{held: make([]bool, n), freed: make(chan struct{})}
	for i := range n {
		f, err := hostlock.Open(scope, strconv.Itoa(i))
		if err != nil {
			for _, f := range h.files {
				f.Close()
			}
			return nil, err
		}
		h.files = append(h.files, f)
	}
	return h, nil
}

// acquire takes a slot no other process holds, waiting up to ctx, and returns its release. When every
// slot this process does not hold is taken, it waits in flock on one of them, at random, so that a slot
// freed by another process passes to a waiter at once.
func (h *hostSlots) acquire(ctx context.Context) (func(), error) {
	for {
		freed := h.freedNow() // before trying: a slot freed after the try wakes the wait
		if release := h.try(); release != nil {
			return release, nil
		}
		if i := h.reserve(); i >= 0 {
			return h.wait(ctx, i, freed)
		}
		// Every slot is held or waited on by this process (more claims than slots): wait for one.
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// wait waits in flock for slot i, reserved by this caller, until ctx ends. A slot this process frees
// meanwhile (freed is closed) is taken instead, and slot i is then freed as soon as it comes, as when
// ctx ends.
func (h *hostSlots) wait(ctx context.Context, i int, freed <-chan struct{}) (func(), error) {
	got := make(chan error, 1)
	go func() { got <- hostlock.Wait(h.files[i]) }()
	abandon := func() { go func() { h.free(i, <-got == nil) }() }
	for {
		select {
		case err := <-got:
			if err != nil {
				h.free(i, false)
				return nil, err
			}
			return func() { h.free(i, true) }, nil
		case <-freed:
			freed = h.freedNow()
			if release := h.try(); release != nil {
				abandon()
				return release, nil
			}
		case <-ctx.Done():
			abandon()
			return nil, ctx.Err()
		}
	}
}

// freedNow returns the channel the next free of a slot of this process closes.
func (h *hostSlots) freedNow() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.freed
}

// try takes a free slot without waiting, starting at a random one, or returns nil.
func (h *hostSlots) try() func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.files)
	start := rand.IntN(n)
	for k := range n {
		i := (start + k) % n
		if h.held[i] {
			continue
		}
		if !hostlock.Try(h.files[i]) {
			continue
		}
		h.held[i] = true
		return func() { h.free(i, true) }
	}
	return nil
}

// reserve marks a slot this process neither holds nor waits on, at random, as waited on, and returns
// it, or -1.
func (h *hostSlots) reserve() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.files)
	start := rand.IntN(n)
	for k := range n {
		if i := (start + k) % n; !h.held[i] {
			h.held[i] = true
			return i
		}
	}
	return -1
}

// free unlocks slot i (when locked) and lets a waiter of this process try again.
func (h *hostSlots) free(i int, locked bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if locked {
		hostlock.Unlock(h.files[i])
	}
	h.held[i] = false
	close(h.freed)
	h.freed = make(chan struct{})
}
