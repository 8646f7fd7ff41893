package faults_test

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// TestBehindPgBouncer: three queue:work processes at their defaults drain one table through
// PgBouncer's transaction pooling, where each transaction may run on another server session. Every
// job runs once; the process sees the pooler at start, and once they have stopped no lock of the claim
// lanes' lead is left on a server connection of the pool (a session's lock was, in a run of CI, when
// the pooler went unseen by one process).
func TestBehindPgBouncer(t *testing.T) {
	db := testenv.PostgresPooled(t, "transaction")
	d := newDrain(t, db, laravel.SchemaParams{}, size(3000, 20000))
	ledger := filepath.Join(t.TempDir(), "ledger")
	args := []string{"--sleep", "0.05", "--timeout", "0", "--stop-when-empty"}
	logw, lines := logLines(t)
	procs := []*workerProcess{startWorkerLogging(t, d, ledger, logw, args...)}
	start := ""
	for l := range lines {
		if strings.Contains(l, "artisan-go worker starting") {
			start = l
			break
		}
	}
	// The rest of its log is read by no one.
	go func() {
		for range lines {
		}
	}()
	if !strings.Contains(start, "transaction_pooler=true") {
		t.Errorf("start log %q does not say transaction_pooler=true", start)
	}
	for range 2 {
		procs = append(procs, startWorker(t, d, ledger, args...))
	}
	waitWorkers(t, procs, true)
	if err := d.ledger.Load(ledger); err != nil {
		t.Fatal(err)
	}
	r := d.result(t)
	faults.Report(t, "PgBouncer transaction pooling, three queue:work processes (pgsql)", r)
	if r.Lost != 0 || r.Duplicated != 0 || r.WronglyFailed != 0 {
		t.Errorf("%v; want 0 lost, 0 duplicated, 0 wrongly failed", r)
	}
	direct := testenv.Postgres(t).Open(t)
	// The pooler ends a departed client's server connection, and the server its transaction, soon
	// after the process exits; a session's lock stayed for good.
	for deadline := time.Now().Add(10 * time.Second); ; {
		var locks int
		if err := direct.QueryRow(`select count(*) from pg_locks where locktype = 'advisory'
			and database = (select oid from pg_database where datname = $1)`, db.Name).Scan(&locks); err != nil {
			t.Fatal(err)
		}
		if locks == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d advisory locks left on the server's connections of the pool 10 s after the workers stopped, want 0", locks)
		}
		runtime.Gosched()
	}
}
