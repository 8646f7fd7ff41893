package faults_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/cli"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/testenv"
)

// Classes of jobs that run for a while in a worker process, to be caught running.
const (
	slowClass     = `App\Jobs\SlowJob`
	slowFailClass = `App\Jobs\SlowFailingJob`
	waitingClass  = `App\Jobs\WaitingJob` // runs until its context ends
)

// Environment of a worker process started from the test binary (see workerMain).
const (
	workerArgsEnv   = "FAULTS_WORKER_ARGS"   // JSON list of queue:work arguments
	workerLedgerEnv = "FAULTS_WORKER_LEDGER" // the ledger file
	// workerIgnoreEnv, when set, starts the worker with SIGINT and SIGQUIT ignored, as a shell starts a
	// background job.
	workerIgnoreEnv = "FAULTS_WORKER_IGNORE_INT"
)

// workerMain runs this test binary as an artisan-go worker whose ledger jobs append their uuid to the
// ledger file, when a fault test started it as one; it does not return then.
func workerMain() {
	raw := os.Getenv(workerArgsEnv)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		panic(err)
	}
	ledger := os.Getenv(workerLedgerEnv)
	handlers.Register(ledgerClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		if err := faults.AppendLine(ledger, j.UUID); err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond) // the job's work, so that kills find jobs in flight
		return nil
	}))
	// The slow jobs run long enough for a test to stop the process while they run; the second one
	// then throws.
	slow := func(err error) handlers.Handler {
		return handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			if err := faults.AppendLine(ledger, j.UUID); err != nil {
				return err
			}
			time.Sleep(3 * time.Second)
			return err
		})
	}
	handlers.Register(waitingClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		if err := faults.AppendLine(ledger, j.UUID); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}))
	handlers.Register(slowClass, slow(nil))
	handlers.Register(slowFailClass, slow(errors.New("slow job failed")))
	if os.Getenv(workerIgnoreEnv) != "" {
		signal.Ignore(syscall.SIGINT, syscall.SIGQUIT)
	}
	os.Args = append([]string{"artisan-go"}, args...)
	os.Exit(cli.Main())
}

// workerProcess is a worker running as its own process.
type workerProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startWorker starts a worker process on the drain's tables with the queue:work arguments args, recording into the
// ledger file.
func startWorker(t *testing.T, d *drain, ledger string, args ...string) *workerProcess {
	t.Helper()
	var stderr io.Writer
	if testenv.RequireAll() || os.Getenv("ARTISAN_GO_TEST_LOG") != "" {
		stderr = os.Stderr
	}
	return startWorkerLogging(t, d, ledger, stderr, args...)
}

// startWorkerLogging is startWorker with the process's log written to stderr (nil: dropped).
func startWorkerLogging(t *testing.T, d *drain, ledger string, stderr io.Writer, args ...string) *workerProcess {
	t.Helper()
	return startWorkerOutput(t, d, ledger, nil, stderr, args...)
}

// startWorkerOutput is startWorker with the process's standard output and log given (nil: dropped).
func startWorkerOutput(t *testing.T, d *drain, ledger string, stdout, stderr io.Writer, args ...string) *workerProcess {
	t.Helper()
	raw, _ := json.Marshal(append([]string{"queue:work"}, args...))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerArgsEnv+"="+string(raw), workerLedgerEnv+"="+ledger, "CACHE_DRIVER=database")
	cmd.Env = append(cmd.Env, d.env()...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &workerProcess{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill sends SIGKILL and waits for the process to end.
func (p *workerProcess) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// signal sends sig.
func (p *workerProcess) signal(sig syscall.Signal) { _ = p.cmd.Process.Signal(sig) }

// waitWorkers waits for each worker process to end, up to three minutes each (then it asks for its
// goroutines on its standard error with SIGQUIT and fails the test); with ok, an exit status other
// than 0 fails the test too.
func waitWorkers(t *testing.T, procs []*workerProcess, ok bool) {
	t.Helper()
	for i, p := range procs {
		select {
		case <-p.done:
			if ok && p.err != nil {
				t.Fatalf("worker %d: %v", i+1, p.err)
			}
		case <-time.After(3 * time.Minute):
			p.signal(syscall.SIGQUIT)
			<-p.done
			t.Fatalf("worker %d still runs after three minutes", i+1)
		}
	}
}

// ledgerLines counts the executions in a ledger file.
func ledgerLines(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

// itoa is strconv.Itoa, for argument lists.
func itoa(n int) string { return strconv.Itoa(n) }

// waitLedger waits until the ledger holds n executions.
func waitLedger(t *testing.T, p *workerProcess, ledger string, n int) {
	t.Helper()
	waitFor(t, p, func() bool { return ledgerLines(ledger) >= n },
		func() string { return fmt.Sprintf("%d of %d jobs run", ledgerLines(ledger), n) })
}

// waitFor waits up to a minute until done holds; it fails, saying what state says, when the worker
// ends first or the minute passes.
func waitFor(t *testing.T, p *workerProcess, done func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !done() {
		select {
		case <-p.done:
			t.Fatalf("the worker ended (%v) with %s", p.err, state())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %s", state())
		}
	}
}
