package faults_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// TestPauseSignals sends a queue:work process SIGUSR2 and SIGCONT, as Laravel's worker takes them: the
// first pauses it (it lives on and claims nothing), the second resumes it, and it runs the job pushed
// meanwhile; then SIGTERM or SIGQUIT stops it.
func TestPauseSignals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		d := newDrain(t, db, laravel.SchemaParams{}, 1)
		ledger := filepath.Join(t.TempDir(), "ledger")
		logs, lines := logLines(t)
		p := startWorkerLogging(t, d, ledger, logs, "--sleep", "0.05", "--timeout", "0")
		waitLedger(t, p, ledger, 1)
		waitNoRows(t, p, d) // the first job's delete commits a moment after it ran

		p.signal(syscall.SIGUSR2)
		waitLine(t, p, lines, "paused; not claiming jobs until resumed")
		d.push(t, 1)
		if rows := d.Rows(t); len(rows) != 1 || rows[0].ReservedAt != nil {
			t.Fatalf("the job pushed while paused: %+v, want one row, not reserved", rows)
		}

		p.signal(syscall.SIGCONT)
		waitLine(t, p, lines, "resumed")
		waitLedger(t, p, ledger, 2)
		// SIGTERM stops it gracefully, and so does SIGQUIT (as Laravel 9.24+ takes it), checked on one
		// of the databases: not the Go runtime's goroutine dump and exit status 2.
		stop := syscall.SIGTERM
		if db.Dialect == "sqlite" {
			stop = syscall.SIGQUIT
		}
		p.signal(stop)
		<-p.done
		if p.err != nil {
			t.Fatalf("the worker stopped by %v: %v, want status 0", stop, p.err)
		}
		if n, rows := ledgerLines(ledger), d.Rows(t); n != 2 || len(rows) != 0 {
			t.Fatalf("%d executions, %d rows left in jobs; want 2 and none", n, len(rows))
		}
	})
}

// startWaitingWorker starts a worker on SQLite whose one job runs until its context ends, and returns
// once the job runs, with the worker's log lines.
func startWaitingWorker(t *testing.T) (*drain, *workerProcess, <-chan string) {
	t.Helper()
	d := newDrain(t, testenv.SQLite(t), laravel.SchemaParams{}, 0)
	d.pushClass(t, waitingClass)
	ledger := filepath.Join(t.TempDir(), "ledger")
	logs, lines := logLines(t)
	p := startWorkerLogging(t, d, ledger, logs, "--sleep", "0.05", "--timeout", "0")
	waitLedger(t, p, ledger, 1)
	return d, p, lines
}

// TestSecondSignalStopsNow stops a worker whose job runs until its context ends. After the first
// SIGINT the worker waits for the job, as Laravel's finishes its job, and says how to stop at once;
// the second stops it with status 0, the job's row handed back for another worker.
func TestSecondSignalStopsNow(t *testing.T) {
	d, p, lines := startWaitingWorker(t)

	p.signal(syscall.SIGINT)
	waitLine(t, p, lines, "send it again to stop now")
	if rows := d.Rows(t); len(rows) != 1 || rows[0].ReservedAt == nil {
		t.Fatalf("after one SIGINT: %+v, want the running job's row reserved", rows)
	}
	p.signal(syscall.SIGINT)
	waitLine(t, p, lines, "stopping now; releasing unfinished jobs")
	<-p.done
	if p.err != nil {
		t.Fatalf("the worker stopped by a second SIGINT: %v, want status 0", p.err)
	}
	if rows := d.Rows(t); len(rows) != 1 || rows[0].ReservedAt != nil {
		t.Fatalf("after the second SIGINT: %+v, want the job's row back, not reserved", rows)
	}
}

// TestIgnoredInterruptStaysIgnored starts a worker with SIGINT and SIGQUIT ignored, as a shell starts
// a background job: they stay ignored, as PHP's worker leaves them, so the first stop signal it takes
// is the SIGTERM sent after them. Before, watching them took them up again and a SIGINT stopped it.
func TestIgnoredInterruptStaysIgnored(t *testing.T) {
	t.Setenv(workerIgnoreEnv, "1")
	_, p, lines := startWaitingWorker(t)
	p.signal(syscall.SIGINT)
	p.signal(syscall.SIGQUIT)
	p.signal(syscall.SIGTERM)
	timeout := time.After(time.Minute)
	for {
		select {
		case l := <-lines:
			if !strings.Contains(l, "stop signal received") {
				continue
			}
			if !strings.Contains(l, "signal=terminated") {
				t.Fatalf("the first stop signal taken: %s; want SIGTERM, SIGINT and SIGQUIT ignored", l)
			}
			p.signal(syscall.SIGTERM)
			<-p.done
			if p.err != nil {
				t.Fatalf("the worker stopped by a second SIGTERM: %v, want status 0", p.err)
			}
			return
		case <-p.done:
			t.Fatalf("the worker ended before taking SIGTERM: %v", p.err)
		case <-timeout:
			t.Fatal("no stop signal logged within a minute")
		}
	}
}

