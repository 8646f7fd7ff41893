package laravel

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestLanesShareSlotsAndClaims: the batch strategy in two lanes splits the workers' slots and the
// claim size between them, hands out rows from both, sends each job's completion to the lane that
// handed it out, and keeps no more rows reserved than the slots, prefetched rows included.
func TestLanesShareSlotsAndClaims(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		c, _ := openTables(t, db, "lanes", OpenParams{}, SchemaParams{})
		for batch, want := range map[int][2]int{9: {5, 4}, 8: {4, 4}} {
			qi, err := NewQueue(c, QueueParams{Strategy: "batch", Batch: batch, Lanes: 2})
			if err != nil {
				t.Fatal(err)
			}
			q := qi.(*laneQueue)
			q.AddSlots(8)
			if got := [2]int{q.lanes[0].size, q.lanes[1].size}; got != want {
				t.Errorf("claim sizes %v for a claim batch of %d in two lanes, want %v", got, batch, want)
			}
		}
		qi, err := NewQueue(c, QueueParams{Strategy: "batch", Batch: 8, Lanes: 2})
		if err != nil {
			t.Fatal(err)
		}
		q := qi.(*laneQueue)
		q.AddSlots(8)
		if got := []int{q.lanes[0].slots, q.lanes[1].slots}; got[0] != 4 || got[1] != 4 {
			t.Errorf("slots %v for 8 in two lanes, want [4 4]", got)
		}
		for range 40 {
			if _, err := q.JobPush(ctx, &JobPushParams{Queue: "default", Payload: []byte("{}"), Now: 100, AvailableAt: 100}); err != nil {
				t.Fatal(err)
			}
		}
		reserved := func() int { t.Helper(); return reservedRows(t, c) }
		claim := func(n int) []*Job { t.Helper(); return claimRows(t, q, n) }
		jobs := claim(8)
		if len(jobs) != 8 {
			t.Fatalf("claimed %d jobs for 8 free slots, want 8", len(jobs))
		}
		for i, l := range q.lanes {
			if n := len(l.out); n != 4 {
				t.Errorf("lane %d handed out %d jobs, want 4", i, n)
			}
		}
		// A release goes to its own lane, whose slot is free again; the other lane's stay taken.
		first := jobs[0]
		owner := q.laneOf(first)
		if err := q.JobRelease(ctx, first, &JobReleaseParams{Now: 100, Delay: 3600}); err != nil {
			t.Fatal(err)
		}
		for _, l := range q.lanes {
			want := 0
			if l == owner {
				want = 1
			}
			if got := l.free(); got != want {
				t.Errorf("a lane has %d free slots after one of its jobs was released, want %d", got, want)
			}
		}
		jobs = append(jobs[1:], claim(1)...)
		// Every job finishes at once: each lane deletes its own in one group and claims the next rows
		// for the slots the group frees, in the same transaction.
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Go(func() {
				if err := q.JobDelete(ctx, j); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := reserved(); n > 8 {
			t.Errorf("%d rows reserved after the deletes with 8 slots, want at most 8", n)
		}
		seen := map[int64]bool{first.ID: true}
		for _, j := range jobs {
			seen[j.ID] = true
		}
		for left := 40 - len(seen); left > 0; {
			batch := claim(8)
			if len(batch) == 0 {
				t.Fatalf("claim came back empty with %d rows left", left)
			}
			if n := reserved(); n > 8 {
				t.Errorf("%d rows reserved with 8 slots, want at most 8", n)
			}
			for _, j := range batch {
				if seen[j.ID] {
					t.Errorf("job %d handed out twice", j.ID)
				}
				seen[j.ID] = true
				left--
			}
			for _, j := range batch {
				wg.Go(func() {
					if err := q.JobDelete(ctx, j); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		if err := q.JobReturnPrefetched(ctx); err != nil {
			t.Fatal(err)
		}
		if n := reserved(); n != 0 {
			t.Errorf("%d rows left reserved after the prefetched rows were given back, want 0", n)
		}
		q.AddSlots(-8)
		if got := []int{q.lanes[0].slots, q.lanes[1].slots}; got[0] != 0 || got[1] != 0 {
			t.Errorf("slots %v after the worker left, want [0 0]", got)
		}
	})
}

// TestLanesFollowSlots: the batch strategy runs one lane when asked for one, and where claims do not
// skip locked rows; with lanes, a worker never has more of them running than it runs jobs at once
// (RunOnce: one), and the slots are spread evenly over the running ones.
func TestLanesFollowSlots(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		c, _ := openTables(t, db, "lanesslots", OpenParams{}, SchemaParams{})
		for _, lanes := range []int{0, 1} {
			q, err := NewQueue(c, QueueParams{Strategy: "batch", Lanes: lanes})
			if err != nil {
				t.Fatal(err)
			}
			if _, one := q.(*batchQueue); one != (lanes == 1 || !c.caps.SkipLocked) {
				t.Errorf("Lanes %d on %s: the batch strategy is a %T", lanes, db.Name, q)
			}
		}
		qi, err := NewQueue(c, QueueParams{Strategy: "batch", Lanes: 4})
		if err != nil {
			t.Fatal(err)
		}
		q := qi.(*laneQueue)
		for _, tc := range []struct {
			slots int
			want  []int
		}{{1, []int{1, 0, 0, 0}}, {3, []int{1, 1, 1, 0}}, {10, []int{3, 3, 2, 2}}, {0, []int{0, 0, 0, 0}}} {
			q.AddSlots(tc.slots - q.slots)
			var got []int
			for _, l := range q.lanes {
				got = append(got, l.slots)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%d slots in four lanes: %v, want %v", tc.slots, got, tc.want)
			}
			if n := q.LanesFor(tc.slots); n != max(min(4, tc.slots), 1) {
				t.Errorf("LanesFor(%d) = %d", tc.slots, n)
			}
		}
	})
}

// TestLanesLeadOnePerTable: at Lanes 0, of two queues on one jobs table the first to run 256 jobs at
// once takes the lead and runs two lanes, the other one; the lead passes on when its holder runs too
// few jobs for lanes, and the other takes it at its next claim once leadRetry has passed.
func TestLanesLeadOnePerTable(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		c, _ := openTables(t, db, "laneslead", OpenParams{}, SchemaParams{})
		a, b := leadQueues(t, c, db)
		slots := func(q *laneQueue) [2]int {
			return [2]int{q.lanes[0].slots, q.lanes[1].slots}
		}
		check := func(what string, q *laneQueue, want [2]int) {
			t.Helper()
			if got := slots(q); got != want {
				t.Errorf("%s: lanes hold %v slots, want %v", what, got, want)
			}
		}
		a.AddSlots(256)
		b.AddSlots(256)
		check("first queue at 256 jobs at once", a, [2]int{128, 128})
		check("second queue on the table", b, [2]int{256, 0})
		a.AddSlots(-56)
		check("first queue down to 200 jobs at once", a, [2]int{200, 0})
		if _, err := b.JobClaim(ctx, &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90, Limit: 1}); err != nil {
			t.Fatal(err)
		}
		check("second queue claiming within leadRetry of its try", b, [2]int{256, 0})
		leadDue(b)
		if _, err := b.JobClaim(ctx, &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90, Limit: 1}); err != nil {
			t.Fatal(err)
		}
		check("second queue claiming after leadRetry", b, [2]int{128, 128})
		a.AddSlots(56)
		check("first queue back at 256, the lead taken", a, [2]int{256, 0})
		b.AddSlots(-256)
		a.AddSlots(-256)
		if a.lead.conn != nil || b.lead.conn != nil {
			t.Error("a queue without slots still holds the lead")
		}
	})
}

