package worker

import "sync"

// idRing remembers the most recent row ids handed back to PHP, up to a limit, so that claims skip them
// without the memory growing with the queue's history. A forgotten id costs at most one more hand-back.
type idRing struct {
	mu    sync.Mutex
	limit int
	ids   []int64 // grows to limit as ids come, so that a ring never used costs nothing
	next  int
	set   map[int64]struct{}
}

func newIDRing(limit int) *idRing {
	return &idRing{limit: limit, set: map[int64]struct{}{}}
}

// add remembers id, forgetting the oldest one when full; it reports whether id was new, and whether
// one was forgotten.
func (r *idRing) add(id int64) (added, wrapped bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.set[id]; ok {
		return false, false
	}
	if len(r.ids) < r.limit {
		r.ids = append(r.ids, id)
	} else {
		wrapped = true
		delete(r.set, r.ids[r.next])
		r.ids[r.next] = id
		r.next = (r.next + 1) % len(r.ids)
	}
	r.set[id] = struct{}{}
	return true, wrapped
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
