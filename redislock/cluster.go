package redislock

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// slotCount is the number of hash slots of a Redis Cluster.
const slotCount = 16384

// cluster is a Redis Cluster's masters, each key sent to the master of its hash slot as phpredis's
// RedisCluster sends it. MOVED replies update the slot and the map is read again; ASK replies send
// the one command to the node that imports the slot, after ASKING.
type cluster struct {
	p     *Params
	seed  string
	mu    sync.Mutex
	slots [slotCount]string // the master of each slot, host:port; "" when no master serves it
	nodes map[string]*node
}

// isClusterNode reports whether the server runs in cluster mode; a server that does not say (INFO
// refused to an ACL user, say) is taken as a single server.
func isClusterNode(ctx context.Context, n *node) bool {
	info, err := n.do(ctx, "INFO", "cluster")
	return err == nil && strings.Contains(info, "cluster_enabled:1")
}

// openCluster reads the cluster's slots from the seed's connection.
func openCluster(ctx context.Context, p *Params, seed *node) (*cluster, error) {
	c := &cluster{p: p, seed: p.Addr, nodes: map[string]*node{}}
	v, err := seed.roundTrip(ctx, "CLUSTER", "SLOTS")
	if err != nil {
		return nil, fmt.Errorf("read the slots of the Redis Cluster at %s: %w", p.Addr, err)
	}
	if err := c.setSlots(v); err != nil {
		return nil, fmt.Errorf("read the slots of the Redis Cluster at %s: %w", p.Addr, err)
	}
	return c, nil
}

// setSlots takes CLUSTER SLOTS' reply: [start, end, [host, port, id, ...], replicas...] per range.
func (c *cluster) setSlots(v any) error {
	ranges, ok := v.([]any)
	if !ok || len(ranges) == 0 {
		return errors.New("the cluster serves no slot (is it created and its state ok?)")
	}
	var slots [slotCount]string
	for _, r := range ranges {
		f, ok := r.([]any)
		if !ok || len(f) < 3 {
			return fmt.Errorf("unexpected slot range %v", r)
		}
		start, err1 := strconv.Atoi(fmt.Sprint(f[0]))
		end, err2 := strconv.Atoi(fmt.Sprint(f[1]))
		master, ok := f[2].([]any)
		if err1 != nil || err2 != nil || !ok || len(master) < 2 || start < 0 || end >= slotCount || start > end {
			return fmt.Errorf("unexpected slot range %v", r)
		}
		host := fmt.Sprint(master[0])
		if host == "" || host == "?" {
			host, _, _ = net.SplitHostPort(c.seed) // a node that does not know its address: the seed's host
		}
		addr := net.JoinHostPort(host, fmt.Sprint(master[1]))
		for s := start; s <= end; s++ {
			slots[s] = addr
		}
	}
	c.mu.Lock()
	c.slots = slots
	c.mu.Unlock()
	return nil
}

// refresh reads the slots again from any node that answers, the seed last.
func (c *cluster) refresh(ctx context.Context) error {
	c.mu.Lock()
	addrs := make([]string, 0, len(c.nodes)+1)
	for a := range c.nodes {
		addrs = append(addrs, a)
	}
	c.mu.Unlock()
	addrs = append(addrs, c.seed)
	var err error
	for _, a := range addrs {
		var v any
		if v, err = c.node(a).command(ctx, "", "CLUSTER", "SLOTS"); err == nil {
			return c.setSlots(v)
		}
	}
	return err
}

// node returns the connection to addr, made on first use.
func (c *cluster) node(addr string) *node {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[addr]
	if n == nil {
		n = &node{addr: addr, p: c.p, tls: nodeTLS(c.p.TLS, c.seed, addr)}
		c.nodes[addr] = n
	}
	return n
}

// nodeTLS is the TLS configuration for a node: the seed's, checking the node's own name when the
// seed's was the seed's host.
func nodeTLS(t *tls.Config, seed, addr string) *tls.Config {
	if t == nil {
		return nil
	}
	seedHost, _, _ := net.SplitHostPort(seed)
	host, _, _ := net.SplitHostPort(addr)
	if t.ServerName != seedHost || host == seedHost {
		return t
	}
	t = t.Clone()
	t.ServerName = host
	return t
}

// maxRedirects bounds the MOVED and ASK replies one command follows, as a client library's
// redirection limit does.
const maxRedirects = 5

// command runs one command at the master of its key's slot (any master for a command without a key),
// following redirections.
func (c *cluster) command(ctx context.Context, args ...string) (any, error) {
	slot := -1
	if k, ok := commandKey(args); ok {
		slot = keySlot(k)
	}
	asking := ""
	var v any
	var err error
	for try := 0; try <= maxRedirects; try++ {
		addr := asking
		if addr == "" {
			addr = c.master(slot)
		}
		if addr == "" {
			if err = c.refresh(ctx); err != nil {
				return nil, fmt.Errorf("no Redis Cluster node serves slot %d: %w", slot, err)
			}
			if addr = c.master(slot); addr == "" {
				return nil, fmt.Errorf("no Redis Cluster node serves slot %d (CLUSTERDOWN?)", slot)
			}
		}
		v, err = c.node(addr).command(ctx, asking, args...)
		asking = ""
		var re replyError
		if errors.As(err, &re) {
			switch f := strings.Fields(string(re)); {
			case len(f) == 3 && f[0] == "MOVED":
				c.mu.Lock()
				if s, err := strconv.Atoi(f[1]); err == nil && s >= 0 && s < slotCount {
					c.slots[s] = f[2]
				}
				c.mu.Unlock()
				// The map has changed: read it whole, so that the slots moved with this one follow.
				_ = c.refresh(ctx)
				continue
			case len(f) == 3 && f[0] == "ASK":
				asking = f[2]
				continue
			case len(f) > 0 && (f[0] == "TRYAGAIN" || f[0] == "CLUSTERDOWN"):
				return v, err
			}
			return v, err
		}
		if err == nil || errors.Is(err, errNil) {
			return v, err
		}
		// The node did not answer: it may have failed over; read the map again and try once more.
		if try > 0 || c.refresh(ctx) != nil {
			return v, err
		}
	}
	return v, fmt.Errorf("%w (after %d redirections)", err, maxRedirects)
}

// master returns the master of slot; for -1 (no key), any master.
func (c *cluster) master(slot int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slot >= 0 {
		return c.slots[slot]
	}
	for _, a := range c.slots {
		if a != "" {
			return a
		}
	}
	return ""
}

func (c *cluster) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		n.mu.Lock()
		n.drop()
		n.mu.Unlock()
	}
}

// commandKey returns the key a command acts on: EVAL's first key, the first argument of the others.
func commandKey(args []string) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	switch strings.ToUpper(args[0]) {
	case "EVAL", "EVALSHA":
		if len(args) > 3 && args[2] != "0" {
			return args[3], true
		}
		return "", false
	case "PING", "INFO", "CLUSTER", "SCAN", "KEYS", "DBSIZE", "FLUSHDB", "SCRIPT", "ASKING", "SELECT":
		return "", false
	}
	if len(args) < 2 {
		return "", false
	}
	return args[1], true
}

// keySlot is the hash slot of a key: CRC16 (XMODEM) of the key, or of its hash tag, the text between
// the first "{" and the next "}" when it is not empty, modulo 16384.
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % slotCount)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), the checksum of Redis Cluster's key slots.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
