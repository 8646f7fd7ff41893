package queuetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// RaceResult is what a drain by racing workers observed.
type RaceResult struct {
	Executed  int   // handler runs
	Deadlocks int64 // deadlocks the workers' connections saw, retried or surfaced
	Busy      int64
	Retries   int64
}

// RaceParams shapes a drain by racing workers.
type RaceParams struct {
	Workers, Jobs int
	// ReleaseFirst releases every job on its first attempt (a new row, as after an exception with
	// backoff 0) and deletes it on the second, so inserts race with claims and deletes.
	ReleaseFirst bool
	// Work is how long each job's handler runs, so that claims scan past rows still reserved.
	Work time.Duration
}

// Race pushes jobs and drains them with workers goroutines, each on its own Conn as separate worker
// processes would be, and asserts every job ran exactly once per attempt (twice with ReleaseFirst) and
// none is left. Deadlocks and busy errors from claims are survived by claiming again, as the worker
// loop does.
func Race(t *testing.T, s *Setup, rp RaceParams) RaceResult {
	workers, jobs := rp.Workers, rp.Jobs
	runsPerJob := 1
	if rp.ReleaseFirst {
		runsPerJob = 2
	}
	t.Helper()
	now := time.Now().Unix()
	for i := range jobs {
		s.Push(t, "default", now, now, i)
	}
	var (
		mu   sync.Mutex
		runs = map[string]int{}
		done atomic.Int64
		wg   sync.WaitGroup
		res  RaceResult
		// A guard against a drain that never ends, not a speed target: under the race detector, beside
		// two other packages' race runs on two cores, eight SQLite workers drained 300 jobs twice in
		// more than 45 s.
		deadline = time.Now().Add(2 * time.Minute)
	)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	conns := make([]*laravel.Conn, workers)
	for w := range workers {
		p := s.Params
		p.MaxOpenConns = 2
		conns[w] = Open(t, p)
	}
	for w := range workers {
		q := s.NewQueue(t, conns[w])
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < int64(jobs) && ctx.Err() == nil {
				claimed, err := q.JobClaim(ctx, &laravel.JobClaimParams{Queue: "default", Now: time.Now().Unix(), RetryAfter: 90, Limit: 1})
				if errors.Is(err, laravel.ErrDeadlock) || errors.Is(err, laravel.ErrBusy) {
					continue
				}
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				if len(claimed) == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				for _, j := range claimed {
					mu.Lock()
					runs[string(j.Payload)]++
					mu.Unlock()
					time.Sleep(rp.Work)
					// Completions are retried as a worker retries them: on a loaded machine
					// eight SQLite writers can keep one waiting past its busy timeout.
					if rp.ReleaseFirst && j.Attempts == 1 {
						if err := laravel.TransientRetry.Do(ctx, func() error {
							return q.JobRelease(ctx, j, &laravel.JobReleaseParams{Now: time.Now().Unix()})
						}); err != nil {
							t.Errorf("worker %d: %v", w, err)
							return
						}
						continue
					}
					if err := laravel.TransientRetry.Do(ctx, func() error { return q.JobDelete(ctx, j) }); err != nil {
						t.Errorf("worker %d: %v", w, err)
						return
					}
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("workers did not drain %d jobs in time: %d done", jobs, done.Load())
	}
	for i := range jobs {
		if n := runs[string(Payload(i))]; n != runsPerJob {
			t.Errorf("job %d ran %d times, want %d", i, n, runsPerJob)
		}
		res.Executed += runs[string(Payload(i))]
	}
	if len(runs) != jobs {
		t.Errorf("%d distinct payloads ran, want %d", len(runs), jobs)
	}
	if left := s.Rows(t); len(left) != 0 {
		t.Errorf("%d jobs left in the table after the drain", len(left))
	}
	for _, c := range conns {
		st := c.Stats()
		res.Deadlocks += st.Deadlocks
		res.Busy += st.Busy
		res.Retries += st.Retries
	}
	return res
}

func caseWorkersRacing(t *testing.T, s *Setup) {
	r := Race(t, s, RaceParams{Workers: 8, Jobs: 500})
	t.Logf("8 workers drained 500 jobs; lock %q; deadlocks %d, busy %d, retries %d", s.Conn.Lock(), r.Deadlocks, r.Busy, r.Retries)
}

// Laravel 5.4's composite (queue, reserved_at) index with plain FOR UPDATE is the setup in which
// MySQL deadlocks were reported under concurrent workers, when the claim scans that index while
// releases insert and deletes remove rows. Any deadlock must surface as ErrDeadlock and be
// survived: nothing lost, nothing run twice. (MariaDB 10.11 plans Laravel's claim as a primary-key
// scan, which serializes claimers instead; InjectedConflict provokes a deadlock for certain.)
func caseWorkersRacingLegacyIndex(t *testing.T, s *Setup) {
	r := Race(t, s, RaceParams{Workers: 8, Jobs: 300, ReleaseFirst: true, Work: time.Millisecond})
	t.Logf("8 workers ran 300 jobs twice; lock %q; deadlocks %d, busy %d, retries %d", s.Conn.Lock(), r.Deadlocks, r.Busy, r.Retries)
}

// injectedConflict provokes one conflict deterministically with a second real transaction. On MariaDB
// and PostgreSQL: the other transaction holds an uncommitted failed_jobs row with the job's uuid, JobFail
// deletes the job and waits on that uuid, then the other transaction asks for the job's row: a deadlock
// whose victim is the fail (it has done less work on MariaDB, waited longer on PostgreSQL). The fail
// must be retried and succeed. On SQLite: a writer holds the database past the busy timeout, and the
// delete must report ErrBusy and leave the claim intact.
func injectedConflict(t *testing.T, s *Setup) {
	if s.Conn.Dialect() == laravel.SQLite {
		// A database file of its own, so that no other case's writers add to the short busy timeout.
		s = NewSetup(t, testenv.SQLite(t), s.Strategy, Options{})
	}
	s.Push(t, "default", t0, t0, 1)
	j := s.Claim(t, s.Queue, "default", t0, 90)
	uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", 1)
	c := s.Conn
	if c.Dialect() == laravel.SQLite {
		p := s.Params
		p.BusyTimeout = 50 * time.Millisecond
		q := s.NewQueue(t, Open(t, p))
		other, err := DB(c).Conn(bg)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := other.ExecContext(bg, "begin immediate"); err != nil {
			t.Fatal(err)
		}
		err = q.JobDelete(bg, j)
		if _, rerr := other.ExecContext(bg, "rollback"); rerr != nil {
			t.Fatal(rerr)
		}
		if !errors.Is(err, laravel.ErrBusy) {
			t.Fatalf("delete while another writer holds the database: err = %v, want ErrBusy", err)
		}
		wantUntouched(t, s, j)
		if err := q.JobDelete(bg, j); err != nil {
			t.Fatalf("delete after the writer finished: %v", err)
		}
		return
	}

	// Under load the database may still pick the injecting transaction as the victim (PostgreSQL
	// checks each waiter once, deadlock_timeout after it began waiting); then try again with a new job.
	for attempt := 1; ; attempt++ {
		won, err := injectDeadlock(t, s, j, uuid)
		if err != nil {
			t.Fatal(err)
		}
		if won {
			break
		}
		if attempt == 3 {
			t.Fatal("the injecting transaction was the deadlock victim three times")
		}
		t.Logf("attempt %d: the injecting transaction was the victim; again", attempt)
		s.Push(t, "default", t0, t0, 1+attempt)
		j = s.Claim(t, s.Queue, "default", t0, 90)
		uuid = fmt.Sprintf("00000000-0000-4000-8000-%012d", 1+attempt)
	}
	st := c.Stats()
	if st.Deadlocks < 1 || st.Retries < 1 {
		t.Fatalf("stats %+v: want the deadlock seen and retried", st)
	}
	if rows := s.Rows(t); len(rows) != 0 {
		t.Fatalf("job still there after the retried fail: %+v", rows)
	}
	if f := s.FailedRows(t); len(f) == 0 || f[len(f)-1].UUID != uuid {
		t.Fatalf("failed_jobs = %+v, want the row of the retried fail last", f)
	}
	t.Logf("injected deadlock: %+v", st)
}

// injectDeadlock runs one deadlock between JobFail of j and a second transaction, and reports whether
// the fail was the victim (and then retried successfully).
func injectDeadlock(t *testing.T, s *Setup, j *laravel.Job, uuid string) (failWasVictim bool, err error) {
	c := s.Conn
	before := c.Stats().Deadlocks
	tx, err := DB(c).BeginTxx(bg, nil)
	if err != nil {
		return false, err
	}
	if c.Dialect() == laravel.Postgres {
		// Let the fail's deadlock check run first; PostgreSQL aborts the backend whose check finds the
		// cycle. Setting it needs a superuser; without one the retry loop copes.
		if _, err := tx.Exec("set local deadlock_timeout = '3s'"); err != nil {
			_ = tx.Rollback()
			if tx, err = DB(c).BeginTxx(bg, nil); err != nil {
				return false, err
			}
		}
	}
	defer tx.Rollback()
	ins := Rebind(c, "insert into "+Q(c, c.Tables().FailedJobs)+" (uuid, connection, queue, payload, exception) values (?, 'database', 'default', '{}', 'x')")
	for i := range 50 { // weight, so MariaDB picks the fail as the victim
		if _, err := tx.Exec(ins, fmt.Sprintf("ffffffff-0000-4000-8000-%012d", i)); err != nil {
			return false, err
		}
	}
	if _, err := tx.Exec(ins, uuid); err != nil {
		return false, err
	}
	failed := make(chan error, 1)
	go func() {
		p := failParams()
		p.UUID = uuid
		failed <- s.Queue.JobFail(bg, j, p)
	}()
	waitForLockWait(t, c, failed)
	var id int64
	lockErr := tx.QueryRow(Rebind(c, "select id from "+Q(c, c.Tables().Jobs)+" where id = ? for update"), j.ID).Scan(&id)
	if err := tx.Rollback(); err != nil && lockErr == nil {
		return false, err
	}
	if err := <-failed; err != nil {
		return false, fmt.Errorf("fail after a deadlock: %w", err)
	}
	if lockErr != nil {
		return false, nil
	}
	return c.Stats().Deadlocks > before, nil
}

// waitForLockWait waits until some transaction on the server waits for a row lock: the fail has deleted
// the row and waits on the uuid.
func waitForLockWait(t *testing.T, c *laravel.Conn, failed <-chan error) {
	t.Helper()
	// MariaDB's information_schema.innodb_trx does not reliably list the waiting insert; its process
	// list does, in state "Update" for as long as it waits.
	q := "select count(*) from information_schema.processlist where state = 'Update' and time_ms > 50 and info like ?"
	if c.Dialect() == laravel.Postgres {
		q = "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and query like $1"
	}
	insert := "%insert into " + Q(c, c.Tables().FailedJobs) + "%"
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var n int
		if err := DB(c).QueryRow(q, insert).Scan(&n); err != nil {
			t.Fatalf("watch lock waits: %v", err)
		}
		if n > 0 {
			return
		}
		select {
		case err := <-failed:
			t.Fatalf("the fail finished without waiting for the injected transaction: %v", err)
		default:
		}
	}
	t.Fatal("the fail never waited for the injected transaction")
}

// lockWaitTimeout holds the claimed row in a second transaction while a delete on a connection with a
// short lock wait (MySQL innodb_lock_wait_timeout 1 s, PostgreSQL lock_timeout 300 ms) waits for it:
// the delete must report ErrBusy (1205, 55P03) and leave the claim for a later try. SQLite's busy
// timeout is covered by InjectedConflict.
func lockWaitTimeout(t *testing.T, s *Setup) {
	c := s.Conn
	param := map[laravel.Dialect]string{laravel.MySQL: "innodb_lock_wait_timeout=1", laravel.Postgres: "lock_timeout=300"}[c.Dialect()]
	if param == "" {
		t.Skip("SQLite locks the whole database, not rows; its busy timeout is covered by InjectedConflict")
	}
	if s.DB.Pooler != "" {
		t.Skip("PgBouncer refuses lock_timeout at connect (it is set on the role or the database there); the direct connection's case covers the error")
	}
	s.Push(t, "default", t0, t0, 1)
	j := s.Claim(t, s.Queue, "default", t0, 90)
	p := s.Params
	if strings.Contains(p.DSN, "?") {
		p.DSN += "&" + param
	} else {
		p.DSN += "?" + param
	}
	q := s.NewQueue(t, Open(t, p))
	tx, err := DB(c).BeginTxx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var id int64
	if err := tx.QueryRow(Rebind(c, "select id from "+Q(c, c.Tables().Jobs)+" where id = ? for update"), j.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	err = q.JobDelete(bg, j)
	if !errors.Is(err, laravel.ErrBusy) {
		t.Fatalf("delete of a row another transaction holds: err = %v, want ErrBusy", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	wantUntouched(t, s, j)
	if err := q.JobDelete(bg, j); err != nil {
		t.Fatalf("delete once the row is free: %v", err)
	}
}
