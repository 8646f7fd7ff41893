package laravel

import (
	"context"
	"fmt"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestClaimLockFollowsIndex checks the lock clause of the batch claims that select rows in a
// transaction: a plain FOR UPDATE on a MySQL-family table that indexes reserved_at after queue
// (Laravel 5.4's index), the server's SKIP LOCKED on a table indexed by queue alone, and the server's
// clause wherever claims are one UPDATE … RETURNING, and for single-row claims. A claim under the
// plain lock still takes each row once.
func TestClaimLockFollowsIndex(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		for _, legacy := range []bool{false, true} {
			ctx := context.Background()
			prefix := testenv.Name("lock")
			tables := Tables{Jobs: prefix + "_jobs", FailedJobs: prefix + "_failed", JobBatches: prefix + "_batches", Cache: prefix + "_cache", CacheLocks: prefix + "_locks"}
			c, err := Open(ctx, OpenParams{Dialect: Dialect(db.Dialect), DSN: db.DSN, Tables: tables})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := CreateSchema(ctx, c, SchemaParams{LegacyJobsIndex: legacy}); err != nil {
				t.Fatal(err)
			}
			if got := (&rowClaimer{c: c}).lockFor(ctx); got != c.claimLock {
				t.Errorf("legacy index %v, single-row claims: lock clause %q, want the server's %q", legacy, got, c.claimLock)
			}
			r := &rowClaimer{c: c, batches: true}
			want := c.claimLock
			if legacy && !c.caps.UpdateReturning && c.caps.SkipLocked {
				want = "for update"
			}
			if got := r.lockFor(ctx); got != want {
				t.Errorf("legacy index %v: lock clause %q, want %q", legacy, got, want)
			}
			for i := range 6 {
				if _, err := c.db.ExecContext(ctx, c.rebind("insert into "+c.quote(tables.Jobs)+" (queue, payload, attempts, available_at, created_at) values ('default', ?, 0, 0, 0)"), fmt.Sprint(i)); err != nil {
					t.Fatal(err)
				}
			}
			seen := map[int64]bool{}
			for range 3 {
				jobs, err := r.claim(ctx, &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90}, nil, 4)
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range jobs {
					if seen[j.ID] {
						t.Errorf("legacy index %v: job %d claimed twice", legacy, j.ID)
					}
					seen[j.ID] = true
				}
			}
			if len(seen) != 6 {
				t.Errorf("legacy index %v: claimed %d of 6 jobs", legacy, len(seen))
			}
		}
	})
}
