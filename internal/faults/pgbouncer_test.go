package faults_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// TestBehindPgBouncer: three queue:work processes at their defaults drain one table through
// PgBouncer's transaction pooling, where each transaction may run on another server session. Every
// job runs once; each process sees the pooler at start and claims in one lane, and no session lock of
// theirs is left on a server connection of the pool.
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
	for _, want := range []string{"transaction_pooler=true", "claim_lanes=1"} {
		if !strings.Contains(start, want) {
			t.Errorf("start log %q does not say %s", start, want)
		}
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
	var locks int
	direct := testenv.Postgres(t).Open(t)
	if err := direct.QueryRow(`select count(*) from pg_locks where locktype = 'advisory'
		and database = (select oid from pg_database where datname = $1)`, db.Name).Scan(&locks); err != nil {
		t.Fatal(err)
	}
	if locks != 0 {
		t.Errorf("%d advisory locks left on the server's connections of the pool, want 0", locks)
	}
}
