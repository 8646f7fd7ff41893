package testenv

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
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
	return serve(t, bin, 1, func(ports []int) []string {
		args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(ports[0]), "-U", "0", "-m", "16"}
		if os.Geteuid() == 0 {
			args = append(args, "-u", "nobody") // memcached refuses to run as root
		}
		return args
	})[0]
}
