// Package memcached reaches a Laravel memcached cache store (CACHE_DRIVER=memcached, Laravel's
// MemcachedStore over PHP's memcached extension) on its servers, in memcached's text protocol, which the
// extension speaks by default. With several servers each key goes to the server PHP's extension picks
// for it (see Distribution). Keys carry the store's prefix (CACHE_PREFIX and ":"). Values are kept as
// the extension keeps them: a string as it is, an integer, float or bool in its own type flag, anything
// else PHP-serialized; this package hands them to the worker PHP-serialized, as the database store keeps
// them, and writes them back in the extension's form, so PHP reads what Go wrote.
//
// The worker reads queue:restart's signal and paused queues there, counts maxExceptions, releases
// unique locks, and keeps job middleware's locks and rate limiters, where PHP does.
package memcached

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/payload"
)

// The extension's value flags (php-memcached's MEMC_VAL_*): the type in the low four bits, the
// compression in the next three.
const (
	flagString     = 0
	flagLong       = 1
	flagDouble     = 2
	flagBool       = 3
	flagSerialized = 4
	typeMask       = 0xf
	compressedMask = 0x70
)

// ErrMiss is an increment of a key the server does not hold.
var ErrMiss = errors.New("memcached: no such key")

// ErrServer is wrapped by every error the server answers (ERROR, CLIENT_ERROR, SERVER_ERROR).
var ErrServer = errors.New("memcached error")

// Params says where the store is.
type Params struct {
	// Servers is the pool, in config/cache.php's order (the skeleton's one: MEMCACHED_HOST,
	// MEMCACHED_PORT).
	Servers []Server
	// Distribution is how keys are spread over several servers; "" is Modula, the extension's default.
	Distribution Distribution
	// Prefix is the cache prefix (CACHE_PREFIX); MemcachedStore puts it and ":" before every key.
	Prefix string
	// DialTimeout bounds connecting; 0 means 5 seconds.
	DialTimeout time.Duration
	// Now is the clock of the expiry times MemcachedStore writes; nil is time.Now.
	Now func() time.Time
}

// Store is the store's servers, a connection to each. It is safe for concurrent use.
type Store struct {
	p       Params
	prefix  string
	servers []*server
	ring    ring
	down    []string
}

// server is one connection to one of the pool's servers.
type server struct {
	addr        string
	dialTimeout time.Duration
	mu          sync.Mutex
	conn        net.Conn
	r           *bufio.Reader
}

// Open connects to every server and asks its version, so that a wrong address is reported at
// start-up. As Laravel's MemcachedConnector, it fails only when no server answers; Down lists the
// others.
func Open(ctx context.Context, p Params) (*Store, error) {
	if p.DialTimeout <= 0 {
		p.DialTimeout = 5 * time.Second
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if len(p.Servers) == 0 {
		return nil, errors.New("memcached: no server; set MEMCACHED_HOST and MEMCACHED_PORT, or cache.memcached.servers")
	}
	r, err := newRing(p.Servers, p.Distribution)
	if err != nil {
		return nil, err
	}
	s := &Store{p: p, ring: r}
	if p.Prefix != "" {
		s.prefix = p.Prefix + ":"
	}
	var errs []error
	for _, sv := range p.Servers {
		c := &server{addr: sv.Addr(), dialTimeout: p.DialTimeout}
		s.servers = append(s.servers, c)
		if _, err := c.roundTrip(ctx, "version\r\n"); err != nil {
			err = fmt.Errorf("memcached at %s: %w", c.addr, err)
			errs = append(errs, err)
			s.down = append(s.down, err.Error())
		}
	}
	if len(errs) == len(s.servers) {
		hint := "check MEMCACHED_HOST and MEMCACHED_PORT"
		if len(s.servers) > 1 {
			hint = "check cache.memcached.servers"
		}
		return nil, fmt.Errorf("%w; %s", errors.Join(errs...), hint)
	}
	return s, nil
}

// Down lists the servers that did not answer when the store opened, each with its error: the keys PHP
// keeps there cannot be read until they come back.
func (s *Store) Down() []string { return s.down }

// Close closes the connections.
func (s *Store) Close() error {
	for _, c := range s.servers {
		c.mu.Lock()
		c.drop()
		c.mu.Unlock()
	}
	return nil
}

// roundTrip sends a request about the server key full to the server that holds it.
func (s *Store) roundTrip(ctx context.Context, full, req string) ([]string, error) {
	return s.servers[s.ring.pick(full)].roundTrip(ctx, req)
}

func (s *server) drop() {
	if s.conn != nil {
		s.conn.Close()
		s.conn, s.r = nil, nil
	}
}

// roundTrip sends one request and reads its reply: the lines up to the one that ends it (END for a
// get, one line otherwise), redialling a broken connection once; an error the server answers is not
// sent again.
func (s *server) roundTrip(ctx context.Context, req string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for try := 0; try < 2; try++ {
		if s.conn == nil {
			d := net.Dialer{Timeout: s.dialTimeout}
			c, derr := d.DialContext(ctx, "tcp", s.addr)
			if derr != nil {
				err = derr
				continue
			}
			s.conn, s.r = c, bufio.NewReader(c)
		}
		var lines []string
		if lines, err = s.exchange(ctx, req); err == nil || errors.Is(err, ErrServer) {
			return lines, err // the server's answer, even an error, leaves the connection in step
		}
		s.drop()
	}
	return nil, err
}

func (s *server) exchange(ctx context.Context, req string) ([]string, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	if err := s.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(s.conn, req); err != nil {
		return nil, err
	}
	var lines []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSuffix(line, "\r\n")
		if v, ok := strings.CutPrefix(line, "VALUE "); ok {
			f := strings.Fields(v)
			if len(f) < 3 {
				return nil, fmt.Errorf("malformed memcached reply %q", line)
			}
			n, err := strconv.Atoi(f[2])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("malformed memcached reply %q", line)
			}
			data := make([]byte, n+2)
			if _, err := io.ReadFull(s.r, data); err != nil {
				return nil, err
			}
			lines = append(lines, f[1], string(data[:n]))
			continue
		}
		if strings.HasPrefix(line, "ERROR") || strings.HasPrefix(line, "CLIENT_ERROR") || strings.HasPrefix(line, "SERVER_ERROR") {
			return nil, fmt.Errorf("%w: %s", ErrServer, line)
		}
		return append(lines, line), nil
	}
}

