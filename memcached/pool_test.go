package memcached

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestRingAsRecorded places keys a worker uses on a pool of three servers (two on memcached's port,
// one weighing half) as PHP's memcached extension 3.2 over libmemcached 1.1.4 placed them
// (Memcached::getServerByKey), for each distribution. The servers need not exist.
func TestRingAsRecorded(t *testing.T) {
	pool := []Server{{Host: "10.0.0.1", Port: 11211, Weight: 100}, {Host: "cache-2.internal", Port: 11211, Weight: 100}, {Host: "10.0.0.3", Port: 11212, Weight: 50}}
	keys := []string{
		"laravel_cache:illuminate:queue:restart", "laravel_cache:illuminate:queue:paused:database:default",
		`laravel_cache:laravel_unique_job:App\Jobs\SendWelcomeEmail42`, "laravel_cache:job-exceptions:9e1f6a4c-2b7d-4c1e-8f3a-5d6b7c8d9e0f",
		`laravel_cache:laravel-queue-overlap:App\Jobs\Sync:7`, "a", "laravel_cache:k1", "laravel_cache:k2", "laravel_cache:k3", "laravel_cache:k4",
	}
	for d, want := range map[Distribution]string{
		Modula:     "cache-2.internal 10.0.0.1 cache-2.internal cache-2.internal cache-2.internal 10.0.0.1 10.0.0.3 10.0.0.3 10.0.0.3 10.0.0.3",
		Consistent: "10.0.0.1 10.0.0.1 10.0.0.1 cache-2.internal 10.0.0.1 10.0.0.3 10.0.0.1 10.0.0.1 10.0.0.1 cache-2.internal",
		Ketama:     "cache-2.internal 10.0.0.1 cache-2.internal cache-2.internal 10.0.0.1 10.0.0.3 10.0.0.3 10.0.0.1 10.0.0.1 10.0.0.1",
	} {
		r, err := newRing(pool, d)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range keys {
			got = append(got, pool[r.pick(k)].Host)
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s:\n got %s\nwant %s", d, g, want)
		}
	}
	if _, err := newRing(pool, "random"); err == nil {
		t.Error("an unknown distribution was taken")
	}
}

// TestPoolSharedWithPHP runs three memcached servers of the test's own and, for each distribution and
// a pool with even and uneven weights, lets PHP's memcached extension (set up as Laravel's
// MemcachedConnector sets it up: options, then each server with its weight) write keys that the store
// then reads, and the other way round. A key read from another server than the one PHP wrote it to is
// a miss.
func TestPoolSharedWithPHP(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		testenv.Missing(t, "php is not installed (run .ci/services)")
	}
	if out, err := exec.Command(php, "-r", `exit(class_exists("Memcached") ? 0 : 1);`).CombinedOutput(); err != nil {
		testenv.Missing(t, "PHP's memcached extension is not loaded: apt-get install php-memcached (or run .ci/services): %v %s", err, out)
	}
	ports := []int{testenv.StartMemcached(t), testenv.StartMemcached(t), testenv.StartMemcached(t)}
	ctx := context.Background()
	for _, d := range Distributions {
		for _, weights := range [][]int{{100, 100, 100}, {1, 3, 2}} {
			t.Run(fmt.Sprintf("%s-%v", d, weights), func(t *testing.T) {
				var pool []Server
				var addServers string
				for i, port := range ports {
					host := "127.0.0.1"
					if i == 1 {
						host = "localhost" // hashed as written
					}
					pool = append(pool, Server{Host: host, Port: port, Weight: weights[i]})
					addServers += fmt.Sprintf("$m->addServer(%q, %d, %d);", host, port, weights[i])
				}
				prefix := fmt.Sprintf("t%d_%s_%d", time.Now().UnixNano(), d, weights[0])
				s, err := Open(ctx, Params{Servers: pool, Distribution: d, Prefix: prefix})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				options := map[Distribution]string{
					Modula:     "",
					Consistent: "$m->setOption(Memcached::OPT_DISTRIBUTION, Memcached::DISTRIBUTION_CONSISTENT);",
					Ketama:     "$m->setOption(Memcached::OPT_LIBKETAMA_COMPATIBLE, true);",
				}[d]
				const n = 200
				script := `$m = new Memcached();` + options + addServers + fmt.Sprintf(`
					$p = %q . ':';
					for ($i = 0; $i < %d; $i++) { if (!$m->set($p . "php$i", "v$i", 600)) { fwrite(STDERR, "set php$i: " . $m->getResultMessage()); exit(1); } }
					$miss = [];
					for ($i = 0; $i < %d; $i++) { if ($m->get($p . "go$i") !== "w$i") { $miss[] = "go$i"; } }
					echo implode(" ", $miss);`, prefix, n, n)
				for i := range n {
					if err := s.CachePut(ctx, "go"+strconv.Itoa(i), serializedString("w"+strconv.Itoa(i)), 10*time.Minute); err != nil {
						t.Fatal(err)
					}
				}
				out, err := exec.Command(php, "-r", script).CombinedOutput()
				if err != nil {
					t.Fatalf("php: %v\n%s", err, out)
				}
				if len(out) > 0 {
					t.Errorf("PHP missed keys the store wrote: %s", out)
				}
				used := map[int]int{}
				for i := range n {
					k := "php" + strconv.Itoa(i)
					v, ok, err := s.CacheGet(ctx, k)
					if err != nil || !ok || v != serializedString("v"+strconv.Itoa(i)) {
						t.Fatalf("the store read %s as %q %v %v, as PHP wrote it: \"v%d\"", k, v, ok, err, i)
					}
					used[s.ring.pick(s.prefix+k)]++
				}
				if len(used) != len(pool) {
					t.Errorf("the keys fell on %d of the %d servers: %v", len(used), len(pool), used)
				}
			})
		}
	}
}

