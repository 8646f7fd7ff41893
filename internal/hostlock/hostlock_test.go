//go:build unix

package hostlock

import (
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestOneHolder: of two descriptors of one lock file one holds it at a time, another name or scope is
// a lock of its own, and closing the holder's descriptor frees it.
func TestOneHolder(t *testing.T) {
	scope := "hostlock-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	open := func(scope, name string) func() bool {
		t.Helper()
		f, err := Open(scope, name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return func() bool { return Try(f) }
	}
	a, b := open(scope, "lanes"), open(scope, "lanes")
	if !a() || b() {
		t.Fatal("two descriptors of one lock file both hold it, or the first could not take it")
	}
	if !open(scope, "0")() || !open(scope+"x", "lanes")() {
		t.Fatal("another name or scope shares the lock")
	}
	f, err := Open(scope, "lanes")
	if err != nil {
		t.Fatal(err)
	}
	Unlock(f) // not the holder's descriptor: it changes nothing
	f.Close()
	if b() {
		t.Fatal("another descriptor's unlock freed the lock")
	}
}

// TestFreedWhenHolderDies: a lock held by a process that is killed is free at once.
func TestFreedWhenHolderDies(t *testing.T) {
	scope := "hostlock-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	f, err := Open(scope, "lanes")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := f.Name()
	// flock(1) takes the lock and becomes the shell (--no-fork), which sleeps until killed.
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1) to hold the lock from another process")
	}
	cmd := exec.Command("flock", "--exclusive", "--no-fork", name, "sh", "-c", "echo held; exec sleep 60")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("the other process did not report the lock: %q %v", buf, err)
	}
	if Try(f) {
		t.Fatal("took a lock another process holds")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !Try(f) {
		t.Fatal("the lock of a killed process is still held")
	}
}