// key is the server's key for a cache key: the prefix and the key, which memcached's text protocol
// takes up to 250 bytes without spaces or control characters.
func (s *Store) key(k string) (string, error) {
	full := s.prefix + k
	if len(full) > 250 || strings.ContainsFunc(full, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", fmt.Errorf("memcached cannot hold the key %q (over 250 bytes, or with spaces or control characters)", full)
	}
	return full, nil
}

// get returns a key's flags and data, and whether the server holds it.
func (s *Store) get(ctx context.Context, k string) (flags int, data string, ok bool, err error) {
	full, err := s.key(k)
	if err != nil {
		return 0, "", false, err
	}
	lines, err := s.roundTrip(ctx, full, "get "+full+"\r\n")
	if err != nil {
		return 0, "", false, fmt.Errorf("get memcached key %s: %w", k, err)
	}
	if len(lines) != 3 {
		return 0, "", false, nil // END alone: a miss
	}
	f, err := strconv.Atoi(lines[0])
	if err != nil {
		return 0, "", false, fmt.Errorf("get memcached key %s: flags %q", k, lines[0])
	}
	return f, lines[1], true, nil
}

// store runs set or add; it reports whether the server stored the value.
func (s *Store) store(ctx context.Context, verb, k string, flags int, exptime int64, data string) (bool, error) {
	full, err := s.key(k)
	if err != nil {
		return false, err
	}
	req := fmt.Sprintf("%s %s %d %d %d\r\n%s\r\n", verb, full, flags, exptime, len(data), data)
	lines, err := s.roundTrip(ctx, full, req)
	if err != nil {
		return false, fmt.Errorf("%s memcached key %s: %w", verb, k, err)
	}
	switch lines[len(lines)-1] {
	case "STORED":
		return true, nil
	case "NOT_STORED":
		return false, nil
	}
	return false, fmt.Errorf("%s memcached key %s: %q", verb, k, lines[len(lines)-1])
}

// expiry is MemcachedStore::calculateExpiration: now plus ttl as a Unix time, 0 (never) for none.
func (s *Store) expiry(ttl time.Duration) int64 {
	secs := int64(ttl / time.Second)
	if secs <= 0 {
		return 0
	}
	return s.p.Now().Unix() + secs
}

// CacheGet returns key's value PHP-serialized, and whether the server holds it.
func (s *Store) CacheGet(ctx context.Context, key string) (string, bool, error) {
	flags, data, ok, err := s.get(ctx, key)
	if err != nil || !ok {
		return "", false, err
	}
	v, err := serialized(flags, data)
	if err != nil {
		return "", false, fmt.Errorf("get memcached key %s: %w", key, err)
	}
	return v, true, nil
}

// CachePut writes a value (PHP-serialized) for ttl, as MemcachedStore::put; 0 keeps it.
func (s *Store) CachePut(ctx context.Context, key, value string, ttl time.Duration) error {
	flags, data := stored(value)
	_, err := s.store(ctx, "set", key, flags, s.expiry(ttl), data)
	return err
}

// CacheForever writes a value (PHP-serialized) that does not expire.
func (s *Store) CacheForever(ctx context.Context, key, value string) error {
	return s.CachePut(ctx, key, value, 0)
}

// CacheAdd writes a value (PHP-serialized) for ttl unless the key holds one, and says whether it did.
func (s *Store) CacheAdd(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	flags, data := stored(value)
	return s.store(ctx, "add", key, flags, s.expiry(ttl), data)
}

