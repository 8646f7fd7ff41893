package faults_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/laravel"
)

// TestGalera runs workers on a three-node MariaDB Galera cluster of the test's own: a worker on each
// node, then one node cut off and joined again, then (make chaos) one node killed.
func TestGalera(t *testing.T) {
	nodes := faults.StartGalera(t, 3)
	t.Run("nodes", func(t *testing.T) { galeraNodes(t, nodes) })
	t.Run("node-cut-off", func(t *testing.T) { galeraNodeCutOff(t, nodes) })
	if *long { // a node killed stays dead: last
		t.Run("node-killed", func(t *testing.T) { galeraNodeKilled(t, nodes) })
	}
}

// galeraNodes drains jobs with one queue:work process, at its defaults, on each node of a
// three-node MariaDB Galera cluster, several times. A node locks rows for its own sessions only, so
// claims made on different nodes take the same rows and the later commit fails certification: the
// claim's deadlock error, retried. No job is lost, none runs twice, none is failed, and every worker
// stops: with the group deletes' DELETE … RETURNING in autocommit, one drain in three left a worker
// waiting on its connection for good (see capabilities.ReturningInTx).
func galeraNodes(t *testing.T, nodes []*faults.Server) {
	d, ledger := galeraDrain(t, nodes, 0)
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
	before := galeraConflicts(t, nodes)
	start := time.Now()
	for range size(3, 10) {
		d.push(t, size(2000, 5000))
		// Worker i runs on node i.
		waitWorkers(t, startOnNodes(t, d, nodes, ledger, "--sleep", "0.05", "--timeout", "0", "--stop-when-empty"), true)
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

// galeraNodeKilled kills one node of a three-node Galera cluster (SIGKILL) while a worker on each
// node drains: the two others stay the primary component and their workers go on; the rows the dead
// node's worker held come back after retry_after. No job is lost; no more run twice than were reserved
// when the node died (--tries 0: a job that ran there runs again rather than failing).
func galeraNodeKilled(t *testing.T, nodes []*faults.Server) {
	jobs := size(3000, 20000)
	d, ledger := galeraDrain(t, nodes, jobs)
	const retryAfter = 3
	args := []string{"--sleep", "0.05", "--timeout", "0", "--tries", "0", "--retry-after", itoa(retryAfter), "--concurrency", "32", "--stop-when-empty"}
	procs := startOnNodes(t, d, nodes, ledger, args...)
	waitLedger(t, procs[2], ledger, jobs/3)
	nodes[2].Kill(t)
	reserved := reservedSince(t, d, 0)
	t.Logf("node 3 killed at %d executions, %d rows reserved", ledgerLines(ledger), reserved)
	// The dead node's worker can reach nothing now and goes with it, as a host's would; its
	// finished jobs' deletes, kept for the database to come back, go too.
	procs[2].kill()
	waitWorkers(t, procs[:2], false)
	// Workers on the live nodes until the table is empty: the dead worker's rows come back after
	// retry_after.
	deadline := time.Now().Add(2 * time.Minute)
	for d.Count(t, d.Conn.Tables().Jobs) > 0 && time.Now().Before(deadline) {
		time.Sleep(retryAfter * time.Second) // the dead worker's reservations expire
		p := startWorker(t, onNode(d, nodes[0]), ledger, args...)
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

// galeraNodeCutOff cuts one node of a three-node Galera cluster off from the others while a worker
// on each node drains (gmcast.isolate, as a network partition does): the node loses the primary
// component and refuses every statement on a table with error 1047 until it joins again. The finished
// jobs' deletes of its worker are kept and applied once it has joined (retry_after is longer than the
// cut), so no job is lost and none runs twice.
func galeraNodeCutOff(t *testing.T, nodes []*faults.Server) {
	jobs := size(4000, 20000)
	d, ledger := galeraDrain(t, nodes, jobs)
	args := []string{"--sleep", "0.05", "--timeout", "0", "--tries", "1", "--retry-after", "120", "--concurrency", "32", "--stop-when-empty"}
	procs := startOnNodes(t, d, nodes, ledger, args...)
	waitLedger(t, procs[2], ledger, jobs/4)
	isolate(t, nodes[2], true)
	waitClusterStatus(t, nodes[2], "non-Primary")
	t.Logf("node 3 cut off at %d executions", ledgerLines(ledger))
	isolate(t, nodes[2], false)
	waitClusterStatus(t, nodes[2], "Primary")
	waitClusterSize(t, nodes[0], len(nodes))
	waitWorkers(t, procs, false)
	if err := d.ledger.Load(ledger); err != nil {
		t.Fatal(err)
	}
	r := d.result(t)
	faults.Report(t, "Galera, one of three nodes cut off and joined again (mysql)", r)
	if r.Lost != 0 || r.Duplicated != 0 || r.WronglyFailed != 0 {
		t.Errorf("%v; want 0 lost, 0 duplicated, 0 wrongly failed", r)
	}
}

// isolate cuts a Galera node off from the others' group communication, or lets it join again.
func isolate(t *testing.T, n *faults.Server, on bool) {
	t.Helper()
	db, err := sql.Open("mysql", n.Database().DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v := map[bool]string{true: "1", false: "0"}[on]
	if _, err := db.Exec("set global wsrep_provider_options = 'gmcast.isolate=" + v + "'"); err != nil {
		t.Fatal(err)
	}
}

// galeraDrain creates the tables on the cluster through its first node and pushes n ledger jobs; the
// test's own reads wait until that node has applied what the others committed.
func galeraDrain(t *testing.T, nodes []*faults.Server, n int) (*drain, string) {
	t.Helper()
	db := nodes[0].Database()
	db.DSN += "&wsrep_sync_wait=1"
	return newDrain(t, db, laravel.SchemaParams{}, n), filepath.Join(t.TempDir(), "ledger")
}

// onNode is the drain with its workers pointed at node n.
func onNode(d *drain, n *faults.Server) *drain {
	setup := *d.Setup
	setup.DB = n.Database()
	on := *d
	on.Setup = &setup
	return &on
}

// startOnNodes starts a worker process on each node.
func startOnNodes(t *testing.T, d *drain, nodes []*faults.Server, ledger string, args ...string) []*workerProcess {
	t.Helper()
	procs := make([]*workerProcess, len(nodes))
	for i, n := range nodes {
		procs[i] = startWorker(t, onNode(d, n), ledger, args...)
	}
	return procs
}

// waitClusterStatus waits, up to a minute, until the node's wsrep_cluster_status is want.
func waitClusterStatus(t *testing.T, n *faults.Server, want string) {
	t.Helper()
	waitStatus(t, n, "wsrep_cluster_status", want)
}

// waitStatus waits, up to a minute, until the node's status variable name has the value want.
func waitStatus(t *testing.T, n *faults.Server, name, want string) {
	t.Helper()
	db, err := sql.Open("mysql", n.Database().DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		var v string
		err := db.QueryRow("select variable_value from information_schema.global_status where variable_name = ?", strings.ToUpper(name)).Scan(&v)
		if err == nil && v == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's %s is still %q (%v) after a minute, want %q", name, v, err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitClusterSize waits, up to a minute, until the node counts size nodes in its cluster.
func waitClusterSize(t *testing.T, n *faults.Server, size int) {
	t.Helper()
	waitStatus(t, n, "wsrep_cluster_size", strconv.Itoa(size))
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