// TestLanesLeadTakenWithJobsOut: a queue that takes the lead while its one lane has every slot's job
// out splits its slots at its next claim; the first lane's jobs finish through it, the second lane
// claims beside it, and every row is handed out once, deleted, and none is left reserved.
func TestLanesLeadTakenWithJobsOut(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		c, tables := openTables(t, db, "lanestakeover", OpenParams{}, SchemaParams{})
		holder, q := leadQueues(t, c, db)
		holder.AddSlots(256)
		q.AddSlots(256)
		const total = 700
		for range total {
			if _, err := q.JobPush(ctx, &JobPushParams{Queue: "default", Payload: []byte("{}"), Now: 100, AvailableAt: 100}); err != nil {
				t.Fatal(err)
			}
		}
		claim := func(n int) []*Job { t.Helper(); return claimRows(t, q, n) }
		seen := map[int64]bool{}
		take := func(jobs []*Job) {
			t.Helper()
			for _, j := range jobs {
				if seen[j.ID] {
					t.Errorf("job %d handed out twice", j.ID)
				}
				seen[j.ID] = true
			}
		}
		var wg sync.WaitGroup
		finish := func(jobs []*Job) {
			for _, j := range jobs {
				wg.Go(func() {
					if err := q.JobDelete(ctx, j); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		out := claim(256)
		take(out)
		if len(out) != 256 || len(q.lanes[0].out) != 256 {
			t.Fatalf("claimed %d jobs, %d out in the first lane; want 256 in one lane", len(out), len(q.lanes[0].out))
		}
		holder.AddSlots(-256)
		leadDue(q)
		finish(out[:100])
		out = out[100:]
		buffered := len(q.lanes[0].buf["default"]) // claimed by the 100 deletes, for the slots they freed
		more := claim(100)
		take(more)
		if got := [2]int{q.lanes[0].slots, q.lanes[1].slots}; got != [2]int{128, 128} {
			t.Fatalf("after the lead was taken the lanes hold %v slots, want [128 128]", got)
		}
		// The first lane's claimed rows go out first, though its share is now below its jobs out; the
		// second lane claims only the rest.
		if n := len(q.lanes[1].out); n != 100-buffered {
			t.Errorf("the second lane handed out %d jobs beside the first lane's %d claimed rows, want %d", n, buffered, 100-buffered)
		}
		if n := len(q.lanes[0].buf["default"]); n != 0 {
			t.Errorf("the first lane still holds %d claimed rows after a claim of 100", n)
		}
		for left := 256 - len(out) - len(more); left > 0; {
			jobs := claim(left) // the second lane's share: claims only in it
			if len(jobs) == 0 {
				break
			}
			take(jobs)
			more = append(more, jobs...)
			left -= len(jobs)
		}
		// The first lane still runs more jobs than its new share, so the second prefetches for slots
		// that are not free yet: one lane's share more than the slots at most, until they finish.
		if n := reservedRows(t, c); n > 256+128 {
			t.Errorf("%d rows reserved for 256 slots once the lead was taken, want at most %d", n, 256+128)
		}
		out = append(out, more...)
		for len(seen) < total {
			finish(out)
			out = claim(256)
			if len(out) == 0 {
				t.Fatalf("claim came back empty with %d rows never handed out", total-len(seen))
			}
			take(out)
		}
		finish(out)
		if err := q.JobReturnPrefetched(ctx); err != nil {
			t.Fatal(err)
		}
		var left int
		if err := c.db.QueryRowContext(ctx, "select count(*) from "+c.quote(tables.Jobs)).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Errorf("%d rows left in the table after every job finished, want 0", left)
		}
		q.AddSlots(-256)
	})
}

// TestLanesLeadLostWithItsSession: the lead is the lock of a session, so when the server ends that
// session the leading queue goes back to one lane at its next check, and another queue leads.
func TestLanesLeadLostWithItsSession(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		c, _ := openTables(t, db, "laneslost", OpenParams{}, SchemaParams{})
		a, b := leadQueues(t, c, db)
		a.AddSlots(256)
		b.AddSlots(256)
		defer a.AddSlots(-256)
		defer b.AddSlots(-256)
		lanes := func(q *laneQueue) [2]int { return [2]int{q.lanes[0].slots, q.lanes[1].slots} }
		if lanes(a) != [2]int{128, 128} || lanes(b) != [2]int{256, 0} {
			t.Fatalf("lanes before: %v and %v, want [128 128] and [256 0]", lanes(a), lanes(b))
		}
		for range 300 {
			if _, err := a.JobPush(ctx, &JobPushParams{Queue: "default", Payload: []byte("{}"), Now: 100, AvailableAt: 100}); err != nil {
				t.Fatal(err)
			}
		}
		// The second lane claims a batch for its free slots and hands out one row: the rest wait in it.
		a.lanes[0].AddSlots(-128)
		jobs, err := a.lanes[1].JobClaim(ctx, &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90, Limit: 1})
		a.lanes[0].AddSlots(128)
		if err != nil || len(jobs) != 1 || len(a.lanes[1].buf["default"]) == 0 {
			t.Fatalf("the second lane claimed %d rows and holds %d (%v); want 1 and more held", len(jobs), len(a.lanes[1].buf["default"]), err)
		}
		idSQL, killSQL, liveSQL := "select connection_id()", "kill %d", "select count(*) from information_schema.processlist where id = ?"
		if db.Dialect == "pgsql" {
			idSQL, killSQL, liveSQL = "select pg_backend_pid()", "select pg_terminate_backend(%d)", "select count(*) from pg_stat_activity where pid = $1"
		}
		var id int64
		if err := a.lead.conn.QueryRowContext(ctx, idSQL).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := c.db.ExecContext(ctx, fmt.Sprintf(killSQL, id)); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; {
			var n int
			if err := c.db.QueryRowContext(ctx, liveSQL, id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("session %d still alive 10 s after it was ended", id)
			}
			runtime.Gosched()
		}
		claim := func(q *laneQueue) {
			t.Helper()
			leadDue(q)
			if _, err := q.JobClaim(ctx, &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90, Limit: 1}); err != nil {
				t.Fatal(err)
			}
		}
		claim(a)
		if lanes(a) != [2]int{256, 0} || a.lead.conn != nil {
			t.Errorf("the queue whose session ended runs lanes %v, holding a session: %v", lanes(a), a.lead.conn != nil)
		}
		if n := len(a.lanes[1].buf["default"]); n != 0 {
			t.Errorf("the lane that stopped running still holds %d claimed rows", n)
		}
		held := 0
		for _, l := range a.lanes {
			held += len(l.out) + len(l.buf["default"])
		}
		if n := reservedRows(t, c); n != held {
			t.Errorf("%d rows reserved where the lanes hold %d: the stopped lane's rows must go back", n, held)
		}
		claim(b)
		if lanes(b) != [2]int{128, 128} {
			t.Errorf("the other queue runs lanes %v once the lead was free, want [128 128]", lanes(b))
		}
	})
}

