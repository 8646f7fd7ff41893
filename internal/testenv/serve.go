package testenv

import (
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// serve starts the server bin with args, killed when the test ends, and waits until it accepts
// connections on 127.0.0.1:port, failing the test when it exits first or 30 s pass.
func serve(t testing.TB, port int, bin string, args ...string) {
	t.Helper()
	name := filepath.Base(bin)
	cmd := exec.Command(bin, args...)
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
			return
		}
		select {
		case <-exited:
			t.Fatalf("%s on port %d exited before it listened", name, port)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on port %d did not listen within 30 s: %v", name, port, err)
		}
	}
}
