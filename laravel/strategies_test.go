package laravel_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

const t0 = int64(1_700_000_000)

// addColumn adds an integer column with default 0 to the setup's jobs table.
func addColumn(t *testing.T, s *queuetest.Setup, name string) {
	t.Helper()
	c := s.Conn
	if _, err := queuetest.DB(c).Exec("alter table " + queuetest.Q(c, c.Tables().Jobs) + " add column " + queuetest.Q(c, name) + " bigint not null default 0"); err != nil {
		t.Fatal(err)
	}
}

// laravelSelect runs Laravel's own getNextAvailableJob select (no lock) and returns the ids it sees.
func laravelSelect(t *testing.T, s *queuetest.Setup, now int64) []int64 {
	t.Helper()
	q, args := s.Conn.AvailableJobsSQL(&laravel.JobClaimParams{Queue: "default", Now: now, RetryAfter: 90}, nil, 100, "")
	rows, err := queuetest.DB(s.Conn).Queryx(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := laravel.ScanJobs(rows)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func TestDeleteMarkInvisibleToLaravel(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		for _, withColumn := range []bool{false, true} {
			s := queuetest.NewSetup(t, db, "delete-mark", queuetest.Options{})
			if withColumn {
				addColumn(t, s, "delete_mark")
				s.Queue = s.NewQueue(t, s.Conn)
			}
			a := s.Push(t, "default", t0, t0, 1)
			b := s.Push(t, "default", t0, t0, 2)
			j := s.Claim(t, s.Queue, "default", t0, 90)
			if j == nil || j.ID != a {
				t.Fatalf("claimed %+v, want %d", j, a)
			}
			if err := s.Queue.JobDelete(context.Background(), j); err != nil {
				t.Fatal(err)
			}
			var reserved, mark int64
			cols := "reserved_at, 0"
			if withColumn {
				cols = "reserved_at, delete_mark"
			}
			if err := queuetest.DB(s.Conn).QueryRow(queuetest.Rebind(s.Conn, "select "+cols+" from "+queuetest.Q(s.Conn, s.Conn.Tables().Jobs)+" where id = ?"), a).Scan(&reserved, &mark); err != nil {
				t.Fatalf("the marked row is gone before a sweep: %v", err)
			}
			if reserved != laravel.MarkedReservedAt || withColumn && mark != 1 {
				t.Fatalf("marked row: reserved_at %d delete_mark %d", reserved, mark)
			}
			// Laravel's predicate, long after any retry_after, still does not see the marked row.
			for _, now := range []int64{t0, t0 + 86400*365*10} {
				if ids := laravelSelect(t, s, now); len(ids) != 1 || ids[0] != b {
					t.Fatalf("Laravel's select at %d sees %v, want only %d", now, ids, b)
				}
			}
			if err := s.Queue.JobDelete(context.Background(), j); !errors.Is(err, laravel.ErrReservationLost) {
				t.Fatalf("second delete of a marked row: %v, want ErrReservationLost", err)
			}
			// A worker that did not mark the row finds it in its table-wide pass.
			other := s.NewQueue(t, queuetest.Open(t, s.Params))
			n, err := other.(laravel.JobSweeper).JobSweep(context.Background())
			if err != nil || n != 1 {
				t.Fatalf("sweep by another worker removed %d rows, %v; want 1", n, err)
			}
			if rows := s.Rows(t); len(rows) != 1 || rows[0].ID != b {
				t.Fatalf("rows after the sweep: %+v", rows)
			}
		}
	})
}

