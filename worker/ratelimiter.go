package worker

import (
	"context"
	"errors"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/artisan-go/artisan-go/laravel"
)

// LockStore takes and releases cache locks by name (without the store's prefix) and owner, as
// Laravel's Lock::get and Lock::release do. The database store (cache_locks) and redislock are ones.
type LockStore interface {
	LockAcquire(ctx context.Context, name, owner string, seconds int64) (bool, error)
	LockRelease(ctx context.Context, name, owner string) (bool, error)
}

// LimiterStore is the cache store operations Laravel's RateLimiter uses, by key without the store's
// prefix. *laravel.Conn (values PHP-serialized) and redislock (numbers as they are) are ones.
type LimiterStore interface {
	CacheGet(ctx context.Context, key string) (string, bool, error)
	CacheAdd(ctx context.Context, key, value string, ttl time.Duration) (bool, error)
	CacheIncrement(ctx context.Context, key string, by int64) (int64, error)
	CachePut(ctx context.Context, key, value string, ttl time.Duration) error
	CacheForget(ctx context.Context, key string) error
}

// The database is the middleware's default store: *laravel.Conn holds cache_locks rows and values.
var (
	_ LockStore    = (*laravel.Conn)(nil)
	_ LimiterStore = (*laravel.Conn)(nil)
)

// keyTurns serializes work on the same key among goroutines: a fixed set of mutexes, one per key's
// hash, so that the many keys of per-user limiters take no memory of their own.
type keyTurns [64]sync.Mutex

// turn returns the mutex that key's work takes.
func (t *keyTurns) turn(key string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(key))
	return &t[h.Sum32()%uint32(len(t))]
}

// rateLimiter is Laravel's Illuminate\Cache\RateLimiter on the worker's cache store: a hit counter
// under key and its expiry time under key+":timer", both with the decay as their TTL.
type rateLimiter struct {
	store      LimiterStore
	serialized bool // the database store keeps PHP-serialized values; Redis keeps numbers bare
	now        func() time.Time
}

func (w *Worker) rateLimiter() *rateLimiter {
	return &rateLimiter{store: w.mwValues, serialized: w.mwSerialized, now: w.clock}
}

// cleanKey is RateLimiter::cleanRateLimiterKey: htmlentities (PHP 8.1+'s default flags), then each
// entity named by letters alone reduced to its first letter: & to a, " to q, < to l, > to g, é to e;
// ' becomes &#039; and ² &sup2;, which keep their digits. A byte that is not UTF-8 becomes U+FFFD,
// as ENT_SUBSTITUTE writes it.
func cleanKey(key string) string {
	var b strings.Builder
	for i, r := range key {
		switch {
		case r == '&':
			b.WriteByte('a')
		case r == '"':
			b.WriteByte('q')
		case r == '<':
			b.WriteByte('l')
		case r == '>':
			b.WriteByte('g')
		case r == '\'':
			b.WriteString("&#039;")
		case r < utf8.RuneSelf:
			b.WriteByte(key[i])
		default:
			if s, ok := htmlEntityKeys[r]; ok {
				b.WriteString(s)
			} else {
				b.WriteRune(r) // utf8.RuneError for a byte that is not UTF-8
			}
		}
	}
	return b.String()
}

func (l *rateLimiter) encode(n int64) string {
	if l.serialized {
		return laravel.SerializeInt(n)
	}
	return strconv.FormatInt(n, 10)
}

// get reads a number as Repository::get does; a missing key is 0.
func (l *rateLimiter) get(ctx context.Context, key string) (int64, bool, error) {
	v, ok, err := l.store.CacheGet(ctx, key)
	if err != nil || !ok {
		return 0, false, err
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, true, nil
	}
	n, _ := laravel.UnserializeNumber(v)
	return n, true, nil
}

// tooManyAttempts is RateLimiter::tooManyAttempts: the count has reached max while the timer lives;
// a count left over without its timer is forgotten.
func (l *rateLimiter) tooManyAttempts(ctx context.Context, key string, max int64) (bool, error) {
	key = cleanKey(key)
	n, _, err := l.get(ctx, key)
	if err != nil || n < max {
		return false, err
	}
	if _, ok, err := l.store.CacheGet(ctx, key+":timer"); err != nil || ok {
		return ok, err
	}
	return false, l.store.CacheForget(ctx, key)
}

// remaining is how many more attempts the count allows before tooManyAttempts (0 when it has).
func (l *rateLimiter) remaining(ctx context.Context, key string, maxAttempts int64) (int64, error) {
	key = cleanKey(key)
	n, _, err := l.get(ctx, key)
	return max(maxAttempts-n, 0), err
}

// hit is RateLimiter::hit: start the timer and the counter for decay seconds if absent, then count one.
func (l *rateLimiter) hit(ctx context.Context, key string, decay int64) error {
	key = cleanKey(key)
	ttl := time.Duration(decay) * time.Second
	if _, err := l.store.CacheAdd(ctx, key+":timer", l.encode(l.now().Unix()+decay), ttl); err != nil {
		return err
	}
	added, err := l.store.CacheAdd(ctx, key, l.encode(0), ttl)
	if err != nil {
		return err
	}
	hits, err := l.store.CacheIncrement(ctx, key, 1)
	if errors.Is(err, laravel.ErrCacheMiss) {
		hits, err = 0, nil // the database store's increment of a missing key is false, (int) 0
	}
	if err != nil {
		return err
	}
	if !added && hits == 1 {
		return l.store.CachePut(ctx, key, l.encode(1), ttl)
	}
	return nil
}

// clear is RateLimiter::clear: forget the counter and its timer.
func (l *rateLimiter) clear(ctx context.Context, key string) error {
	key = cleanKey(key)
	if err := l.store.CacheForget(ctx, key); err != nil {
		return err
	}
	return l.store.CacheForget(ctx, key+":timer")
}

// availableIn is RateLimiter::availableIn: seconds until the timer runs out, at least 0.
func (l *rateLimiter) availableIn(ctx context.Context, key string) (int64, error) {
	key = cleanKey(key)
	t, _, err := l.get(ctx, key+":timer")
	return max(0, t-l.now().Unix()), err
}
