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
				jobs, _, err := r.claim(ctx, &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90}, nil, 4)
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

// TestCASClaimPassesOverTakenRows: on SQLite, where one writer runs at a time, the optimistic
// strategy compares and sets its candidates in one statement: a candidate another claimer took after
// it was read is passed over inside that statement, and the claim takes the next one in one write
// instead of losing a race per row.
func TestCASClaimPassesOverTakenRows(t *testing.T) {
	ctx := context.Background()
	c, tables := openTables(t, testenv.SQLite(t), "cas", OpenParams{}, SchemaParams{})
	for i := range 3 {
		if _, err := c.db.ExecContext(ctx, "insert into "+c.quote(tables.Jobs)+" (queue, payload, attempts, available_at, created_at) values ('default', ?, 0, 0, 0)", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	p := &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90}
	where, args := claimWhere(p, nil, 0)
	cands, err := selectCandidates(ctx, c, "select "+jobColumns+" from "+c.quote(tables.Jobs)+" where "+where+" order by id", args, false, false)
	if err != nil || len(cands) != 3 {
		t.Fatalf("candidates %v, %v", cands, err)
	}
	// Another claimer takes the head row after it was read.
	if _, err := c.db.ExecContext(ctx, "update "+c.quote(tables.Jobs)+" set reserved_at = 100, attempts = 1 where id = ?", cands[0].ID); err != nil {
		t.Fatal(err)
	}
	writes := c.Stats().Writes
	got, err := casClaimMany(ctx, c, p, cands, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != cands[1].ID || got[1].ID != cands[2].ID || got[0].Attempts != 1 || got[0].ReservedAt != 100 {
		t.Fatalf("claimed %+v, want the second and third rows with attempts 1 and reserved_at 100", got)
	}
	if n := c.Stats().Writes - writes; n != 1 {
		t.Errorf("claim took %d writes, want 1", n)
	}
	var reserved []int64
	if err := c.db.SelectContext(ctx, &reserved, "select id from "+c.quote(tables.Jobs)+" where reserved_at = 100 and attempts = 1 order by id"); err != nil || len(reserved) != 3 {
		t.Fatalf("rows reserved once: %v, %v; want all three", reserved, err)
	}
	// Nothing is left to take: an empty claim, not an error.
	if got, err := casClaimMany(ctx, c, p, cands, 1, false); err != nil || len(got) != 0 {
		t.Fatalf("claim of taken rows: %+v, %v; want none", got, err)
	}
}

// TestOptimisticBoundStaysBelowUntriedCandidates: a contended optimistic claim picks at random from a
// window of candidates wider than the bound's margin (every other row is held here, so 36 candidates
// span 72 ids); the bound it sets never passes a candidate it did not try, which would otherwise wait
// for a probe while the rows above it are taken.
func TestOptimisticBoundStaysBelowUntriedCandidates(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		c, tables := openTables(t, db, "optb", OpenParams{}, SchemaParams{})
		for i := 1; i <= 400; i++ {
			reserved := any(nil)
			if i%2 == 1 {
				reserved = 50 // a running job's reservation: not claimable at 100 with retry_after 90
			}
			if _, err := c.db.ExecContext(ctx, c.rebind("insert into "+c.quote(tables.Jobs)+" (queue, payload, attempts, reserved_at, available_at, created_at) values ('default', 'x', 0, ?, 0, 0)"), reserved); err != nil {
				t.Fatal(err)
			}
		}
		q, err := newOptimistic(c, QueueParams{})
		if err != nil {
			t.Fatal(err)
		}
		for range 60 {
			q.(*optimistic).contended.Store(true) // as after a lost race: the widest window, tried at random
			jobs, err := q.JobClaim(ctx, &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90, Limit: 1})
			if err != nil || len(jobs) != 1 {
				t.Fatalf("claim: %d jobs, %v", len(jobs), err)
			}
			var lowest int64
			if err := c.db.QueryRowContext(ctx, "select min(id) from "+c.quote(tables.Jobs)+" where reserved_at is null").Scan(&lowest); err != nil {
				t.Fatal(err)
			}
			if floor, _ := c.floors.get(c, "default"); floor > lowest {
				t.Fatalf("after claiming row %d the bound is %d, above the available row %d", jobs[0].ID, floor, lowest)
			}
		}
	})
}

// TestSQLiteEmptyClaimsDoNotWrite: on SQLite a claim after one that came back empty reads first, so a
// worker polling an idle queue takes the file's write lock once, not at every poll, and still claims
// a row as soon as one is there.
func TestSQLiteEmptyClaimsDoNotWrite(t *testing.T) {
	ctx := context.Background()
	c, tables := openTables(t, testenv.SQLite(t), "dry", OpenParams{}, SchemaParams{})
	insert := func() {
		if _, err := c.db.ExecContext(ctx, "insert into "+c.quote(tables.Jobs)+" (queue, payload, attempts, available_at, created_at) values ('default', 'x', 0, 0, 0)"); err != nil {
			t.Fatal(err)
		}
	}
	r := &rowClaimer{c: c}
	p := &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90}
	claim := func() int {
		jobs, _, err := r.claim(ctx, p, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		WaitFloorProbes(c)
		return len(jobs)
	}
	insert()
	if n := claim(); n != 1 {
		t.Fatalf("claimed %d rows, want 1", n)
	}
	if n := claim(); n != 0 {
		t.Fatalf("claimed %d rows from an empty queue", n)
	}
	before := c.Stats().Writes
	for range 5 {
		if n := claim(); n != 0 {
			t.Fatalf("claimed %d rows from an empty queue", n)
		}
	}
	if w := c.Stats().Writes - before; w != 0 {
		t.Fatalf("five claims of an idle queue after an empty one sent %d writes, want 0", w)
	}
	insert()
	if n := claim(); n != 1 {
		t.Fatalf("claimed %d rows once a row was there, want 1", n)
	}
}
