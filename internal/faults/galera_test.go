package faults_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/laravel"
)

// TestGaleraNodes drains jobs with one queue:work process, at its defaults, on each node of a
// three-node MariaDB Galera cluster, several times. A node locks rows for its own sessions only, so
// claims made on different nodes take the same rows and the later commit fails certification: the
// claim's deadlock error, retried. No job is lost, none runs twice, none is failed, and every worker
// stops: with the group deletes' DELETE … RETURNING in autocommit, one drain in three left a worker
// waiting on its connection for good (see capabilities.ReturningInTx).
func TestGaleraNodes(t *testing.T) {
	nodes := faults.StartGalera(t, 3)
	db := nodes[0].Database()
	// The test's own reads wait until the first node has applied what the others committed.
	db.DSN += "&wsrep_sync_wait=1"
	d := newDrain(t, db, laravel.SchemaParams{}, 0)
	if !d.Conn.InCluster() {
		t.Fatal("a connection to a Galera node does not say it is one")
	}
	findings, err := laravel.Diagnose(bg, d.Conn, laravel.DoctorParams{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(findings, func(f laravel.Finding) bool { return f.Code == "galera-node" && f.Severity == laravel.SeverityNote }) {
		t.Errorf("queue:doctor's findings on a Galera node %+v, want the galera-node note", findings)
	}
	ledger := filepath.Join(t.TempDir(), "ledger")
	before := galeraConflicts(t, nodes)
	start := time.Now()
	for range size(3, 10) {
		d.push(t, size(2000, 5000))
		var procs []*workerProcess
		for _, n := range nodes {
			setup := *d.Setup
			setup.DB = n.Database()
			on := *d
			on.Setup = &setup
			procs = append(procs, startWorker(t, &on, ledger, "--sleep", "0.05", "--timeout", "0", "--stop-when-empty"))
		}
		for i, p := range procs {
			select {
			case <-p.done:
				if p.err != nil {
					t.Fatalf("the worker on node %d: %v", i+1, p.err)
				}
			case <-time.After(3 * time.Minute):
				p.signal(syscall.SIGQUIT) // its goroutines on its standard error, with ARTISAN_GO_TEST_LOG
				<-p.done
				t.Fatalf("the worker on node %d still runs after three minutes", i+1)
			}
		}
	}
	took := time.Since(start)
	if err := d.ledger.Load(ledger); err != nil {
		t.Fatal(err)
	}
	r := d.result(t)
	faults.Report(t, "Galera, a worker on each of three nodes (mysql)", r)
	t.Logf("%d jobs in %v; certification failures and aborted transactions on the nodes: %d", len(d.uuids), took.Round(time.Millisecond), galeraConflicts(t, nodes)-before)
	if r.Lost != 0 || r.Duplicated != 0 || r.WronglyFailed != 0 {
		t.Errorf("%v; want 0 lost, 0 duplicated, 0 wrongly failed", r)
	}
}

// TestGaleraNodeKilled kills one node of a three-node Galera cluster (SIGKILL) while a worker on each
// node drains: the two others stay the primary component and their workers go on; the rows the dead
// node's worker held come back after retry_after. No job is lost; no more run twice than were reserved
// when the node died (--tries 0: a job that ran there runs again rather than failing).
func TestGaleraNodeKilled(t *testing.T) {
	if !*long {
		t.Skip("the long fault suite only (make chaos): a cluster of its own and retry_after waits, about 25 s")
	}
	nodes := faults.StartGalera(t, 3)
	db := nodes[0].Database()
	db.DSN += "&wsrep_sync_wait=1"
	jobs := size(3000, 20000)
	d := newDrain(t, db, laravel.SchemaParams{}, jobs)
	ledger := filepath.Join(t.TempDir(), "ledger")
	const retryAfter = 3
	args := []string{"--sleep", "0.05", "--timeout", "0", "--tries", "0", "--retry-after", itoa(retryAfter), "--concurrency", "32", "--stop-when-empty"}
	on := func(n *faults.Server) *drain {
		setup := *d.Setup
		setup.DB = n.Database()
		nd := *d
		nd.Setup = &setup
		return &nd
	}
	var procs []*workerProcess
	for _, n := range nodes {
		procs = append(procs, startWorker(t, on(n), ledger, args...))
	}
	waitLedger(t, procs[2], ledger, jobs/3)
	nodes[2].Kill(t)
	reserved := reservedSince(t, d, 0)
	t.Logf("node 3 killed at %d executions, %d rows reserved", ledgerLines(ledger), reserved)
	// The dead node's worker can reach nothing now and goes with it, as a host's would; its
	// finished jobs' deletes, kept for the database to come back, go too.
	procs[2].kill()
	for i, p := range procs[:2] {
		select {
		case <-p.done:
		case <-time.After(3 * time.Minute):
			t.Fatalf("the worker on node %d still runs after three minutes", i+1)
		}
	}
	// Workers on the live nodes until the table is empty: the dead worker's rows come back after
	// retry_after.
	deadline := time.Now().Add(2 * time.Minute)
	for d.Count(t, d.Conn.Tables().Jobs) > 0 && time.Now().Before(deadline) {
		time.Sleep(retryAfter * time.Second) // the dead worker's reservations expire
		p := startWorker(t, on(nodes[0]), ledger, args...)
		<-p.done
	}
	if err := d.ledger.Load(ledger); err != nil {
		t.Fatal(err)
	}
	r := d.result(t)
	faults.Report(t, "Galera, one of three nodes killed mid-drain (mysql)", r)
	if r.Lost != 0 || r.WronglyFailed != 0 || r.Duplicated > reserved {
		t.Errorf("%v; want 0 lost, 0 wrongly failed, duplicated ≤ %d (rows reserved when the node died)", r, reserved)
	}
}

// galeraConflicts sums, over the nodes, the transactions that failed certification and those aborted
// for a replicated one (wsrep_local_cert_failures, wsrep_local_bf_aborts).
func galeraConflicts(t *testing.T, nodes []*faults.Server) int {
	t.Helper()
	total := 0
	for _, n := range nodes {
		db, err := sql.Open("mysql", n.Database().DSN)
		if err != nil {
			t.Fatal(err)
		}
		var sum int
		err = db.QueryRow(`select coalesce(sum(variable_value), 0) from information_schema.global_status
			where variable_name in ('WSREP_LOCAL_CERT_FAILURES', 'WSREP_LOCAL_BF_ABORTS')`).Scan(&sum)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		total += sum
	}
	return total
}
