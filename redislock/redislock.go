// Package redislock reaches a Laravel cache store kept in Redis: it releases locks as
// RedisLock::forceRelease does, so a Go worker can free the lock a ShouldBeUnique job took at dispatch,
// and it reads and counts cache values as RedisStore does, so the worker sees `php artisan
// queue:restart`, maintenance mode and paused queues, and counts maxExceptions.
//
// It speaks just the Redis commands it needs (AUTH, SELECT, GET, SET, INCRBY, DEL) over one connection
// instead of depending on a full client library: the worker issues a few commands per second and one
// per finished unique job, and a small client is easy to audit and adds nothing to the module's
// dependencies.
package redislock

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// ErrRedis is wrapped by every error the server returns (an -ERR reply).
var ErrRedis = errors.New("redis error")

// errNil is do's answer to a nil reply (a missing key).
var errNil = errors.New("redis nil reply")

// Params says where the locks live.
type Params struct {
	// Addr is host:port, e.g. 127.0.0.1:6379 (REDIS_HOST, REDIS_PORT).
	Addr string
	// Password is REDIS_PASSWORD; "" sends no AUTH.
	Password string
	// Username is REDIS_USERNAME, an ACL user (Redis 6+): AUTH then sends it with the password.
	Username string
	// TLS, when set, connects over TLS with it (a tls scheme, rediss:// in REDIS_URL).
	TLS *tls.Config
	// DB is the database of the store's lock connection: Laravel 8+ skeletons lock on the "default"
	// connection (REDIS_DB, 0), not on the cache connection (REDIS_CACHE_DB).
	DB int
	// Prefix is what Laravel puts before a lock name: the Redis client prefix (REDIS_PREFIX) and the
	// cache store prefix with its colon; see LockPrefix.
	Prefix string
	// ClientPrefix is the Redis client prefix alone (REDIS_PREFIX), which phpredis puts before the
	// keys of the Redis facade, such as the *WithRedis job middleware's limiters.
	ClientPrefix string
	// DialTimeout bounds connecting; 0 means 5 seconds.
	DialTimeout time.Duration
}

// LockPrefix returns the prefix of a lock's Redis key: phpredis puts the client prefix (REDIS_PREFIX)
// before every key, and RedisStore puts the cache prefix and ":" before the lock name.
func LockPrefix(redisPrefix, cachePrefix string) string {
	if cachePrefix != "" {
		cachePrefix += ":"
	}
	return redisPrefix + cachePrefix
}

