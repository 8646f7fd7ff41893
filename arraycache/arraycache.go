// Package arraycache is Laravel's array cache store (CACHE_DRIVER=array, Laravel's ArrayStore): values
// and locks in the process's own memory, gone when it exits. A PHP worker using it keeps its
// maxExceptions counts, its job middleware's locks and its rate limiters to itself, and no other
// process can reach it (`php artisan queue:restart` writes into the array of the artisan process that
// runs it). An artisan-go worker keeps one such store for the whole process, which its concurrent jobs
// share as one PHP worker's jobs share its store. Values are kept PHP-serialized, as the database and
// file stores keep them.
package arraycache

import (
	"context"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/payload"
)

// entry is a value or a lock's owner with its expiry; a zero expiry never passes.
type entry struct {
	value   string
	expires time.Time
}

// Store is an array cache store. It is safe for concurrent use.
type Store struct {
	mu     sync.Mutex
	values map[string]entry
	locks  map[string]entry
	now    func() time.Time
}

// New returns an empty store on the clock now (nil is time.Now).
func New(now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{values: map[string]entry{}, locks: map[string]entry{}, now: now}
}

// expiry is the time a value put for ttl expires: the zero time (never) for ttl 0 or less.
func (s *Store) expiry(ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return s.now().Add(ttl)
}

// live reads key from m, forgetting it when it has expired, as ArrayStore::get does. s.mu is held.
func (s *Store) live(m map[string]entry, key string) (entry, bool) {
	e, ok := m[key]
	if ok && !e.expires.IsZero() && !s.now().Before(e.expires) {
		delete(m, key)
		return entry{}, false
	}
	return e, ok
}

// CacheGet returns key's value (PHP-serialized), and whether it is there.
func (s *Store) CacheGet(_ context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live(s.values, key)
	return e.value, ok, nil
}

// CachePut keeps a value (PHP-serialized) for ttl; 0 keeps it forever.
func (s *Store) CachePut(_ context.Context, key, value string, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[key] = entry{value: value, expires: s.expiry(ttl)}
	return nil
}

// CacheForever keeps a value that does not expire.
func (s *Store) CacheForever(ctx context.Context, key, value string) error {
	return s.CachePut(ctx, key, value, 0)
}

// CacheAdd keeps a value for ttl unless the key holds one, and says whether it did.
func (s *Store) CacheAdd(_ context.Context, key, value string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live(s.values, key); ok {
		return false, nil
	}
	s.values[key] = entry{value: value, expires: s.expiry(ttl)}
	return true, nil
}

// CacheIncrement is ArrayStore::increment: PHP's (int) of the value plus by, keeping the time the key
// had left; an absent key is put forever with by.
func (s *Store) CacheIncrement(_ context.Context, key string, by int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.increment(key, by), nil
}

// increment adds by to key's value. s.mu is held.
func (s *Store) increment(key string, by int64) int64 {
	e, ok := s.live(s.values, key)
	n := by
	if ok {
		v, _ := payload.Unserialize([]byte(e.value))
		n += payload.IntCast(v)
	}
	s.values[key] = entry{value: serialize(n), expires: e.expires}
	return n
}

// CacheCount is the worker's maxExceptions counting, as Laravel's Worker does it: 0 put for ttl when
// the key holds nothing true, then incremented.
func (s *Store) CacheCount(_ context.Context, key string, ttl time.Duration) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live(s.values, key)
	if ok {
		v, _ := payload.Unserialize([]byte(e.value))
		ok = payload.IntCast(v) != 0
	}
	if !ok {
		s.values[key] = entry{value: serialize(int64(0)), expires: s.expiry(ttl)}
	}
	return s.increment(key, 1), nil
}

// CacheForget deletes the key.
func (s *Store) CacheForget(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.values, key)
	return nil
}

// LockAcquire takes the lock name for owner for seconds (0: until released), as ArrayLock::acquire
// does: refused while another holds it unexpired.
func (s *Store) LockAcquire(_ context.Context, name, owner string, seconds int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, held := s.live(s.locks, name); held {
		return false, nil
	}
	s.locks[name] = entry{value: owner, expires: s.expiry(time.Duration(seconds) * time.Second)}
	return true, nil
}

// LockRelease releases the lock name if owner holds it, and says whether it did.
func (s *Store) LockRelease(_ context.Context, name, owner string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, held := s.live(s.locks, name); !held || e.value != owner {
		return false, nil
	}
	delete(s.locks, name)
	return true, nil
}

// LockHeld reports whether the lock name is held.
func (s *Store) LockHeld(_ context.Context, name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, held := s.live(s.locks, name)
	return held, nil
}

// ForceRelease deletes the lock name whoever holds it, as Lock::forceRelease does.
func (s *Store) ForceRelease(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.locks, name)
	return nil
}

// SerializesValues reports that the store keeps values PHP-serialized, numbers included.
func (s *Store) SerializesValues() bool { return true }

// serialize is PHP's serialize() of an int.
func serialize(n int64) string {
	b, _ := payload.Serialize(n)
	return string(b)
}
