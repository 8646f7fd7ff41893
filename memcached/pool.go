package memcached

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
)

// Server is one server of the store's pool, as an entry of config/cache.php's servers list.
type Server struct {
	// Host is the host as the configuration writes it: consistent hashing hashes this text, so
	// "localhost" and "127.0.0.1" place keys differently, as in PHP.
	Host string
	// Port is the server's port; 0 is memcached's 11211.
	Port int
	// Weight is the entry's weight (the skeleton's 100); only consistent hashing reads it.
	Weight int
}

// Addr is host:port.
func (s Server) Addr() string {
	port := s.Port
	if port == 0 {
		port = defaultPort
	}
	return net.JoinHostPort(s.Host, strconv.Itoa(port))
}

const defaultPort = 11211

// Distribution is how PHP's memcached extension (over libmemcached) picks a key's server when the
// pool has more than one: config/cache.php's memcached options.
type Distribution string

const (
	// Modula is the extension's default: the key's one-at-a-time hash modulo the number of servers,
	// in the order the servers are listed.
	Modula Distribution = "modula"
	// Consistent is Memcached::OPT_DISTRIBUTION => Memcached::DISTRIBUTION_CONSISTENT (or the
	// memcached.default_consistent_hash ini setting): a ring of points per server, the key hashed with
	// one-at-a-time. With a server weighing more than 1 (the skeleton's 100), libmemcached builds the
	// weighted ring of Ketama.
	Consistent Distribution = "consistent"
	// Ketama is Memcached::OPT_LIBKETAMA_COMPATIBLE => true: the weighted ring, the key hashed with
	// MD5.
	Ketama Distribution = "ketama"
)

// Distributions are the distributions the store can take, in the order the configuration lists them.
var Distributions = []Distribution{Modula, Consistent, Ketama}

// ring maps a key to the index of its server, as libmemcached does for the extension's settings.
type ring struct {
	n      int
	md5Key bool    // the key's hash is MD5's first four bytes, not one-at-a-time
	points []point // nil for modula
}

type point struct {
	value uint32
	index int
}

// Points on the ring per server (libmemcached's MEMCACHED_POINTS_PER_SERVER and _KETAMA).
const (
	pointsPerServer       = 100
	pointsPerServerKetama = 160
)

func newRing(servers []Server, d Distribution) (ring, error) {
	r := ring{n: len(servers)}
	switch d {
	case Modula, "":
		return r, nil
	case Consistent, Ketama:
	default:
		return r, fmt.Errorf("unknown memcached distribution %q (modula, consistent or ketama)", d)
	}
	r.md5Key = d == Ketama
	weighted := d == Ketama
	var total float32
	for _, s := range servers {
		if s.Weight > 1 {
			weighted = true // libmemcached turns a consistent pool weighted when a server weighs more than 1
		}
		total += float32(weight(s))
	}
	for i, s := range servers {
		perServer, perHash := pointsPerServer, 1
		if weighted {
			// In float, as libmemcached computes it, so that the points fall where PHP's do.
			share := float32(weight(s)) / total * pointsPerServerKetama / 4 * float32(len(servers))
			perServer = int(math.Floor(float64(share+0.0000000001))) * 4
			perHash = 4
		}
		for p := range perServer / perHash {
			name := s.Host + ":" + strconv.Itoa(s.Port) + "-" + strconv.Itoa(p)
			if s.Port == defaultPort || s.Port == 0 {
				name = s.Host + "-" + strconv.Itoa(p)
			}
			if !weighted {
				r.points = append(r.points, point{oneAtATime(name), i})
				continue
			}
			sum := md5.Sum([]byte(name))
			for x := range perHash {
				r.points = append(r.points, point{binary.LittleEndian.Uint32(sum[4*x:]), i})
			}
		}
	}
	slices.SortFunc(r.points, func(a, b point) int {
		if a.value != b.value {
			if a.value < b.value {
				return -1
			}
			return 1
		}
		return a.index - b.index
	})
	return r, nil
}

// weight is a server's weight on the ring: 0 counts as 1.
func weight(s Server) int { return max(s.Weight, 1) }

// pick returns the index of the server that holds key (the key as sent, prefix included).
func (r ring) pick(key string) int {
	if r.n <= 1 {
		return 0
	}
	if r.points == nil {
		return int(oneAtATime(key) % uint32(r.n))
	}
	var h uint32
	if r.md5Key {
		sum := md5.Sum([]byte(key))
		h = binary.LittleEndian.Uint32(sum[:])
	} else {
		h = oneAtATime(key)
	}
	i, _ := slices.BinarySearchFunc(r.points, h, func(p point, h uint32) int {
		if p.value < h {
			return -1
		}
		if p.value > h {
			return 1
		}
		return 0
	})
	if i == len(r.points) {
		i = 0
	}
	return r.points[i].index
}

// oneAtATime is libhashkit's one-at-a-time hash, libmemcached's default. It reads each byte as a C
// char, which is signed on x86-64, so bytes from 0x80 count as negative there (on arm64, where char is
// unsigned, PHP places keys with such bytes elsewhere; the worker's own keys are ASCII).
func oneAtATime(key string) uint32 {
	var v uint32
	for i := 0; i < len(key); i++ {
		v += uint32(int32(int8(key[i])))
		v += v << 10
		v ^= v >> 6
	}
	v += v << 3
	v ^= v >> 11
	v += v << 15
	return v
}
