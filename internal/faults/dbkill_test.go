package faults_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/worker"
)

// TestDatabaseKilledMidDrain kills the database server (SIGKILL, every process) while a worker drains
// jobs with --tries 1, and starts it again after an outage: jobs that finished during the outage keep
// their completion and apply it after reconnecting, so none is lost, none runs twice and none lands
// in failed_jobs as attempted too many times. In pgsql-pgbouncer the worker reaches PostgreSQL through
// PgBouncer's transaction pooling, which stays up while the server behind it is killed: its errors
// for the broken and refused server connections count as a lost connection too. In
// pgbouncer-killed the pooler is what is killed and started again, the server staying up.
func TestDatabaseKilledMidDrain(t *testing.T) {
	servers := map[string]func(testing.TB) *faults.Server{"mysql": faults.StartMariaDB, "pgsql": faults.StartPostgres,
		"pgsql-pgbouncer": faults.StartPostgres, "pgbouncer-killed": faults.StartPostgres}
	for _, dialect := range []string{"mysql", "pgsql", "pgsql-pgbouncer", "pgbouncer-killed"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			srv := servers[dialect](t)
			db := srv.Database()
			kill, start := srv.Kill, srv.Start
			if strings.Contains(dialect, "pgbouncer") {
				b := testenv.StartPgBouncer(t, "127.0.0.1", srv.Port, "postgres", "transaction", 20)
				db.Port, db.Schema, db.Pooler = b.Port, "", b.Mode
				db.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", b.Port)
				if dialect == "pgbouncer-killed" {
					kill, start = b.Kill, b.Start
				}
			}
			for run := range size(1, 3) {
				outage := []time.Duration{700 * time.Millisecond, 5 * time.Second, 2 * time.Second}[run]
				jobs := size(600, 5000)
				d := newDrain(t, db, laravel.SchemaParams{}, jobs)
				w := d.worker(t, nil, func(c *worker.Config) { c.Tries = 1 })
				var once sync.Once
				killAt := make(chan struct{})
				d.ledger.OnRecord(func(n int) {
					if n >= jobs/3 {
						once.Do(func() { close(killAt) })
					}
				})
				done := make(chan struct{})
				go func() {
					defer close(done)
					if _, err := w.Run(bg); err != nil {
						t.Errorf("Run: %v", err)
					}
				}()
				<-killAt
				kill(t)
				time.Sleep(outage) // the fault's duration, not a synchronisation
				start(t)
				<-done
				r := d.result(t)
				fault := "database killed mid-drain (" + dialect + ")"
				if dialect == "pgbouncer-killed" {
					fault = "PgBouncer killed mid-drain, transaction pooling (pgsql)"
				}
				faults.Report(t, fault, r)
				st := w.Stats()
				t.Logf("outage %v: reapplied=%d unapplied=%d", outage, st.Reapplied, st.Unapplied)
				if r.Lost != 0 || r.Duplicated != 0 || r.WronglyFailed != 0 || st.Unapplied != 0 {
					t.Errorf("outage %v: %v, unapplied completions %d; want all zero", outage, r, st.Unapplied)
				}
			}
		})
	}
}
