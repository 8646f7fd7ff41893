package interop

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The differential suite's memcached rows: the app's cache store is memcached. Each copy has a cache
// prefix of its own (memcached has no other way to keep two apps apart); the keys under it are listed
// with memcached's lru_crawler metadump, copied with their type flags and expiry, and compared as the
// tables are.

// mcRaw is one memcached item as the server holds it.
type mcRaw struct {
	flags string
	data  string
	exp   int64 // Unix time; -1 for none
}

// mcRequest sends one request to the tests' memcached server and returns the reply's lines, data
// blocks included, up to the one that ends it.
func mcRequest(t *testing.T, s *side, req string, end func(line string) bool) []string {
	t.Helper()
	m := s.cfg.Cache.Memcached
	c, err := net.DialTimeout("tcp", net.JoinHostPort(m.Host, strconv.Itoa(m.Port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
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

// mcItems returns the side's items by key, the side's prefix cut off.
func (s *side) mcItems(t *testing.T) map[string]mcRaw {
	t.Helper()
	prefix := s.cfg.Cache.Prefix + ":"
	out := map[string]mcRaw{}
	for _, line := range metadump(t, s) {
		fields := map[string]string{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		key, err := url.QueryUnescape(fields["key"])
		if err != nil || !strings.HasPrefix(key, prefix) {
			continue
		}
		exp, _ := strconv.ParseInt(fields["exp"], 10, 64)
		reply := mcRequest(t, s, "get "+key+"\r\n", isEnd)
		if len(reply) != 3 {
			continue // gone since the dump (expired or deleted)
		}
		head := strings.Fields(reply[0]) // VALUE key flags bytes
		out[strings.TrimPrefix(key, prefix)] = mcRaw{flags: head[2], data: reply[1], exp: exp}
	}
	return out
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
		exp := max(it.exp, 0)
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
	keys := make([]string, 0, len(items))
	for k := range items {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		it := items[k]
		value := n.text(it.data)
		switch {
		case it.flags == "0" && lockOwner.MatchString(fmt.Sprintf("s:%d:%q;", len(it.data), it.data)):
			value = "owner"
		case it.flags == "1" && len(it.data) == 10:
			if ts, _ := strconv.ParseInt(it.data, 10, 64); time.Since(time.Unix(ts, 0)).Abs() < 24*time.Hour {
				value = "time"
			}
		}
		expires := "forever"
		if it.exp >= 0 {
			expires = "expires"
		}
		lines = append(lines, fmt.Sprintf("%s = %s:%s (%s)", n.text(k), it.flags, value, expires))
	}
	return lines
}
