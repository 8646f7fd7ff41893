package phpapp

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// Worker is a running `php artisan queue:work database` process.
type Worker struct {
	cmd  *exec.Cmd
	out  testenv.Output
	done chan struct{}
	err  error
}

// orphanMaxTime bounds a PHP worker's life. A test binary that panics (go test's -timeout) runs no
// cleanup, and a worker started as a daemon with --sleep=0 would poll its database for ever, beside
// whatever runs next on the machine; longer than go test's default timeout, it stops no test early.
const orphanMaxTime = 15 * time.Minute

// StartWorker starts `php artisan queue:work database args...` (for example "--queue=high,default",
// "--stop-when-empty", "--sleep=0") in the background. The test fails if it cannot start; the
// worker is stopped when the test ends, and stops itself after orphanMaxTime unless args give a
// --max-time.
func (a *App) StartWorker(ctx context.Context, args ...string) *Worker {
	a.t.Helper()
	if !slices.ContainsFunc(args, func(s string) bool { return strings.HasPrefix(s, "--max-time") }) {
		args = append(slices.Clip(args), fmt.Sprintf("--max-time=%d", int(orphanMaxTime/time.Second)))
	}
	w := &Worker{done: make(chan struct{})}
	w.cmd = a.command(ctx, append([]string{"queue:work", "database"}, args...)...)
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.out
	// On cancellation ask for a graceful stop first, as a supervisor would.
	w.cmd.Cancel = func() error { return w.cmd.Process.Signal(syscall.SIGTERM) }
	w.cmd.WaitDelay = 30 * time.Second
	if err := w.cmd.Start(); err != nil {
		a.t.Fatalf("phpapp: start queue:work: %v", err)
	}
	go func() {
		w.err = w.cmd.Wait()
		close(w.done)
	}()
	a.t.Cleanup(func() { w.Stop() })
	return w
}

// Wait waits for the worker to exit by itself (--stop-when-empty, --once, --max-jobs) and returns
// its exit error, which includes what it printed.
func (w *Worker) Wait() error {
	<-w.done
	return w.exitErr()
}

// Stop sends SIGTERM, which makes Laravel's worker finish its current job and exit, and waits for
// it; after 30 seconds the process is killed.
func (w *Worker) Stop() error {
	select {
	case <-w.done:
		return w.exitErr()
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
		return fmt.Errorf("queue:work did not stop within 30s of SIGTERM and was killed\n%s", w.Output())
	}
	return w.exitErr()
}

// Done is closed when the worker process has exited.
func (w *Worker) Done() <-chan struct{} { return w.done }

// Output returns what the worker printed so far (standard output and error, interleaved).
func (w *Worker) Output() string { return w.out.String() }

func (w *Worker) exitErr() error {
	if w.err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(w.err, &ee) && !ee.Exited() {
		// Killed by the SIGTERM we sent: a normal stop for a worker without pcntl.
		return nil
	}
	return fmt.Errorf("queue:work: %w\n%s", w.err, w.Output())
}