// TestPoolWithServerDown opens a pool whose second server does not answer: the store opens, Down names
// that server, a key on the live server is written and read, and a key on the dead one is an error,
// not a miss. With no server answering, Open fails naming each.
func TestPoolWithServerDown(t *testing.T) {
	live := testenv.StartMemcached(t)
	dead := testenv.FreePort(t) // nothing listens there
	ctx := context.Background()
	pool := []Server{{Host: "127.0.0.1", Port: live}, {Host: "127.0.0.1", Port: dead}}
	s, err := Open(ctx, Params{Servers: pool, DialTimeout: time.Second})
	if err != nil {
		t.Fatalf("open with one server of two down: %v", err)
	}
	defer s.Close()
	if d := s.Down(); len(d) != 1 || !strings.Contains(d[0], strconv.Itoa(dead)) {
		t.Fatalf("Down() = %q, want the server on port %d", d, dead)
	}
	var onLive, onDead string
	for i := 0; onLive == "" || onDead == ""; i++ {
		k := "k" + strconv.Itoa(i)
		if s.ring.pick(k) == 0 {
			onLive = k
		} else {
			onDead = k
		}
	}
	if err := s.CachePut(ctx, onLive, "i:1;", time.Minute); err != nil {
		t.Fatalf("put on the live server: %v", err)
	}
	if v, ok, err := s.CacheGet(ctx, onLive); err != nil || !ok || v != "i:1;" {
		t.Fatalf("get from the live server: %q %v %v", v, ok, err)
	}
	if _, _, err := s.CacheGet(ctx, onDead); err == nil {
		t.Fatal("a key on the server that is down read as a miss, not an error")
	}
	_, err = Open(ctx, Params{Servers: pool[1:], DialTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(dead)) {
		t.Fatalf("open with every server down: %v, want an error naming port %d", err, dead)
	}
	if _, err := Open(ctx, Params{}); err == nil {
		t.Fatal("a pool of no server opened")
	}
}

// serializedString is PHP's serialize() of an ASCII string.
func serializedString(s string) string { return fmt.Sprintf("s:%d:%q;", len(s), s) }
