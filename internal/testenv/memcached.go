package testenv

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// StartMemcached starts a memcached server of the test's own on a free port of 127.0.0.1, stopped
// when the test ends, and returns its port once it accepts connections. The test is skipped (or fails
// under ARTISAN_GO_REQUIRE_ALL) when memcached is not installed.
func StartMemcached(t testing.TB) int {
	t.Helper()
	bin, err := exec.LookPath("memcached")
	if err != nil {
		Missing(t, "memcached is not installed: apt-get install memcached (or run .ci/services)")
	}
	port := FreePort(t)
	args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "16"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody") // memcached refuses to run as root
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start memcached: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return port
		}
		select {
		case err := <-exited:
			t.Fatalf("memcached on port %d exited before it listened: %v", port, err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("memcached on port %d did not listen within 30 s: %v", port, err)
		}
	}
}
