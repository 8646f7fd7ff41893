package bench

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// runProcesses starts the commands, waits until stop says the drain is over (or every command has
// exited, when nothing would drain the table any more), reads each process's peak RSS and stops them
// with SIGTERM as a supervisor would. It returns the summed peak RSS in MB. A command that exits
// before it is told to stop is an error that quotes its output's last lines, which output(i) returns;
// how a command ends once told to stop is not (one told while it starts may die of the signal).
func runProcesses(ctx context.Context, cmds []*exec.Cmd, output func(i int) string, stop func() bool) (float64, error) {
	for _, cmd := range cmds {
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 30 * time.Second
	}
	var stopping atomic.Bool
	var wg sync.WaitGroup
	early := make([]error, len(cmds))
	var startErr error
	for i, cmd := range cmds {
		if startErr = cmd.Start(); startErr != nil {
			startErr = fmt.Errorf("start %s: %w", cmd.Path, startErr)
			cmds = cmds[:i]
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); !stopping.Load() {
				early[i] = fmt.Errorf("%s exited while the table was drained: %v: %s", cmd.Args[1], err, lastLines(output(i), 5))
			}
		}()
	}
	allExited := make(chan struct{})
	go func() { wg.Wait(); close(allExited) }()
	if startErr == nil {
		waitUntil(func() bool {
			select {
			case <-allExited:
				return true
			default:
				return ctx.Err() != nil || stop()
			}
		})
	}
	// Each process's own peak, read before it ends: the wait status's maxrss would also count the
	// bench process's resident set, which Linux carries into a child's maxrss across exec.
	stopping.Store(true)
	var rss float64
	for _, cmd := range cmds {
		rss += processPeakRSS(strconv.Itoa(cmd.Process.Pid))
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	wg.Wait()
	return rss, errors.Join(append(early, startErr)...)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