// floorQueue opens a queue of strategy with claims of batch rows on a connection whose clock moves only
// when the test says (so the probe period passes without a wait), and pushes a row available only at
// t0+10 (late, the lowest id) and then n rows available at t0.
func floorQueue(t *testing.T, db testenv.Database, strategy string, batch, n int) (*queuetest.Setup, *laravel.Conn, laravel.Queue, *stepClock, int64) {
	s := queuetest.NewSetup(t, db, strategy, queuetest.Options{})
	clk := &stepClock{}
	p := s.Params
	p.Clock = clk.Now
	conn := queuetest.Open(t, p)
	q, err := laravel.NewQueue(conn, laravel.QueueParams{Strategy: strategy, Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	late := s.Push(t, "default", t0, t0+10, 0)
	for i := 1; i <= n; i++ {
		s.Push(t, "default", t0, t0, i)
	}
	return s, conn, q, clk, late
}

// TestFloorStrandsNothing checks, for every strategy whose claims start at a moving lower bound on id,
// that a row far below the bound which becomes available is found by the probe and claimed within the
// probe period, while the queue is still busy, however often the bound moves.
func TestFloorStrandsNothing(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"batch", "delete-mark", "delete-retry", "optimistic"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				const n = 200
				s, conn, q, clk, late := floorQueue(t, db, strategy, 2, n)
				ctx := context.Background()
				claim := func(now int64) *laravel.Job {
					jobs, err := q.JobClaim(ctx, &laravel.JobClaimParams{Queue: "default", Now: now, RetryAfter: 90, Limit: 1})
					if err != nil {
						t.Fatal(err)
					}
					laravel.WaitFloorProbes(conn)
					clk.Advance(15 * time.Millisecond)
					if len(jobs) == 0 {
						return nil
					}
					if err := q.JobDelete(ctx, jobs[0]); err != nil {
						t.Fatal(err)
					}
					return jobs[0]
				}
				// Before the late row is available, the bound passes it by far more than the claims' margin.
				for range n / 2 {
					if j := claim(t0); j == nil || j.ID == late {
						t.Fatalf("claim before the late row is available = %+v", j)
					}
				}
				// The late row is available from now on, and the probe period passes (it is a second).
				start := clk.Now()
				clk.Advance(2 * time.Second)
				seen, left := false, 0
				for j := claim(t0 + 10); j != nil; j = claim(t0 + 10) {
					if j.ID == late {
						seen, left = true, len(s.Rows(t))
						t.Logf("the row below the moving bound was claimed after %v with %d rows still queued", clk.Now().Sub(start), left)
					}
				}
				if !seen || left == 0 {
					t.Fatalf("the row below the moving bound was claimed %v, with %d rows left: want it claimed within the probe period, before the queue drained", seen, left)
				}
				if rows := s.Rows(t); len(rows) != 0 {
					t.Fatalf("%d rows left", len(rows))
				}
			})
		})
	}
}

// TestSingleRowClaimsFromTheBound: optimistic's claims start at the queue's lower bound on id, and so
// do delete-retry's where Laravel's claim is one UPDATE … RETURNING (PostgreSQL, SQLite), so a row that
// becomes available far below the bound waits for the probe (TestFloorStrandsNothing) while the rows
// above it are taken. delete-retry on MySQL and MariaDB reads from the head as PHP's claim does and
// takes that row first.
func TestSingleRowClaimsFromTheBound(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"delete-retry", "optimistic"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				_, _, q, _, late := floorQueue(t, db, strategy, 1, 150)
				drained := len(claimDeleting(t, q, t0)) + len(claimDeleting(t, q, t0))
				if drained != 100 {
					t.Fatalf("claimed %d rows, want 100", drained)
				}
				// The late row is available now; no probe is due, the clock having stood still.
				jobs, err := q.JobClaim(context.Background(), &laravel.JobClaimParams{Queue: "default", Now: t0 + 10, RetryAfter: 90, Limit: 1})
				if err != nil || len(jobs) != 1 {
					t.Fatalf("claim: %d jobs, %v", len(jobs), err)
				}
				fromHead := strategy == "delete-retry" && db.Dialect == "mysql"
				if (jobs[0].ID == late) != fromHead {
					t.Fatalf("%s: the claim took row %d (the late row, far below the bound, is %d); want the late row only where the claim reads from the head", db.Dialect, jobs[0].ID, late)
				}
			})
		})
	}
}

