package testenv

import (
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// serve starts the server bin on n free ports of 127.0.0.1 (args builds its arguments from them),
// killed when the test ends, and returns the ports once it accepts connections on the first. A
// server that exits before it listens (another process took a port between FreePort and its start)
// is started again on other ports, twice; the test fails with the server's output after that, or when
// 30 s pass.
func serve(t testing.TB, bin string, n int, args func(ports []int) []string) []int {
	t.Helper()
	name := filepath.Base(bin)
	var output string
	for range 3 {
		ports := freePorts(t, n)
		listened, out := serveOn(t, name, ports[0], bin, args(ports)...)
		if listened {
			return ports
		}
		output = out
	}
	t.Fatalf("%s exited before it listened, three times on free ports:\n%s", name, output)
	return nil
}

// freePorts returns n distinct free ports.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for len(ports) < n {
		if p := FreePort(t); !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports
}

// serveOn starts bin and waits until it accepts connections on 127.0.0.1:port: true, or false with
// its output when it exits first.
func serveOn(t testing.TB, name string, port int, bin string, args ...string) (bool, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out := &Output{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
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
			return true, ""
		}
		select {
		case <-exited:
			return false, out.String()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on port %d did not listen within 30 s: %v\n%s", name, port, err, out)
		}
	}
}