// leadQueues opens two batch queues at Lanes 0 on c, or skips the test where such queues run one lane.
func leadQueues(t *testing.T, c *Conn, db testenv.Database) (a, b *laneQueue) {
	t.Helper()
	var qs [2]*laneQueue
	for i := range qs {
		q, err := NewQueue(c, QueueParams{Strategy: "batch"})
		if err != nil {
			t.Fatal(err)
		}
		lq, ok := q.(*laneQueue)
		if !ok {
			t.Skipf("%s: no SKIP LOCKED, so one lane (TestLanesFollowSlots)", db.Dialect)
		}
		qs[i] = lq
	}
	return qs[0], qs[1]
}

// leadingQueue returns a queue on c's jobs table that runs 256 jobs at once and has taken the lead,
// until the test ends.
func leadingQueue(t *testing.T, c *Conn, db testenv.Database) *laneQueue {
	t.Helper()
	a, _ := leadQueues(t, c, db)
	a.AddSlots(256)
	t.Cleanup(func() { a.AddSlots(-256) })
	if a.lead.conn == nil {
		t.Fatal("the queue did not take the lead")
	}
	return a
}

// leadDue makes q's lead due for its check (or its next try) at once, as if leadRetry had passed.
func leadDue(q *laneQueue) {
	q.lead.mu.Lock()
	q.lead.next = time.Time{}
	q.lead.mu.Unlock()
}