// claimDeleting claims up to 50 rows of the default queue at now and deletes them.
func claimDeleting(t *testing.T, q laravel.Queue, now int64) []*laravel.Job {
	t.Helper()
	ctx := context.Background()
	jobs, err := q.JobClaim(ctx, &laravel.JobClaimParams{Queue: "default", Now: now, RetryAfter: 90, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if err := q.JobDelete(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	return jobs
}

// drainFloorQueue claims and deletes the 150 rows of floorQueue available at t0.
func drainFloorQueue(t *testing.T, q laravel.Queue) {
	t.Helper()
	for n := 0; n < 150; {
		jobs := claimDeleting(t, q, t0)
		if len(jobs) == 0 {
			t.Fatalf("queue empty after %d of 150 jobs", n)
		}
		n += len(jobs)
	}
}

// TestFloorProbeOnEmptyClaim: once the probe period has passed, a claim that finds nothing from its
// bound looks below it before it returns, so an idle worker takes a row that became available there
// (a delayed job whose time came) as soon as it polls.
func TestFloorProbeOnEmptyClaim(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"batch", "delete-mark", "delete-retry", "optimistic"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				s, _, q, clk, late := floorQueue(t, db, strategy, 50, 150)
				claim := func(now int64) []*laravel.Job { return claimDeleting(t, q, now) }
				drainFloorQueue(t, q)
				// Only the late row is left. (A claim here would probe, the queue having just run dry, and
				// on a loaded machine a slow probe makes the next one run beside its claim.)
				if rows := s.Rows(t); len(rows) != 1 || rows[0].ID != late {
					t.Fatalf("rows after the drain: %+v, want only the late row %d", rows, late)
				}
				clk.Advance(2 * time.Second)
				if jobs := claim(t0 + 10); len(jobs) != 1 || jobs[0].ID != late {
					t.Fatalf("first claim once the late row was available = %d jobs, want the row %d far below the bound", len(jobs), late)
				}
			})
		})
	}
}

// TestFloorProbeWhenDry: a claim that comes back empty within the probe period of claims that took
// rows (the queue just ran dry) looks below its bound at once, so a row the claims passed there is
// taken now rather than once the period is out.
func TestFloorProbeWhenDry(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"batch", "delete-mark", "delete-retry", "optimistic"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				_, _, q, clk, late := floorQueue(t, db, strategy, 50, 150)
				claim := func(now int64) []*laravel.Job { return claimDeleting(t, q, now) }
				drainFloorQueue(t, q)
				// Half the probe period later, the late row far below the bound is available.
				clk.Advance(500 * time.Millisecond)
				if jobs := claim(t0 + 10); len(jobs) != 1 || jobs[0].ID != late {
					t.Fatalf("first claim once the late row was available = %d jobs, want the row %d far below the bound", len(jobs), late)
				}
			})
		})
	}
}

func TestBatchPrefetchReturned(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		s := queuetest.NewSetup(t, db, "batch", queuetest.Options{})
		for i := range 4 {
			s.Push(t, "default", t0, t0, i)
		}
		j := s.Claim(t, s.Queue, "default", t0, 90)
		if err := s.Queue.(laravel.Prefetcher).JobReturnPrefetched(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, r := range s.Rows(t) {
			if r.ID != j.ID && (r.ReservedAt != nil || r.Attempts != 0) {
				t.Fatalf("prefetched row not given back: %+v", r)
			}
		}
		// Grouped deletes report exactly the rows whose claims are gone.
		other := s.NewQueue(t, queuetest.Open(t, s.Params))
		jobs, err := other.JobClaim(context.Background(), &laravel.JobClaimParams{Queue: "default", Now: t0 + 90, RetryAfter: 90, Limit: 4})
		if err != nil || len(jobs) != 4 {
			t.Fatalf("claim 4: %d, %v", len(jobs), err)
		}
		lost, err := s.Queue.(laravel.JobDeleteManyer).JobDeleteMany(context.Background(), append([]*laravel.Job{j}, jobs[1:]...))
		if err != nil || len(lost) != 1 || lost[0] != j {
			t.Fatalf("JobDeleteMany lost %v, %v; want only the stale claim", lost, err)
		}
		if rows := s.Rows(t); len(rows) != 1 || rows[0].ID != j.ID {
			t.Fatalf("rows after the grouped delete: %+v", rows)
		}
	})
}

