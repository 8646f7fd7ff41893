package testenv

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StartRedisCluster starts a Redis Cluster of the test's own: three masters on free ports of
// 127.0.0.1 (their cluster bus on free ports too), the slots spread by redis-cli --cluster create,
// stopped when the test ends. It returns the masters' ports once every node reports the cluster's
// state ok. The test is skipped (or fails under ARTISAN_GO_REQUIRE_ALL) when redis-server or redis-cli
// is missing.
func StartRedisCluster(t testing.TB) []int {
	t.Helper()
	server, err1 := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err1 != nil || err2 != nil {
		Missing(t, "redis-server and redis-cli are not installed: apt-get install redis-server (or run .ci/services)")
	}
	dir := t.TempDir()
	var ports []int
	var addrs []string
	for i := range 3 {
		port := serve(t, server, 2, func(p []int) []string {
			return []string{"--port", strconv.Itoa(p[0]), "--bind", "127.0.0.1",
				"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(p[1]),
				"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d-%d.conf", i, p[0])),
				"--save", "", "--appendonly", "no", "--dir", dir}
		})[0]
		ports = append(ports, port)
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range ports {
		for {
			out, err := exec.Command(cli, "-p", strconv.Itoa(p), "cluster", "info").CombinedOutput()
			if err == nil && strings.Contains(string(out), "cluster_state:ok") && strings.Contains(string(out), "cluster_known_nodes:3") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the Redis Cluster's node on port %d did not reach state ok within 30 s: %v\n%s", p, err, out)
			}
			time.Sleep(20 * time.Millisecond) // polling the node's own report, not waiting in its place
		}
	}
	return ports
}