// Locks is a connection to one Redis database of a cache store: the lock connection's database for
// locks, the cache connection's for values (Laravel's skeletons keep them apart). It is safe for
// concurrent use.
type Locks struct {
	p    Params
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

// Open connects, authenticates and selects the database, so that a wrong address or password is
// reported at start-up.
func Open(ctx context.Context, p Params) (*Locks, error) {
	if p.DialTimeout <= 0 {
		p.DialTimeout = 5 * time.Second
	}
	l := &Locks{p: p}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.connect(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Locks) connect(ctx context.Context) error {
	d := net.Dialer{Timeout: l.p.DialTimeout}
	c, err := d.DialContext(ctx, "tcp", l.p.Addr)
	if err != nil {
		return fmt.Errorf("connect to Redis at %s: %w; check REDIS_HOST and REDIS_PORT", l.p.Addr, err)
	}
	if l.p.TLS != nil {
		tc := tls.Client(c, l.p.TLS)
		hctx, cancel := context.WithTimeout(ctx, l.p.DialTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			c.Close()
			return fmt.Errorf("connect to Redis at %s over TLS: %w; check that the server speaks TLS on that port (rediss:// in REDIS_URL) and cache.redis.ca_file", l.p.Addr, err)
		}
		c = tc
	}
	l.conn, l.r = c, bufio.NewReader(c)
	if l.p.Password != "" || l.p.Username != "" {
		args := []string{"AUTH", l.p.Password}
		if l.p.Username != "" {
			args = []string{"AUTH", l.p.Username, l.p.Password}
		}
		if _, err := l.do(ctx, args...); err != nil {
			l.drop()
			return fmt.Errorf("authenticate to Redis at %s: %w; check REDIS_USERNAME and REDIS_PASSWORD", l.p.Addr, err)
		}
	}
	if l.p.DB != 0 {
		if _, err := l.do(ctx, "SELECT", strconv.Itoa(l.p.DB)); err != nil {
			l.drop()
			return fmt.Errorf("select Redis database %d at %s: %w", l.p.DB, l.p.Addr, err)
		}
	}
	return nil
}

func (l *Locks) drop() {
	if l.conn != nil {
		l.conn.Close()
	}
	l.conn, l.r = nil, nil
}

// ForceRelease deletes the lock called name (without prefix), whoever owns it. Releasing a lock that
// does not exist does nothing.
func (l *Locks) ForceRelease(ctx context.Context, name string) error {
	if _, err := l.command(ctx, "DEL", l.p.Prefix+name); err != nil {
		return fmt.Errorf("release Redis lock %s: %w", name, err)
	}
	return nil
}

// CacheGet returns the value stored under key (without prefix) as RedisStore keeps it: numbers as
// they are, every other value PHP-serialized. ok is false when the key is absent.
func (l *Locks) CacheGet(ctx context.Context, key string) (value string, ok bool, err error) {
	v, err := l.command(ctx, "GET", l.p.Prefix+key)
	switch {
	case errors.Is(err, errNil):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read Redis cache key %s: %w", key, err)
	}
	return v, true, nil
}

// CacheCount counts one more under key as Laravel's worker counts a job's exceptions: when the key is
// absent it puts 0 for ttl first (RedisStore::put), then increments it (RedisStore::increment).
func (l *Locks) CacheCount(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	k := l.p.Prefix + key
	secs := strconv.FormatInt(max(int64(ttl/time.Second), 1), 10)
	if _, err := l.command(ctx, "SET", k, "0", "EX", secs, "NX"); err != nil && !errors.Is(err, errNil) {
		return 0, fmt.Errorf("count Redis cache key %s: %w", key, err)
	}
	v, err := l.command(ctx, "INCRBY", k, "1")
	if err != nil {
		return 0, fmt.Errorf("count Redis cache key %s: %w", key, err)
	}
	return strconv.ParseInt(v, 10, 64)
}

// CacheForever stores value under key (without prefix) with no expiry, as RedisStore::forever does;
// value is what the store keeps: a number as it is, anything else PHP-serialized.
func (l *Locks) CacheForever(ctx context.Context, key, value string) error {
	if _, err := l.command(ctx, "SET", l.p.Prefix+key, value); err != nil {
		return fmt.Errorf("write Redis cache key %s: %w", key, err)
	}
	return nil
}

// CacheForget deletes key (without prefix).
func (l *Locks) CacheForget(ctx context.Context, key string) error {
	if _, err := l.command(ctx, "DEL", l.p.Prefix+key); err != nil {
		return fmt.Errorf("forget Redis cache key %s: %w", key, err)
	}
	return nil
}

// command runs one command whose reply is a string, redialling a broken connection once.
func (l *Locks) command(ctx context.Context, args ...string) (string, error) {
	return stringReply(l.commandAny(ctx, args...))
}

// stringReply returns a reply that must be a string.
func stringReply(v any, err error) (string, error) {
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("unexpected Redis array reply %v", v)
	}
	return s, nil
}

// commandAny runs one command, redialling a broken connection once.
func (l *Locks) commandAny(ctx context.Context, args ...string) (any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var v any
	var err error
	for try := 0; try < 2; try++ {
		if l.conn == nil {
			if err = l.connect(ctx); err != nil {
				continue
			}
		}
		if v, err = l.roundTrip(ctx, args...); err == nil || errors.Is(err, ErrRedis) || errors.Is(err, errNil) {
			break
		}
		l.drop()
	}
	return v, err
}

// Command runs one command of any kind and returns its reply: a string for a simple, integer or bulk
// reply, a []any for an array, nil for a nil reply. Tests read and copy a store's keys with it.
func (l *Locks) Command(ctx context.Context, args ...string) (any, error) {
	v, err := l.commandAny(ctx, args...)
	if errors.Is(err, errNil) {
		return nil, nil
	}
	return v, err
}

// Store is a Redis cache store's two connections: Locks on its lock connection's database, where
// ShouldBeUnique jobs keep their locks, and Values on its cache connection's, where queue:restart,
// maintenance mode, paused queues and exception counters live. Laravel's skeletons keep them apart;
// when the two databases are the same, both are one connection.
type Store struct {
	Locks, Values *Locks
}

// OpenStore connects to both databases of a cache store; p.DB is ignored.
func OpenStore(ctx context.Context, p Params, lockDB, cacheDB int) (*Store, error) {
	p.DB = lockDB
	locks, err := Open(ctx, p)
	if err != nil {
		return nil, err
	}
	values := locks
	if cacheDB != lockDB {
		p.DB = cacheDB
		if values, err = Open(ctx, p); err != nil {
			locks.Close()
			return nil, err
		}
	}
	return &Store{Locks: locks, Values: values}, nil
}

// Close closes the connections; a nil Store has none.
func (s *Store) Close() {
	if s == nil {
		return
	}
	s.Locks.Close()
	s.Values.Close()
}

// Close closes the connection.
func (l *Locks) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.drop()
	return nil
}

