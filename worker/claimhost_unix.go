//go:build unix

package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// hostSlots extends a claim bound to the other processes of the host: one lock file per claim that may
// run at once, of which a claim holds one (flock, which the kernel releases when a process dies). A
// process keeps one descriptor per file; flock does not exclude two holders of one descriptor, so held
// marks the files this process's claims hold.
type hostSlots struct {
	mu    sync.Mutex
	files []*os.File
	held  []bool
}

// openHostSlots opens the n lock files of scope in the temporary directory, or returns nil when it
// cannot (the bound then holds within the process only). The files are opened for reading, which is
// all flock needs, so that processes of other users can share them.
func openHostSlots(scope string, n int) *hostSlots {
	sum := sha256.Sum256([]byte(scope))
	h := &hostSlots{held: make([]bool, n)}
	for i := range n {
		name := filepath.Join(os.TempDir(), fmt.Sprintf("artisan-go-claims-%s-%d.lock", hex.EncodeToString(sum[:12]), i))
		f, err := os.OpenFile(name, os.O_RDONLY|os.O_CREATE, 0o644)
		if err != nil {
			for _, f := range h.files {
				f.Close()
			}
			return nil
		}
		h.files = append(h.files, f)
	}
	return h
}

// acquire takes a slot no other process holds, waiting up to ctx, and returns its release.
func (h *hostSlots) acquire(ctx context.Context) (func(), error) {
	wait := 50 * time.Microsecond
	for {
		if release := h.try(); release != nil {
			return release, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Millisecond)
	}
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
		fd := int(h.files[i].Fd())
		if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			continue
		}
		h.held[i] = true
		return func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			_ = syscall.Flock(fd, syscall.LOCK_UN)
			h.held[i] = false
		}
	}
	return nil
}