// CacheIncrement adds by to a number the server holds (memcached's incr, as MemcachedStore::increment);
// a missing key is ErrMiss.
func (s *Store) CacheIncrement(ctx context.Context, key string, by int64) (int64, error) {
	full, err := s.key(key)
	if err != nil {
		return 0, err
	}
	if by < 0 {
		return 0, fmt.Errorf("increment memcached key %s by %d: memcached increments by positive amounts", key, by)
	}
	lines, err := s.roundTrip(ctx, full, fmt.Sprintf("incr %s %d\r\n", full, by))
	if err != nil {
		return 0, fmt.Errorf("increment memcached key %s: %w", key, err)
	}
	line := lines[len(lines)-1]
	if line == "NOT_FOUND" {
		return 0, fmt.Errorf("increment memcached key %s: %w", key, ErrMiss)
	}
	n, err := strconv.ParseInt(line, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("increment memcached key %s: %q", key, line)
	}
	return n, nil
}

// CacheCount is the worker's maxExceptions counting, as Laravel's Worker does it: 0 put for ttl when
// the key holds nothing true, then incremented.
func (s *Store) CacheCount(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	v, ok, err := s.CacheGet(ctx, key)
	if err != nil {
		return 0, err
	}
	if !ok || v == "i:0;" {
		if err := s.CachePut(ctx, key, "i:0;", ttl); err != nil {
			return 0, err
		}
	}
	return s.CacheIncrement(ctx, key, 1)
}

// CacheForget deletes the key.
func (s *Store) CacheForget(ctx context.Context, key string) error {
	full, err := s.key(key)
	if err != nil {
		return err
	}
	if _, err := s.roundTrip(ctx, full, "delete "+full+"\r\n"); err != nil {
		return fmt.Errorf("delete memcached key %s: %w", key, err)
	}
	return nil
}

// LockAcquire takes the lock name for owner for seconds (0: until released), as MemcachedLock does:
// an add of the owner, with the seconds as memcached's relative expiry.
func (s *Store) LockAcquire(ctx context.Context, name, owner string, seconds int64) (bool, error) {
	return s.store(ctx, "add", name, flagString, max(seconds, 0), owner)
}

// LockOwner returns the owner of the lock name, and whether it is held.
func (s *Store) LockOwner(ctx context.Context, name string) (string, bool, error) {
	_, data, ok, err := s.get(ctx, name)
	return data, ok, err
}

// LockRelease releases the lock name if owner holds it, and says whether it did.
func (s *Store) LockRelease(ctx context.Context, name, owner string) (bool, error) {
	cur, ok, err := s.LockOwner(ctx, name)
	if err != nil || !ok || cur != owner {
		return false, err
	}
	return true, s.CacheForget(ctx, name)
}

// ForceRelease deletes the lock name whoever holds it, as Lock::forceRelease does.
func (s *Store) ForceRelease(ctx context.Context, name string) error {
	return s.CacheForget(ctx, name)
}

// LockHeld reports whether the lock name is held (its key is present).
func (s *Store) LockHeld(ctx context.Context, name string) (bool, error) {
	_, _, ok, err := s.get(ctx, name)
	return ok, err
}

// SerializesValues reports that the store hands values over PHP-serialized, numbers included.
func (s *Store) SerializesValues() bool { return true }

// serialized turns a value as the extension stored it into PHP's serialize() of it.
func serialized(flags int, data string) (string, error) {
	if flags&compressedMask != 0 {
		return "", errors.New("the value is compressed (longer than memcached.compression_threshold), which artisan-go does not read")
	}
	var v payload.Value
	switch flags & typeMask {
	case flagString:
		v = data
	case flagLong:
		n, err := strconv.ParseInt(data, 10, 64)
		if err != nil {
			return "", fmt.Errorf("integer value %q", data)
		}
		v = n
	case flagDouble:
		f, err := strconv.ParseFloat(data, 64)
		if err != nil {
			return "", fmt.Errorf("float value %q", data)
		}
		v = f
	case flagBool:
		v = data == "1"
	case flagSerialized:
		return data, nil
	default:
		return "", fmt.Errorf("the value is serialized with memcached.serializer %d (igbinary, json or msgpack), which artisan-go does not read; PHP's serializer (\"php\") it does", flags&typeMask)
	}
	b, err := payload.Serialize(v)
	return string(b), err
}

// stored turns a PHP-serialized value into the extension's flags and data for it.
func stored(value string) (int, string) {
	v, err := payload.Unserialize([]byte(value))
	if err != nil {
		return flagSerialized, value
	}
	switch x := v.(type) {
	case string:
		return flagString, x
	case int64:
		return flagLong, strconv.FormatInt(x, 10)
	case float64:
		return flagDouble, strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return flagBool, "1"
		}
		return flagBool, ""
	}
	return flagSerialized, value
}