// TestGroupedDeleteFencesEveryClaim deletes twelve rows claimed one by one, each claim its own
// (attempts, reserved_at), three of them since taken over by another worker and one claimed again
// with the same attempts: exactly those four are reported lost and stay.
func TestGroupedDeleteFencesEveryClaim(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		s := queuetest.NewSetup(t, db, "delete-retry", queuetest.Options{})
		const n = 12
		for i := range n {
			s.Push(t, "default", t0, t0, i)
		}
		var jobs []*laravel.Job
		for i := range n {
			jobs = append(jobs, s.Claim(t, s.Queue, "default", t0+int64(i), 90))
		}
		other := s.NewQueue(t, queuetest.Open(t, s.Params))
		taken, err := other.JobClaim(context.Background(), &laravel.JobClaimParams{Queue: "default", Now: t0 + 200, RetryAfter: 90, Limit: 3})
		if err != nil || len(taken) != 3 {
			t.Fatalf("take over 3 expired claims: %d, %v", len(taken), err)
		}
		// Another claim of the sixth row after a return (attempts undone): only reserved_at tells.
		c := s.Conn
		q := queuetest.Rebind(c, "update "+queuetest.Q(c, c.Tables().Jobs)+" set reserved_at = ? where id = ?")
		if _, err := queuetest.DB(c).Exec(q, t0+300, jobs[5].ID); err != nil {
			t.Fatal(err)
		}
		lost, err := s.Queue.(laravel.JobDeleteManyer).JobDeleteMany(context.Background(), jobs)
		if err != nil {
			t.Fatal(err)
		}
		want := []*laravel.Job{jobs[0], jobs[1], jobs[2], jobs[5]}
		if !slices.Equal(lost, want) {
			t.Fatalf("JobDeleteMany lost %d claims, want the 3 taken over and the sixth", len(lost))
		}
		rows := s.Rows(t)
		if len(rows) != len(want) {
			t.Fatalf("%d rows left, want %d", len(rows), len(want))
		}
		for i, r := range rows {
			if r.ID != want[i].ID {
				t.Fatalf("row %d left, want %d", r.ID, want[i].ID)
			}
		}
	})
}

func TestOptimisticVersionColumn(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		s := queuetest.NewSetup(t, db, "optimistic", queuetest.Options{})
		addColumn(t, s, "version")
		s.Queue = s.NewQueue(t, s.Conn)
		s.Push(t, "default", t0, t0, 1)
		j := s.Claim(t, s.Queue, "default", t0, 90)
		if j == nil || j.Version != 1 {
			t.Fatalf("claim = %+v, want version 1", j)
		}
		j2 := s.Claim(t, s.Queue, "default", t0+90, 90)
		if j2 == nil || j2.Version != 2 || j2.Attempts != 2 {
			t.Fatalf("re-claim = %+v, want version 2 attempts 2", j2)
		}
		if err := s.Queue.JobDelete(context.Background(), j2); err != nil {
			t.Fatal(err)
		}
	})
}

