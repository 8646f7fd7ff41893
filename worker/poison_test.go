package worker

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// withUUID returns p with its uuid replaced.
func withUUID(t *testing.T, p []byte, uuid string) []byte {
	t.Helper()
	var env struct{ UUID string }
	if err := json.Unmarshal(p, &env); err != nil {
		t.Fatal(err)
	}
	return bytes.Replace(p, []byte(`"uuid":"`+env.UUID+`"`), []byte(`"uuid":"`+uuid+`"`), 1)
}

// TestFailedRowRefusedUUID: a job whose uuid failed_jobs refuses (already there, or longer than the
// column) still fails, with a fresh uuid, instead of staying reserved and failing again for ever.
func TestFailedRowRefusedUUID(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, errors.New("boom")))
		dup := testUUID()
		f.exec(t, "insert into "+queuetest.Q(f.Conn, f.Conn.Tables().FailedJobs)+" (uuid, connection, queue, payload, exception, failed_at) values (?, 'database', 'default', '{}', 'earlier', '2026-01-01 00:00:00')", dup)
		f.push(t, "default", withUUID(t, envelope(t, jobClass, "", nil), dup))
		long := strings.Repeat("u", 300)
		f.push(t, "default", withUUID(t, envelope(t, jobClass, "", nil), long))
		w := f.worker(t, func(c *Config) { c.Tries = 1 })
		runOnce(t, w)
		runOnce(t, w)
		f.wantRows(t, 0, 3)
		if st := w.Stats(); st.Failed != 2 || st.Unapplied != 0 {
			t.Fatalf("stats %+v, want 2 failed, 0 unapplied", st)
		}
		uuids := map[string]int{}
		for _, r := range f.FailedRows(t) {
			uuids[r.UUID]++
		}
		if uuids[dup] != 1 || len(uuids) != 3 {
			t.Fatalf("failed_jobs uuids %v: want the earlier %s once and two others", uuids, dup)
		}
	})
}

// TestFailedRowImpossible: when failed_jobs cannot take the row at all (the table is gone), the row
// stays reserved, the refusal is counted, and the worker stops claiming that row instead of failing it
// again every retry_after.
func TestFailedRowImpossible(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(jobClass, failing(&calls, errors.New("boom")))
		f.push(t, "default", envelope(t, jobClass, "", nil))
		w := f.worker(t, func(c *Config) { c.Tries = 1 })
		f.exec(t, "drop table "+queuetest.Q(f.Conn, f.Conn.Tables().FailedJobs))
		runOnce(t, w)
		f.clock.Advance(2 * w.cfg.RetryAfter)
		if runOnce(t, w) {
			t.Fatal("the refused row was claimed again")
		}
		if st := w.Stats(); st.Unapplied != 1 || st.Refused != 1 || calls.Load() != 1 {
			t.Fatalf("stats %+v, handler calls %d: want 1 unapplied (refused), 1 call", st, calls.Load())
		}
		if row := f.onlyRow(t); row.ReservedAt == nil {
			t.Fatalf("row %+v: want it left reserved", row)
		}
	})
}