// do sends one command and reads a simple, integer or bulk reply.
func (l *Locks) do(ctx context.Context, args ...string) (string, error) {
	return stringReply(l.roundTrip(ctx, args...))
}

// roundTrip sends one command and reads its reply: a string, errNil, or for an array a []any of those
// (a nil element is nil).
func (l *Locks) roundTrip(ctx context.Context, args ...string) (any, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	if err := l.conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	if _, err := l.conn.Write(b); err != nil {
		return "", err
	}
	return l.reply(0)
}

// reply reads one reply, arrays nested at most a few levels deep.
func (l *Locks) reply(depth int) (any, error) {
	line, err := l.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 {
		return "", fmt.Errorf("malformed Redis reply %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', ':':
		return body, nil
	case '-':
		return "", fmt.Errorf("%w: %s", ErrRedis, body)
	case '$', '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", fmt.Errorf("malformed Redis reply %q", line)
		}
		if n < 0 {
			return "", errNil
		}
		if line[0] == '*' {
			if depth > 3 {
				return "", fmt.Errorf("Redis reply nested too deep")
			}
			out := make([]any, n)
			for i := range out {
				v, err := l.reply(depth + 1)
				if errors.Is(err, errNil) {
					v, err = nil, nil
				}
				if err != nil {
					return "", err
				}
				out[i] = v
			}
			return out, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(l.r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("unexpected Redis reply %q", line)
}

// LockAcquire takes the lock called name (without prefix) for owner as RedisLock::acquire does: SET
// with NX and an expiry of seconds, or without an expiry when seconds is 0 or less. It reports whether
// the lock was taken.
func (l *Locks) LockAcquire(ctx context.Context, name, owner string, seconds int64) (bool, error) {
	args := []string{"SET", l.p.Prefix + name, owner, "NX"}
	if seconds > 0 {
		args = append(args, "EX", strconv.FormatInt(seconds, 10))
	}
	_, err := l.command(ctx, args...)
	switch {
	case errors.Is(err, errNil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("acquire Redis lock %s: %w", name, err)
	}
	return true, nil
}

// releaseScript deletes a key only while it holds the given owner, in one step on the server.
const releaseScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`

// LockRelease deletes the lock called name only while owner holds it, as RedisLock::release does, and
// reports whether it did.
func (l *Locks) LockRelease(ctx context.Context, name, owner string) (bool, error) {
	v, err := l.command(ctx, "EVAL", releaseScript, "1", l.p.Prefix+name, owner)
	if err != nil {
		return false, fmt.Errorf("release Redis lock %s: %w", name, err)
	}
	return v == "1", nil
}

// LockOwner returns the owner of the lock called name, and false when it is free.
func (l *Locks) LockOwner(ctx context.Context, name string) (string, bool, error) {
	return l.CacheGet(ctx, name)
}

// CacheAdd stores value under key for ttl only when the key is absent, as RedisStore::add does, and
// reports whether it stored it. Numbers are stored as they are, as RedisStore keeps them.
func (l *Locks) CacheAdd(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	secs := strconv.FormatInt(max(int64(ttl/time.Second), 1), 10)
	_, err := l.command(ctx, "SET", l.p.Prefix+key, value, "EX", secs, "NX")
	switch {
	case errors.Is(err, errNil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("add Redis cache key %s: %w", key, err)
	}
	return true, nil
}

// CachePut stores value under key for ttl (RedisStore::put, SETEX).
func (l *Locks) CachePut(ctx context.Context, key, value string, ttl time.Duration) error {
	secs := strconv.FormatInt(max(int64(ttl/time.Second), 1), 10)
	if _, err := l.command(ctx, "SETEX", l.p.Prefix+key, secs, value); err != nil {
		return fmt.Errorf("put Redis cache key %s: %w", key, err)
	}
	return nil
}

// CacheIncrement adds by to the number under key and returns it (RedisStore::increment, INCRBY): a
// missing key counts from 0 and has no expiry, as in Laravel.
func (l *Locks) CacheIncrement(ctx context.Context, key string, by int64) (int64, error) {
	v, err := l.command(ctx, "INCRBY", l.p.Prefix+key, strconv.FormatInt(by, 10))
	if err != nil {
		return 0, fmt.Errorf("increment Redis cache key %s: %w", key, err)
	}
	return strconv.ParseInt(v, 10, 64)
}