func TestChooseStrategy(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		s := queuetest.NewSetup(t, db, "delete-retry", queuetest.Options{})
		ctx := context.Background()
		name, reason, err := laravel.ChooseStrategy(ctx, s.Conn)
		if err != nil || name != "batch" || reason == "" {
			t.Fatalf("ChooseStrategy = %q, %q, %v; want batch", name, reason, err)
		}
		if db.Dialect == "mysql" {
			p := s.Params
			p.ServerVersion = "10.5.1-MariaDB"
			name, reason, _ := laravel.ChooseStrategy(ctx, queuetest.Open(t, p))
			if name != "batch" || !strings.Contains(reason, "no SKIP LOCKED") {
				t.Fatalf("without SKIP LOCKED: %q (%s), want batch, saying why", name, reason)
			}
			// Laravel 5.4's index: the claims take a plain FOR UPDATE, and the start says so.
			legacy := queuetest.NewSetup(t, db, "batch", queuetest.Options{Schema: laravel.SchemaParams{LegacyJobsIndex: true}})
			if name, reason, _ := laravel.ChooseStrategy(ctx, legacy.Conn); name != "batch" || !strings.Contains(reason, "(queue, reserved_at) index") || !strings.Contains(reason, "queue:migrate-index") {
				t.Fatalf("with Laravel 5.4's index: %q (%s), want batch, naming the index and the fix", name, reason)
			}
		}
		addColumn(t, s, "delete_mark")
		if name, _, _ := laravel.ChooseStrategy(ctx, s.Conn); name != "delete-mark" {
			t.Fatalf("with a delete_mark column: %q", name)
		}
		p := queuetest.OpenParams(db)
		if _, _, err := laravel.ChooseStrategy(ctx, queuetest.Open(t, p)); !errors.Is(err, laravel.ErrMissingTable) {
			t.Fatalf("without a jobs table: %v, want ErrMissingTable", err)
		}
	})
}

func TestBatchDeleteClaimsNext(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		s, q := batchOfTwo(t, db)
		ctx := context.Background()
		var ids []int64
		for i := range 5 {
			ids = append(ids, s.Push(t, "default", t0, t0, i))
		}
		reserved := func() map[int64]bool {
			out := map[int64]bool{}
			for _, r := range s.Rows(t) {
				out[r.ID] = r.ReservedAt != nil
			}
			return out
		}
		claim := func(n int) []*laravel.Job {
			jobs, err := q.JobClaim(ctx, &laravel.JobClaimParams{Queue: "default", Now: t0, RetryAfter: 90, Limit: n})
			if err != nil {
				t.Fatal(err)
			}
			return jobs
		}
		first := claim(2)
		if len(first) != 2 || first[0].ID != ids[0] || first[1].ID != ids[1] {
			t.Fatalf("first claim = %v", first)
		}
		// Another worker takes the first row over after retry_after: its delete here must report the
		// lost claim, and the claim made in the same transaction still counts.
		other, err := laravel.NewQueue(queuetest.Open(t, s.Params), laravel.QueueParams{Strategy: "delete-retry"})
		if err != nil {
			t.Fatal(err)
		}
		if j := s.Claim(t, other, "default", t0+90, 90); j == nil || j.ID != ids[0] {
			t.Fatalf("take-over claim = %+v", j)
		}
		if err := q.JobDelete(ctx, first[0]); !errors.Is(err, laravel.ErrReservationLost) {
			t.Fatalf("delete of a row taken over = %v, want ErrReservationLost", err)
		}
		if r := reserved(); !r[ids[2]] || !r[ids[3]] || r[ids[4]] {
			t.Fatalf("after the first delete, rows %v: want the next two claimed with it, the last one free", r)
		}
		if err := q.JobDelete(ctx, first[1]); err != nil {
			t.Fatal(err)
		}
		next := claim(2) // from the buffer: the last row stays unclaimed
		if len(next) != 2 || next[0].ID != ids[2] || next[1].ID != ids[3] {
			t.Fatalf("second claim = %v, want rows %d and %d", next, ids[2], ids[3])
		}
		if r := reserved(); r[ids[4]] {
			t.Fatalf("the second claim went to the database: %v", r)
		}
		if err := q.JobDelete(ctx, next[0]); err != nil {
			t.Fatal(err)
		}
		if r := reserved(); !r[ids[4]] {
			t.Fatalf("the last row was not claimed with the third delete: %v", r)
		}
		// A stopping worker gives the prefetched row back; later deletes claim nothing.
		if err := q.(laravel.Prefetcher).JobReturnPrefetched(ctx); err != nil {
			t.Fatal(err)
		}
		if err := q.JobDelete(ctx, next[1]); err != nil {
			t.Fatal(err)
		}
		if r := reserved(); len(r) != 2 || r[ids[4]] || !r[ids[0]] {
			t.Fatalf("rows at the end: %v; want the taken-over row and the given-back one, unclaimed", r)
		}
	})
}