// TestSecondSignalStopsNowWhileDatabaseFrozen stops a worker whose database stopped answering (every
// byte held both ways, as by a hung server or a partition): the second SIGINT stops it within seconds,
// as with the database up, instead of after its claims' and completions' timeouts. The running job's
// row could not be handed back: it stays reserved, and runs again after retry_after.
func TestSecondSignalStopsNowWhileDatabaseFrozen(t *testing.T) {
	for _, open := range []func(testing.TB) testenv.Database{testenv.MySQL, testenv.Postgres} {
		db, proxy := throughProxy(t, open(t))
		t.Run(db.Dialect, func(t *testing.T) {
			d := newDrain(t, db, laravel.SchemaParams{}, 0)
			d.pushClass(t, waitingClass)
			ledger := filepath.Join(t.TempDir(), "ledger")
			logs, lines := logLines(t)
			var tail tailBuffer // the log's end and, at a hang, the goroutines (SIGABRT, GOTRACEBACK=all)
			t.Setenv("GOTRACEBACK", "all")
			p := startWorkerLogging(t, d, ledger, io.MultiWriter(logs, &tail), "--sleep", "0.05", "--timeout", "0")
			waitLedger(t, p, ledger, 1)
			proxy.Pause()
			t.Cleanup(proxy.Resume)
			p.signal(syscall.SIGINT)
			waitLine(t, p, lines, "send it again to stop now")
			p.signal(syscall.SIGINT)
			signalled := time.Now()
			select {
			case <-p.done:
			// A bound on a hang: the stop takes about 7 s. Before, the releases alone waited a minute,
			// and a claim whose COMMIT the freeze caught held the worker for good (TestHeldCommitGivesUp).
			case <-time.After(45 * time.Second):
				p.signal(syscall.SIGABRT)
				<-p.done
				t.Fatalf("the worker still runs 45 s after the second SIGINT, its database frozen; its log's end and goroutines:\n%s", tail.String())
			}
			t.Logf("stopped %v after the second SIGINT", time.Since(signalled).Round(time.Millisecond))
			if p.err != nil {
				t.Fatalf("the worker stopped by a second SIGINT: %v, want status 0", p.err)
			}
			proxy.Resume()
			if rows := d.Rows(t); len(rows) != 1 || rows[0].ReservedAt == nil {
				t.Fatalf("after the stop: %+v, want the job's row left reserved", rows)
			}
		})
	}
}

// TestStdoutReaderGone runs a worker whose standard output is a pipe nobody reads any more (a
// `queue:work | head -1`, a log shipper that died): as PHP, which ignores SIGPIPE, it runs every job
// and exits 0, where the Go runtime's default would kill it at the first line, a job reserved.
func TestStdoutReaderGone(t *testing.T) {
	d := newDrain(t, testenv.SQLite(t), laravel.SchemaParams{}, 20)
	ledger := filepath.Join(t.TempDir(), "ledger")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	p := startWorkerOutput(t, d, ledger, w, nil, "--stop-when-empty", "--sleep", "0.05", "--concurrency", "1")
	w.Close()
	<-p.done
	if p.err != nil {
		t.Fatalf("the worker with a closed stdout: %v, want status 0", p.err)
	}
	if n, rows := ledgerLines(ledger), d.Rows(t); n != 20 || len(rows) != 0 {
		t.Fatalf("%d executions, %d rows left in jobs; want 20 and none", n, len(rows))
	}
}

// tailBuffer keeps the last 256 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - 256<<10; over > 0 {
		b.buf = b.buf[over:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// logLines returns a writer for a worker process's log and a channel of its lines.
func logLines(t *testing.T) (io.Writer, <-chan string) {
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody waits for more lines: the worker's writes must not block
			}
		}
	}()
	return w, lines
}

// waitNoRows waits until the jobs table is empty: the jobs run have been deleted.
func waitNoRows(t *testing.T, p *workerProcess, d *drain) {
	t.Helper()
	waitFor(t, p, func() bool { return len(d.Rows(t)) == 0 },
		func() string { return fmt.Sprintf("%d rows still in jobs", len(d.Rows(t))) })
}

// waitLine waits for a log line that contains want.
func waitLine(t *testing.T, p *workerProcess, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the worker's log ended before a line with %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-p.done:
			t.Fatalf("the worker ended before logging %q: %v", want, p.err)
		case <-timeout:
			t.Fatalf("no log line with %q within a minute", want)
		}
	}
}
