package laravel

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

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
			c, tables := openTables(t, db, "lock", OpenParams{}, SchemaParams{LegacyJobsIndex: legacy})
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

// TestBoundStaysBelowRowsBeingReturned: a claim that leaves out rows being given back after an
// unanswered COMMIT, and takes rows far above them, keeps its queue's bound at or below them. The
// return may end before that claim does; the next claim must then take them, not wait for a probe.
func TestBoundStaysBelowRowsBeingReturned(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		frozen := time.Unix(1_000_000, 0) // no probe below the bound comes due
		c, tables := openTables(t, db, "held", OpenParams{Clock: func() time.Time { return frozen }}, SchemaParams{})
		q, err := NewQueue(c, QueueParams{Strategy: "batch", Batch: 3})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for range 90 {
			id, err := q.JobPush(ctx, &JobPushParams{Queue: "default", Payload: []byte("{}"), Now: 100, AvailableAt: 100})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		// Rows 4 to 80 are gone, so that a claim after the first three reaches far above them.
		if _, err := c.db.ExecContext(ctx, c.rebind("delete from "+c.quote(tables.Jobs)+" where id > ? and id < ?"), ids[2], ids[80]); err != nil {
			t.Fatal(err)
		}
		claim := func() []int64 {
			t.Helper()
			jobs, err := q.JobClaim(ctx, &JobClaimParams{Queue: "default", Now: 200, RetryAfter: 90, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, j := range jobs {
				got = append(got, j.ID)
			}
			return got
		}
		// The first three rows are being given back (as returnUnknownClaim marks them).
		c.unknownMu.Lock()
		c.unknown = map[int64]bool{ids[0]: true, ids[1]: true, ids[2]: true}
		c.unknownMu.Unlock()
		if got, want := claim(), ids[80:83]; !slices.Equal(got, want) {
			t.Fatalf("claim while the first rows are given back: %v, want %v", got, want)
		}
		// The return ends: the rows are claimable again.
		c.unknownMu.Lock()
		c.unknown = nil
		c.unknownMu.Unlock()
		if got, want := claim(), ids[:3]; !slices.Equal(got, want) {
			t.Fatalf("claim after the return: %v, want the given-back rows %v", got, want)
		}
	})
}