// stepClock is a clock that stands still until Advance moves it.
type stepClock struct{ ns atomic.Int64 }

func (c *stepClock) Now() time.Time          { return time.Unix(0, c.ns.Load()+t0*int64(time.Second)) }
func (c *stepClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// batchOfTwo sets up a table with a batch queue that claims two rows at a time.
// TestBatchSizeFollowsSlots: a batch queue built with no claim size claims as many rows as its running
// workers run at once (AddSlots), DefaultBatch when none runs; a size given is kept.
func TestBatchSizeFollowsSlots(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		s := queuetest.NewSetup(t, db, "batch", queuetest.Options{})
		for i := range 40 {
			s.Push(t, "default", t0, t0, i)
		}
		reserved := func() int {
			n := 0
			for _, r := range s.Rows(t) {
				if r.ReservedAt != nil {
					n++
				}
			}
			return n
		}
		claimOne := func(q laravel.Queue) {
			t.Helper()
			jobs, err := q.JobClaim(ctx, &laravel.JobClaimParams{Queue: "default", Now: t0, RetryAfter: 90, Limit: 1})
			if err != nil || len(jobs) != 1 {
				t.Fatalf("claim one job: %d, %v", len(jobs), err)
			}
		}
		newQueue := func(batch int) laravel.Queue {
			q, err := laravel.NewQueue(s.Conn, laravel.QueueParams{Strategy: "batch", Batch: batch})
			if err != nil {
				t.Fatal(err)
			}
			return q
		}

		one := newQueue(0)
		one.(laravel.SlotAware).AddSlots(1)
		claimOne(one)
		if n := reserved(); n != 1 {
			t.Fatalf("a worker running one job at a time reserved %d rows, want 1", n)
		}
		three := newQueue(0)
		three.(laravel.SlotAware).AddSlots(1)
		three.(laravel.SlotAware).AddSlots(2)
		claimOne(three)
		if n := reserved(); n != 1+3 {
			t.Fatalf("workers running 1 + 2 jobs at once: %d rows reserved, want 1 + 3", n)
		}
		given := newQueue(2)
		given.(laravel.SlotAware).AddSlots(1)
		claimOne(given)
		if n := reserved(); n != 4+2 {
			t.Fatalf("a claim size of 2 given: %d rows reserved, want 4 + 2", n)
		}
		gone := newQueue(0)
		gone.(laravel.SlotAware).AddSlots(4)
		gone.(laravel.SlotAware).AddSlots(-4)
		claimOne(gone)
		if n := reserved(); n != 6+laravel.DefaultBatch {
			t.Fatalf("its worker gone: %d rows reserved, want 6 + DefaultBatch (%d)", n, laravel.DefaultBatch)
		}
	})
}

func batchOfTwo(t *testing.T, db testenv.Database) (*queuetest.Setup, laravel.Queue) {
	s := queuetest.NewSetup(t, db, "batch", queuetest.Options{})
	q, err := laravel.NewQueue(s.Conn, laravel.QueueParams{Strategy: "batch", Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	return s, q
}
