package worker

import (
	"math"
	"sync"
)

// idSetChunk is how many consecutive ids one chunk of an idSet holds, one bit each.
const idSetChunk = 4096

// idSetMaxChunks bounds an idSet's memory: 4,096 chunks of 512 bytes, 2 MiB, which hold at least
// 4,096 ids however sparse, and 16.7 million consecutive ones.
const idSetMaxChunks = 4096

// idSet remembers row ids as bits in chunks of consecutive ids, so that a worker can remember every
// row it left for PHP in a backlog of millions: a row's id then tells it claimed again from one seen
// for the first time. Past its bound it forgets the lowest ids first (the oldest rows).
type idSet struct {
	mu        sync.Mutex
	maxChunks int
	chunks    map[int64]*[idSetChunk / 64]uint64
}

func newIDSet(maxChunks int) *idSet {
	return &idSet{maxChunks: maxChunks, chunks: map[int64]*[idSetChunk / 64]uint64{}}
}

// seen remembers id and reports whether it was remembered already.
func (s *idSet) seen(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, bit := id/idSetChunk, uint(id%idSetChunk)
	c := s.chunks[key]
	if c == nil {
		if len(s.chunks) >= s.maxChunks {
			s.forgetLowest()
		}
		c = new([idSetChunk / 64]uint64)
		s.chunks[key] = c
	}
	was := c[bit/64]&(1<<(bit%64)) != 0
	c[bit/64] |= 1 << (bit % 64)
	return was
}

// forgetLowest drops the chunk of the lowest ids.
func (s *idSet) forgetLowest() {
	low := int64(math.MaxInt64)
	for key := range s.chunks {
		low = min(low, key)
	}
	delete(s.chunks, low)
}

// has reports whether id is remembered.
func (s *idSet) has(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chunks[id/idSetChunk]
	bit := uint(id % idSetChunk)
	return c != nil && c[bit/64]&(1<<(bit%64)) != 0
}
