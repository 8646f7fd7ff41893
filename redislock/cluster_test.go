package redislock

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestKeySlot checks the slot of keys against Redis Cluster's specification: CRC16/XMODEM's check
// value, the slots the specification's examples give, and hash tags.
func TestKeySlot(t *testing.T) {
	if c := crc16("123456789"); c != 0x31c3 {
		t.Errorf("crc16(123456789) = %#x, want 0x31c3", c)
	}
	for key, want := range map[string]int{"foo": 12182, "bar": 5061, "": 0} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
	if keySlot("{user1000}.following") != keySlot("{user1000}.followers") || keySlot("{user1000}.x") != keySlot("user1000") {
		t.Error("keys with one hash tag fall in different slots")
	}
	if keySlot("foo{}{bar}") != int(crc16("foo{}{bar}")%slotCount) {
		t.Error(`an empty hash tag "{}" was taken as the tag`)
	}
	for k, v := range map[string][]string{
		"GET": {"GET", "k"}, "EVAL": {"EVAL", "script", "1", "k", "owner"},
	} {
		if key, ok := commandKey(v); !ok || key != "k" {
			t.Errorf("the key of %s: %q %v", k, key, ok)
		}
	}
	if _, ok := commandKey([]string{"EVAL", "script", "0"}); ok {
		t.Error("EVAL without keys has a key")
	}
}

// TestCluster runs the store on a Redis Cluster of the test's own: it finds the cluster from one
// node, its slots agree with the cluster's own CLUSTER KEYSLOT, each key is written on the master of
// its slot, and it follows the cluster while a slot moves: ASK while the slot migrates (a new key
// goes to the importing node), MOVED once it has moved.
func TestCluster(t *testing.T) {
	t.Parallel()
	ports := testenv.StartRedisCluster(t)
	ctx := context.Background()
	addr := func(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
	// The seed's REDIS_CACHE_DB is not 0: a cluster has database 0 only, which the store then uses.
	l, err := Open(ctx, Params{Addr: addr(ports[1]), Prefix: "laravel_database_laravel_cache:", DB: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.cluster == nil {
		t.Fatal("a cluster node was taken as a single server")
	}
	// direct runs commands on one node, on one connection, and returns the last reply.
	direct := func(port int, commands ...[]string) any {
		t.Helper()
		n := &node{addr: addr(port), p: &Params{DialTimeout: time.Second}}
		if err := n.connect(ctx); err != nil {
			t.Fatal(err)
		}
		defer n.drop()
		var v any
		for _, args := range commands {
			var err error
			if v, err = n.roundTrip(ctx, args...); err != nil && err != errNil {
				t.Fatalf("%v on %d: %v", args, port, err)
			}
		}
		return v
	}
	cmd := func(args ...string) []string { return args }
	owners := map[string]int{}
	for i := range 60 {
		key := fmt.Sprintf("illuminate:queue:paused:database:q%d", i)
		full := l.p.Prefix + key
		if want := direct(ports[0], cmd("CLUSTER", "KEYSLOT", full)); fmt.Sprint(want) != strconv.Itoa(keySlot(full)) {
			t.Fatalf("slot of %s: %d, the cluster says %v", full, keySlot(full), want)
		}
		if err := l.CacheForever(ctx, key, "b:1;"); err != nil {
			t.Fatal(err)
		}
		owner := l.cluster.master(keySlot(full))
		owners[owner]++
		_, p, _ := net.SplitHostPort(owner)
		port, _ := strconv.Atoi(p)
		if v := direct(port, cmd("GET", full)); v != "b:1;" {
			t.Fatalf("%s is not on the master of its slot (%s): %v", full, owner, v)
		}
		if v, ok, err := l.CacheGet(ctx, key); err != nil || !ok || v != "b:1;" {
			t.Fatalf("read %s back: %q %v %v", key, v, ok, err)
		}
	}
	if len(owners) != 3 {
		t.Errorf("the keys fell on %d masters of 3: %v", len(owners), owners)
	}
	// Workers' goroutines share the store: keys on every master at once.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				key := fmt.Sprintf("job-exceptions:%d-%d", g, i)
				if n, err := l.CacheCount(ctx, key, time.Minute); err != nil || n != 1 {
					errs <- fmt.Errorf("count %s: %d %v", key, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Move the slot of one key from its master to another, as redis-cli --cluster reshard does.
	key := "illuminate:queue:restart"
	full := l.p.Prefix + key
	if err := l.CacheForever(ctx, key, "1800000000"); err != nil {
		t.Fatal(err)
	}
	slot := keySlot(full)
	from := l.cluster.master(slot)
	var src, dst int
	for _, p := range ports {
		if addr(p) == from {
			src = p
		} else {
			dst = p
		}
	}
	srcID, dstID := fmt.Sprint(direct(src, cmd("CLUSTER", "MYID"))), fmt.Sprint(direct(dst, cmd("CLUSTER", "MYID")))
	s := strconv.Itoa(slot)
	direct(dst, cmd("CLUSTER", "SETSLOT", s, "IMPORTING", srcID))
	direct(src, cmd("CLUSTER", "SETSLOT", s, "MIGRATING", dstID))
	// A key of the slot that the source does not hold goes to the importing node (ASK).
	tagged := l.p.Prefix + "{" + full + "}:new"
	if keySlot(tagged) != slot {
		t.Fatal("the tagged key is in another slot")
	}
	if _, err := l.Command(ctx, "SET", tagged, "x"); err != nil {
		t.Fatalf("write a new key of a migrating slot: %v", err)
	}
	if v := direct(dst, cmd("ASKING"), cmd("GET", tagged)); v != "x" {
		t.Fatalf("the new key of the migrating slot is not on the importing node: %v", v)
	}
	if v, err := l.Command(ctx, "GET", tagged); err != nil || v != "x" {
		t.Fatalf("read a new key of a migrating slot: %v %v", v, err)
	}
	direct(src, cmd("MIGRATE", "127.0.0.1", strconv.Itoa(dst), "", "0", "5000", "KEYS", full))
	for _, p := range ports {
		direct(p, cmd("CLUSTER", "SETSLOT", s, "NODE", dstID))
	}
	// The store still sends the key to the old master, which answers MOVED.
	if v, ok, err := l.CacheGet(ctx, key); err != nil || !ok || v != "1800000000" {
		t.Fatalf("read a key whose slot moved: %q %v %v", v, ok, err)
	}
	if got := l.cluster.master(slot); got != addr(dst) {
		t.Errorf("after MOVED the slot's master is %s, want %s", got, addr(dst))
	}
	if err := l.CacheForget(ctx, key); err != nil {
		t.Fatal(err)
	}
	if v := direct(dst, cmd("EXISTS", full)); fmt.Sprint(v) != "0" {
		t.Errorf("the key was not deleted on its new master: %v", v)
	}
}
