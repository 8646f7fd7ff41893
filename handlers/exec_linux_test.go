//go:build linux

package handlers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecRouteDiesWithWorker runs an exec route's command in a process standing for the worker (this
// test binary, run again) and kills that process with SIGKILL: the command dies with it, instead of
// running on past the job's timeout with init as its parent.
func TestExecRouteDiesWithWorker(t *testing.T) {
	if pidFile := os.Getenv("ARTISAN_GO_EXEC_WORKER"); pidFile != "" {
		h := routeHandler(t, Route{Class: "X", Exec: []string{"/bin/sh", "-c", "echo $$ > " + pidFile + "; exec sleep 300"}})
		_ = h.Handle(context.Background(), fixtureJob(t, "welcome"))
		return
	}
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	worker := exec.Command(os.Args[0], "-test.run=^TestExecRouteDiesWithWorker$")
	worker.Env = append(os.Environ(), "ARTISAN_GO_EXEC_WORKER="+pidFile)
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	var pid string
	deadline := time.Now().Add(30 * time.Second)
	for pid == "" {
		b, _ := os.ReadFile(pidFile)
		if strings.HasSuffix(string(b), "\n") {
			pid = strings.TrimSpace(string(b))
		} else if time.Now().After(deadline) {
			worker.Process.Kill()
			t.Fatal("the command did not start")
		} else {
			time.Sleep(10 * time.Millisecond) // polling the file the command writes
		}
	}
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = worker.Wait()
	if state := waitKilled(pid); state != "" {
		syscall.Kill(-atoi(pid), syscall.SIGKILL)
		t.Fatalf("the command %s still runs after its worker was killed (state %s)", pid, state)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
