package faults_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/worker"
	"github.com/jmoiron/sqlx"
)

// throughProxy returns db reached through a fault-injecting proxy.
func throughProxy(t *testing.T, db testenv.Database) (testenv.Database, *faults.Proxy) {
	t.Helper()
	target := fmt.Sprintf("%s:%d", db.Host, db.Port)
	p := faults.StartProxy(t, target)
	host, port, _ := strings.Cut(p.Addr, ":")
	db.DSN = strings.Replace(db.DSN, target, p.Addr, 1)
	db.Host = host
	db.Port, _ = strconv.Atoi(port)
	return db, p
}

// TestNetworkFaults drains jobs through a proxy that adds latency, resets every connection, cuts
// connections right after a COMMIT is sent (so the worker never learns whether it committed), and
// holds all traffic for a while: the worker finishes, and no job is lost, run twice or failed.
func TestNetworkFaults(t *testing.T) {
	for _, open := range []func(testing.TB) testenv.Database{testenv.MySQL, testenv.Postgres} {
		db, proxy := throughProxy(t, open(t))
		t.Run(db.Dialect, func(t *testing.T) {
			jobs := size(300, 4000)
			d := newDrain(t, db, laravel.SchemaParams{}, jobs)
			w := d.worker(t, nil, func(c *worker.Config) { c.Tries = 1 })
			var mu sync.Mutex
			step := 0
			faultsAt := []func(){
				func() { proxy.Latency(5 * time.Millisecond) },
				func() { proxy.Latency(0); proxy.Reset() },
				// On PostgreSQL a claim's COMMIT goes alone, once its rows are in; a grouped delete
				// without a claim is one autocommit statement, cut right after its text is sent.
				func() {
					proxy.CutAfter(map[string]string{"mysql": "\x03commit", "pgsql": "commit"}[db.Dialect], 3)
				},
				func() { proxy.Pause() },
			}
			d.ledger.OnRecord(func(n int) {
				mu.Lock()
				defer mu.Unlock()
				for step < len(faultsAt) && n >= (step+1)*jobs/(len(faultsAt)+1) {
					faultsAt[step]()
					if step == len(faultsAt)-1 {
						time.AfterFunc(2*time.Second, proxy.Resume) // the black hole heals
					}
					step++
				}
			})
			runWorker(t, w)
			r := d.result(t)
			faults.Report(t, "network faults through a proxy ("+db.Dialect+")", r)
			st := w.Stats()
			t.Logf("commits cut %d, reapplied %d, unapplied %d", proxy.Cuts(), st.Reapplied, st.Unapplied)
			if r.Lost != 0 || r.Duplicated != 0 || r.WronglyFailed != 0 {
				t.Errorf("%v; want all zero", r)
			}
		})
	}
}

// TestCommitRefusedInTransaction: a server that answers COMMIT with an error and keeps the
// transaction open, as a Galera node cut off from the primary component does (1180, "Not connected
// to Primary Component"), here played by the proxy, which answers three COMMITs itself. The session
// must not go back to the pool: the next BEGIN on it failed with 1568 ("Transaction characteristics
// can't be changed while a transaction is in progress"), which refused a finished job's delete for
// good, and its open transaction held the claimed rows' locks. The worker finishes, and no job is
// lost, run twice or failed.
func TestCommitRefusedInTransaction(t *testing.T) {
	db, proxy := throughProxy(t, testenv.MySQL(t))
	jobs := size(600, 4000)
	d := newDrain(t, db, laravel.SchemaParams{}, jobs)
	w := d.worker(t, nil, func(c *worker.Config) { c.Tries = 1 })
	var once sync.Once
	d.ledger.OnRecord(func(n int) {
		if n >= jobs/3 {
			once.Do(func() {
				proxy.RefuseMySQL("\x03commit", 3, 1180, "HY000", "Error while appending streaming replication fragment(provider status: Not connected to Primary Component)")
			})
		}
	})
	runWorker(t, w)
	r := d.result(t)
	faults.Report(t, "COMMIT refused, its transaction left open (mysql)", r)
	st := w.Stats()
	t.Logf("commits refused %d, reapplied %d, unapplied %d", proxy.Refused(), st.Reapplied, st.Unapplied)
	if proxy.Refused() == 0 {
		t.Fatal("no COMMIT was refused")
	}
	if r.Lost != 0 || r.Duplicated != 0 || r.WronglyFailed != 0 || st.Unapplied != 0 {
		t.Errorf("%v, unapplied completions %d; want all zero", r, st.Unapplied)
	}
}

// TestHeldCommitGivesUp: a transaction whose COMMIT meets a server that stops answering just then ends
// with an error once its context does. go-sql-driver/mysql's Commit waits for the answer without a
// deadline and without the context: a claim stuck so held its worker, even one told twice to stop,
// for good (seen in the race run of TestSecondSignalStopsNowWhileDatabaseFrozen).
func TestHeldCommitGivesUp(t *testing.T) {
	for _, open := range []func(testing.TB) testenv.Database{testenv.MySQL, testenv.Postgres} {
		db, proxy := throughProxy(t, open(t))
		t.Run(db.Dialect, func(t *testing.T) {
			d := newDrain(t, db, laravel.SchemaParams{}, 0)
			t.Cleanup(proxy.Resume)
			ctx, cancel := context.WithTimeout(bg, 2*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- d.Conn.InTx(ctx, func(tx *sqlx.Tx) error {
					proxy.PauseAt("commit")
					_, err := tx.ExecContext(ctx, "select 1")
					return err
				})
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a COMMIT the server never answered succeeded")
				}
				t.Logf("the held COMMIT gave up: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("the COMMIT still waits 30 s after its context ended (2 s)")
			}
		})
	}
}
