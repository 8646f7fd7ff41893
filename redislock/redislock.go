// Package redislock reaches a Laravel cache store kept in Redis: it releases locks as
// RedisLock::forceRelease does, so a Go worker can free the lock a ShouldBeUnique job took at dispatch,
// and it reads and counts cache values as RedisStore does, so the worker sees `php artisan
// queue:restart`, maintenance mode and paused queues, and counts maxExceptions.
//
// It speaks just the Redis commands it needs (AUTH, SELECT, GET, SET, INCRBY, DEL, EVAL; on a Redis
// Cluster CLUSTER SLOTS and ASKING) over one connection per server instead of depending on a full
// client library: the worker issues a few commands per second and one
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

// replyError is an error reply of the server; it is ErrRedis.
type replyError string

func (e replyError) Error() string        { return ErrRedis.Error() + ": " + string(e) }
func (e replyError) Is(target error) bool { return target == ErrRedis }

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
// locks, the cache connection's for values (Laravel's skeletons keep them apart). On a Redis Cluster
// it is a connection to each master, every key sent to the master of its slot. It is safe for
// concurrent use.
type Locks struct {
	p Params
	// single is the connection to a server that is not a cluster node.
	single *node
	// cluster routes keys over a Redis Cluster's masters; nil for a single server.
	cluster *cluster
}

// node is one connection to one Redis server.
type node struct {
	addr string
	p    *Params
	db   int // the database SELECTed after connecting: never on a cluster node
	tls  *tls.Config
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

// Open connects, authenticates and selects the database, so that a wrong address or password is
// reported at start-up. A server that is a Redis Cluster node (cluster_enabled in INFO) is taken as
// the cluster's seed: the database is then 0, as on every cluster, and the keys go where the
// cluster's slots are.
func Open(ctx context.Context, p Params) (*Locks, error) {
	if p.DialTimeout <= 0 {
		p.DialTimeout = 5 * time.Second
	}
	l := &Locks{p: p}
	n := &node{addr: p.Addr, p: &l.p, tls: p.TLS}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.connect(ctx); err != nil {
		return nil, err
	}
	if isClusterNode(ctx, n) {
		c, err := openCluster(ctx, &l.p, n)
		n.drop()
		if err != nil {
			return nil, err
		}
		l.cluster = c
		return l, nil
	}
	if p.DB != 0 {
		if _, err := n.do(ctx, "SELECT", strconv.Itoa(p.DB)); err != nil {
			n.drop()
			return nil, fmt.Errorf("select Redis database %d at %s: %w", p.DB, p.Addr, err)
		}
		n.db = p.DB
	}
	l.single = n
	return l, nil
}

// connect dials the node, authenticates and selects its database.
func (n *node) connect(ctx context.Context) error {
	d := net.Dialer{Timeout: n.p.DialTimeout}
	c, err := d.DialContext(ctx, "tcp", n.addr)
	if err != nil {
		return fmt.Errorf("connect to Redis at %s: %w; check REDIS_HOST and REDIS_PORT", n.addr, err)
	}
	if n.tls != nil {
		tc := tls.Client(c, n.tls)
		hctx, cancel := context.WithTimeout(ctx, n.p.DialTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			c.Close()
			return fmt.Errorf("connect to Redis at %s over TLS: %w; check that the server speaks TLS on that port (rediss:// in REDIS_URL) and cache.redis.ca_file", n.addr, err)
		}
		c = tc
	}
	n.conn, n.r = c, bufio.NewReader(c)
	if n.p.Password != "" || n.p.Username != "" {
		args := []string{"AUTH", n.p.Password}
		if n.p.Username != "" {
			args = []string{"AUTH", n.p.Username, n.p.Password}
		}
		if _, err := n.do(ctx, args...); err != nil {
			n.drop()
			return fmt.Errorf("authenticate to Redis at %s: %w; check REDIS_USERNAME and REDIS_PASSWORD", n.addr, err)
		}
	}
	if n.db != 0 {
		if _, err := n.do(ctx, "SELECT", strconv.Itoa(n.db)); err != nil {
			n.drop()
			return fmt.Errorf("select Redis database %d at %s: %w", n.db, n.addr, err)
		}
	}
	return nil
}

func (n *node) drop() {
	if n.conn != nil {
		n.conn.Close()
	}
	n.conn, n.r = nil, nil
}

// ForceRelease deletes the lock called name (without prefix), whoever owns it. Releasing a lock that
// does not exist does nothing.
func (l *Locks) ForceRelease(ctx context.Context, name string) error {
	if _, err := l.command(ctx, "DEL", l.p.Prefix+name); err != nil {
		return fmt.Errorf("release Redis lock %s: %w", name, err)
	}
	return nil
}

// LockHeld reports whether the lock name (without prefix) is held.
func (l *Locks) LockHeld(ctx context.Context, name string) (bool, error) {
	v, err := l.command(ctx, "EXISTS", l.p.Prefix+name)
	if err != nil {
		return false, fmt.Errorf("read Redis lock %s: %w", name, err)
	}
	return v == "1", nil
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

// commandAny runs one command, on a cluster at the master of its key's slot.
func (l *Locks) commandAny(ctx context.Context, args ...string) (any, error) {
	if l.cluster != nil {
		return l.cluster.command(ctx, args...)
	}
	return l.single.command(ctx, "", args...)
}

// command runs one command on the node, redialling a broken connection once. A non-empty asking sends
// ASKING first, as a cluster's ASK redirection asks.
func (n *node) command(ctx context.Context, asking string, args ...string) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var v any
	var err error
	for try := 0; try < 2; try++ {
		if n.conn == nil {
			if err = n.connect(ctx); err != nil {
				continue
			}
		}
		if asking != "" {
			if _, err = n.roundTrip(ctx, "ASKING"); err != nil && !errors.Is(err, ErrRedis) {
				n.drop()
				continue
			}
		}
		if v, err = n.roundTrip(ctx, args...); err == nil || errors.Is(err, ErrRedis) || errors.Is(err, errNil) {
			break
		}
		n.drop()
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

// Close closes the connections.
func (l *Locks) Close() error {
	if l.cluster != nil {
		l.cluster.close()
		return nil
	}
	l.single.mu.Lock()
	defer l.single.mu.Unlock()
	l.single.drop()
	return nil
}

// do sends one command and reads a simple, integer or bulk reply.
func (n *node) do(ctx context.Context, args ...string) (string, error) {
	return stringReply(n.roundTrip(ctx, args...))
}

// roundTrip sends one command and reads its reply: a string, errNil, or for an array a []any of those
// (a nil element is nil).
func (n *node) roundTrip(ctx context.Context, args ...string) (any, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	if err := n.conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	if _, err := n.conn.Write(b); err != nil {
		return "", err
	}
	return n.reply(0)
}

// reply reads one reply, arrays nested at most a few levels deep.
func (n *node) reply(depth int) (any, error) {
	line, err := n.r.ReadString('\n')
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
		return "", replyError(body)
	case '$', '*':
		size, err := strconv.Atoi(body)
		if err != nil {
			return "", fmt.Errorf("malformed Redis reply %q", line)
		}
		if size < 0 {
			return "", errNil
		}
		if line[0] == '*' {
			if depth > 3 {
				return "", fmt.Errorf("Redis reply nested too deep")
			}
			out := make([]any, size)
			for i := range out {
				v, err := n.reply(depth + 1)
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
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(n.r, buf); err != nil {
			return "", err
		}
		return string(buf[:size]), nil
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
