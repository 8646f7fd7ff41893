package interop

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The differential suite's memcached rows: the app's cache store is memcached. Each copy has a cache
// prefix of its own (memcached has no other way to keep two apps apart); the keys under it are listed
// with memcached's lru_crawler metadump, read with the meta command mg, copied with their type flags
// and time left, and compared as the tables are.

// mcRaw is one memcached item as the server holds it.
type mcRaw struct {
	flags string
	data  string
	ttl   int64 // seconds left; -1 for none
}

// mcDial connects to the tests' memcached server, for one request.
func mcDial(t *testing.T, s *side) net.Conn {
	t.Helper()
	m := s.cfg.Cache.Memcached
	c, err := net.DialTimeout("tcp", net.JoinHostPort(m.Host, strconv.Itoa(m.Port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c
}

// mcRequest sends one request to the tests' memcached server and returns the reply's lines, data
// blocks included, up to the one that ends it.
func mcRequest(t *testing.T, s *side, req string, end func(line string) bool) []string {
	t.Helper()
	c := mcDial(t, s)
	defer c.Close()
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	var lines []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("memcached %q: %v", req, err)
		}
		line = strings.TrimSuffix(line, "\r\n")
		lines = append(lines, line)
		if end(line) {
			return lines
		}
	}
}

func isEnd(line string) bool { return line == "END" }

// metadumps runs one lru_crawler metadump at a time: the server runs one crawler and answers BUSY to
// a second.
var metadumps sync.Mutex

// metadump lists the server's items, one line each; a crawler another client started is waited for.
func metadump(t *testing.T, s *side) []string {
	t.Helper()
	metadumps.Lock()
	defer metadumps.Unlock()
	done := func(line string) bool { return isEnd(line) || strings.HasPrefix(line, "BUSY") }
	for wait := time.Millisecond; ; wait *= 2 {
		lines := mcRequest(t, s, "lru_crawler metadump all\r\n", done)
		if !strings.HasPrefix(lines[len(lines)-1], "BUSY") {
			return lines
		}
		if wait > 5*time.Second {
			t.Fatalf("memcached's crawler stayed busy: %v", lines)
		}
		time.Sleep(wait) // the server's crawler is another client's; nothing here says when it ends
	}
}

// mcItems returns the side's items by key, the side's prefix cut off: those the server's metadump
// lists and those the pair has seen before, each read by name.
func (s *side) mcItems(t *testing.T) map[string]mcRaw {
	t.Helper()
	prefix := s.cfg.Cache.Prefix + ":"
	if s.mcSeen == nil {
		s.mcSeen = map[string]bool{}
	}
	keys := maps.Clone(s.mcSeen)
	// The crawler skips an item whose lock another client holds (another key's, too: the locks are
	// striped), so a dump misses keys while workers read theirs: seen 7 times in 500 dumps. Two dumps
	// and the keys seen before make a miss unlikely.
	for _, line := range append(metadump(t, s), metadump(t, s)...) {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "key="); ok {
				if key, err := url.QueryUnescape(v); err == nil && strings.HasPrefix(key, prefix) {
					keys[strings.TrimPrefix(key, prefix)] = true
				}
			}
		}
	}
	out := map[string]mcRaw{}
	for key := range keys {
		if it, ok := mcGet(t, s, prefix+key); ok {
			s.mcSeen[key] = true
			out[key] = it
		}
	}
	return out
}

// mcGet reads one item with the meta command mg: its value, type flags and seconds left.
func mcGet(t *testing.T, s *side, key string) (mcRaw, bool) {
	t.Helper()
	c := mcDial(t, s)
	defer c.Close()
	if _, err := fmt.Fprintf(c, "mg %s v f t\r\n", key); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("memcached mg %s: %v", key, err)
	}
	fields := strings.Fields(head) // VA <bytes> f<flags> t<ttl>, or EN
	if len(fields) == 0 || fields[0] != "VA" {
		if strings.TrimSpace(head) != "EN" {
			t.Fatalf("memcached mg %s: %q", key, head)
		}
		return mcRaw{}, false
	}
	n, _ := strconv.Atoi(fields[1])
	data := make([]byte, n+2)
	if _, err := io.ReadFull(r, data); err != nil {
		t.Fatalf("memcached mg %s: %v", key, err)
	}
	it := mcRaw{data: string(data[:n])}
	for _, f := range fields[2:] {
		switch f[0] {
		case 'f':
			it.flags = f[1:]
		case 't':
			it.ttl, _ = strconv.ParseInt(f[1:], 10, 64)
		}
	}
	return it, true
}

// clearMemcached deletes the side's items.
func (s *side) clearMemcached(t *testing.T) {
	t.Helper()
	for key := range s.mcItems(t) {
		mcRequest(t, s, "delete "+s.cfg.Cache.Prefix+":"+key+"\r\n", func(string) bool { return true })
	}
}

// copyMemcached replaces the items of to with those of from, type flags and expiry alike.
func copyMemcached(t *testing.T, from, to *side) {
	t.Helper()
	to.clearMemcached(t)
	for key, it := range from.mcItems(t) {
		exp := max(it.ttl, 1)
		switch {
		case it.ttl < 0:
			exp = 0 // kept until deleted
		case exp > 30*24*3600:
			exp = time.Now().Unix() + exp // memcached reads a longer time as a Unix time
		}
		req := fmt.Sprintf("set %s:%s %s %d %d\r\n%s\r\n", to.cfg.Cache.Prefix, key, it.flags, exp, len(it.data), it.data)
		if got := mcRequest(t, to, req, func(string) bool { return true }); got[0] != "STORED" {
			t.Fatalf("copy memcached key %s: %v", key, got)
		}
	}
}

// memcachedSnapshot renders the side's items, normalized: lock owners and times left out, and
// whether each expires.
func (s *side) memcachedSnapshot(t *testing.T, n *normalizer) []string {
	t.Helper()
	items := s.mcItems(t)
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(items)) {
		it := items[k]
		value := n.text(it.data)
		switch {
		case it.flags == "0" && lockOwner.MatchString(fmt.Sprintf("s:%d:%q;", len(it.data), it.data)):
			value = "owner"
		case it.flags == "1" && len(it.data) == 10:
			if recentTime(it.data) {
				value = "time"
			}
		}
		expires := "forever"
		if it.ttl >= 0 {
			expires = "expires"
		}
		lines = append(lines, fmt.Sprintf("%s = %s:%s (%s)", n.text(k), it.flags, value, expires))
	}
	return lines
}
