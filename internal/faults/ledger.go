// Package faults holds what the fault suite needs to break things on purpose: database servers of
// the tests' own (started on their own port and data directory, so that a test may kill and restart
// them), a TCP proxy that delays, resets and black-holes connections, and a ledger of every job
// execution from which lost, duplicated and wrongly failed jobs are counted.
package faults

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Ledger records every execution of a job's handler by uuid, in this process (Record) or appended as
// lines to a file by worker processes (Append, then Load).
type Ledger struct {
	mu   sync.Mutex
	runs map[string]int
	n    int
	// notify, when set, is called with the number of executions after each one.
	notify func(n int)
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{runs: map[string]int{}} }

// OnRecord sets a function called after each execution with the count so far.
func (l *Ledger) OnRecord(fn func(n int)) {
	l.mu.Lock()
	l.notify = fn
	l.mu.Unlock()
}

// Record counts one execution of uuid.
func (l *Ledger) Record(uuid string) {
	l.mu.Lock()
	l.runs[uuid]++
	l.n++
	n, fn := l.n, l.notify
	l.mu.Unlock()
	if fn != nil {
		fn(n)
	}
}

// Executions returns how many executions were recorded.
func (l *Ledger) Executions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// AppendLine appends one execution to a ledger file: one short line written with O_APPEND is one
// write, so lines from concurrent processes never mix, and a process killed after the write still
// has its execution counted.
func AppendLine(path, uuid string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(uuid + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Load adds the executions of a ledger file.
func (l *Ledger) Load(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if u := strings.TrimSpace(sc.Text()); u != "" {
			l.Record(u)
		}
	}
	return sc.Err()
}

// Result is what a fault run did to its jobs.
type Result struct {
	Jobs          int // good jobs pushed
	Lost          int // good jobs neither run nor in failed_jobs, or still in jobs after the drain
	Duplicated    int // executions beyond the first of a job
	WronglyFailed int // good jobs in failed_jobs
}

// Check counts lost, duplicated and wrongly failed jobs: pushed are the good jobs' uuids, failed the
// uuids found in failed_jobs, left the uuids still in jobs.
func (l *Ledger) Check(pushed, failed, left []string) Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := Result{Jobs: len(pushed)}
	isFailed := map[string]bool{}
	for _, u := range failed {
		isFailed[u] = true
	}
	isLeft := map[string]bool{}
	for _, u := range left {
		isLeft[u] = true
	}
	for _, u := range pushed {
		n := l.runs[u]
		switch {
		case isLeft[u], n == 0 && !isFailed[u]:
			r.Lost++
		case isFailed[u]:
			r.WronglyFailed++
		}
		if n > 1 {
			r.Duplicated += n - 1
		}
	}
	return r
}

// String prints the counts.
func (r Result) String() string {
	return fmt.Sprintf("jobs=%d lost=%d duplicated=%d wrongly_failed=%d", r.Jobs, r.Lost, r.Duplicated, r.WronglyFailed)
}

// report gathers the results of the fault tests for the table `make chaos` prints.
var report = struct {
	sync.Mutex
	rows  map[string]*row
	order []string
}{rows: map[string]*row{}}

type row struct {
	runs int
	Result
}

// Report adds one run of a fault to the table.
func Report(t testing.TB, fault string, r Result) {
	t.Logf("%s: %s", fault, r)
	report.Lock()
	defer report.Unlock()
	x := report.rows[fault]
	if x == nil {
		x = &row{}
		report.rows[fault] = x
		report.order = append(report.order, fault)
	}
	x.runs++
	x.Jobs += r.Jobs
	x.Lost += r.Lost
	x.Duplicated += r.Duplicated
	x.WronglyFailed += r.WronglyFailed
}

// Table returns the results reported so far as a Markdown table, by fault.
func Table() string {
	report.Lock()
	defer report.Unlock()
	var b strings.Builder
	b.WriteString("| fault | runs | jobs | lost | duplicated | wrongly failed |\n|---|---|---|---|---|---|\n")
	order := slices.Sorted(slices.Values(report.order))
	for _, f := range order {
		x := report.rows[f]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", f, x.runs, x.Jobs, x.Lost, x.Duplicated, x.WronglyFailed)
	}
	return b.String()
}