// reservedRows counts the rows of c's jobs table that a claim holds.
func reservedRows(t *testing.T, c *Conn) int {
	t.Helper()
	var n int
	if err := c.db.QueryRowContext(context.Background(), "select count(*) from "+c.quote(c.tables.Jobs)+" where reserved_at is not null").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// claimRows claims up to n rows of the queue default as a worker would, at the tests' clock of 100.
func claimRows(t *testing.T, q Queue, n int) []*Job {
	t.Helper()
	jobs, err := q.JobClaim(context.Background(), &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90, Limit: n})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// TestLanesLeadHoldsNoSnapshot: on PostgreSQL the lead's transaction stays open while the queue leads,
// and must hold no snapshot there: a snapshot's xmin would keep vacuum and every index scan's pruning
// from removing the rows deleted since, and each claim would walk past them. Checked after the lead is
// taken and after it is checked again, from the server's own view of the session (through PgBouncer
// in TestLanesLeadBehindTransactionPooler).
func TestLanesLeadHoldsNoSnapshot(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		if db.Dialect != "pgsql" {
			t.Skip("only PostgreSQL's lead keeps a transaction open")
		}
		c, _ := openTables(t, db, "leadsnapshot", OpenParams{}, SchemaParams{})
		a := leadingQueue(t, c, db)
		leadHoldsNoSnapshot(t, "lead taken", c.db, a.lead.session)
		// Nor does queue:doctor name it among the transactions that hold vacuum back.
		fs, err := Diagnose(context.Background(), c, DoctorParams{LongTransaction: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			// Other tests' transactions in the same database may be reported, not the lead's.
			if f.Code == "long-transaction" && strings.Contains(f.Message, fmt.Sprintf("(pid %d,", a.lead.session)) {
				t.Errorf("the doctor reports the lead's transaction: %s", f.Message)
			}
		}
		leadDue(a)
		if !a.lead.take(time.Now()) {
			t.Fatal("the lead was lost at its check")
		}
		leadHoldsNoSnapshot(t, "lead checked again", c.db, a.lead.session)
	})
}

