package worker

import "sync"

// idRing remembers the most recent row ids handed back to PHP, up to a limit, so that claims skip them
// without the memory growing with the queue's history. A forgotten id costs at most one more hand-back.
type idRing struct {
	mu   sync.Mutex
	ids  []int64
	next int
	set  map[int64]struct{}
}

func newIDRing(limit int) *idRing {
	return &idRing{ids: make([]int64, 0, limit), set: make(map[int64]struct{}, limit)}
}

// add remembers id, forgetting the oldest one when full; it reports whether one was forgotten.
func (r *idRing) add(id int64) (wrapped bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.set[id]; ok {
		return false
	}
	if len(r.ids) < cap(r.ids) {
		r.ids = append(r.ids, id)
	} else {
		wrapped = true
		delete(r.set, r.ids[r.next])
		r.ids[r.next] = id
		r.next = (r.next + 1) % len(r.ids)
	}
	r.set[id] = struct{}{}
	return wrapped
}

// seen remembers id and reports whether it was remembered already.
func (r *idRing) seen(id int64) bool {
	if r.has(id) {
		return true
	}
	r.add(id)
	return false
}

// has reports whether id is remembered.
func (r *idRing) has(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.set[id]
	return ok
}

// list returns a copy of the remembered ids, or nil when there are none.
func (r *idRing) list() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ids) == 0 {
		return nil
	}
	return append([]int64(nil), r.ids...)
}