// leadHoldsNoSnapshot fails the test unless PostgreSQL's backend pid is idle in a transaction that
// holds neither a snapshot (backend_xmin) nor a transaction id, read through q.
func leadHoldsNoSnapshot(t *testing.T, when string, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, pid int64) {
	t.Helper()
	var state string
	var xmin, xid sql.NullString
	if err := q.QueryRowContext(context.Background(), "select state, backend_xmin::text, backend_xid::text from pg_stat_activity where pid = $1",
		pid).Scan(&state, &xmin, &xid); err != nil {
		t.Fatal(err)
	}
	if state != "idle in transaction" || xmin.Valid || xid.Valid {
		t.Errorf("%s: the lead's session is %q with backend_xmin %q and backend_xid %q; want idle in transaction with neither",
			when, state, xmin.String, xid.String)
	}
}

// TestMigrateIndexBesideLead: queue:migrate-index builds PostgreSQL's indexes CONCURRENTLY, which
// waits for every transaction holding a snapshot older than its own; the lead's transaction, open
// beside it in a worker that keeps running, must not be one of them. (While the lead's statements
// left their snapshot, the build waited for as long as the worker led; since the lead's transaction
// is renewed, it would wait up to leadRetry.)
func TestMigrateIndexBesideLead(t *testing.T) {
	db := testenv.Postgres(t)
	c, tables := openTables(t, db, "migratelead", OpenParams{}, SchemaParams{LegacyJobsIndex: true})
	leadingQueue(t, c, db)
	other, err := Open(context.Background(), OpenParams{Dialect: Postgres, DSN: db.DSN, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// Well within leadRetry, after which the lead's transaction is renewed anyway.
	ctx, cancel := context.WithTimeout(context.Background(), leadRetry/2)
	defer cancel()
	plan, err := MigrateIndex(ctx, other, MigrateParams{})
	if err != nil {
		t.Fatalf("migrate the index beside a worker that leads: %v", err)
	}
	if len(plan) == 0 {
		t.Fatal("nothing to migrate on a table with the legacy index")
	}
}
