// Package queuetest is the conformance suite every claim strategy must pass, on MariaDB, PostgreSQL and
// SQLite: claim order and predicate, fenced completions, release and fail rows as Laravel writes them,
// workers racing, reservations expiring mid-job and deadlocks. A strategy that is not run through Run
// does not exist.
package queuetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// Setup is one isolated set of Laravel tables, opened through one strategy.
type Setup struct {
	DB       testenv.Database
	Params   laravel.OpenParams
	Conn     *laravel.Conn
	Queue    laravel.Queue
	Strategy string
}

// Options varies the schema and connection a case runs against.
type Options struct {
	Schema         laravel.SchemaParams
	ForceForUpdate bool
	ServerVersion  string // the version the connection takes the server for (laravel.OpenParams)
}

// OpenParams returns parameters that open db with its own set of tables, named with a random prefix so
// that cases can share one database.
func OpenParams(db testenv.Database) laravel.OpenParams {
	prefix := testenv.Name("q")
	return laravel.OpenParams{
		Dialect: laravel.Dialect(db.Dialect),
		DSN:     db.DSN,
		Tables: laravel.Tables{
			Jobs: prefix + "_jobs", FailedJobs: prefix + "_failed_jobs", JobBatches: prefix + "_job_batches",
			Cache: prefix + "_cache", CacheLocks: prefix + "_cache_locks",
		},
		CachePrefix: "laravel_cache",
	}
}

// Open opens a Conn with p and closes it when the test ends.
func Open(t testing.TB, p laravel.OpenParams) *laravel.Conn {
	t.Helper()
	c, err := laravel.Open(context.Background(), p)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// NewSetup creates fresh tables in db and a Queue of the named strategy over them.
func NewSetup(t testing.TB, db testenv.Database, strategy string, o Options) *Setup {
	t.Helper()
	p := OpenParams(db)
	p.ForceForUpdate, p.ServerVersion = o.ForceForUpdate, o.ServerVersion
	c := Open(t, p)
	if err := laravel.CreateSchema(context.Background(), c, o.Schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	s := &Setup{DB: db, Params: p, Conn: c, Strategy: strategy}
	s.Queue = s.NewQueue(t, c)
	return s
}

// NewQueue opens the setup's strategy on another Conn, as a second worker process would.
func (s *Setup) NewQueue(t testing.TB, c *laravel.Conn) laravel.Queue {
	t.Helper()
	q, err := laravel.NewQueue(c, laravel.QueueParams{Strategy: s.Strategy})
	if err != nil {
		t.Fatalf("new queue: %v", err)
	}
	if q.Strategy() != s.Strategy {
		t.Fatalf("Strategy() = %q, want %q", q.Strategy(), s.Strategy)
	}
	return q
}

// Push inserts a job whose payload is a small Laravel-like envelope and returns its id.
func (s *Setup) Push(t testing.TB, queue string, now, availableAt int64, n int) int64 {
	t.Helper()
	id, err := s.Queue.JobPush(context.Background(), &laravel.JobPushParams{
		Queue: queue, Payload: Payload(n), Now: now, AvailableAt: availableAt,
	})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return id
}

// Payload returns a JSON envelope with a uuid that encodes n and characters that must survive byte for
// byte: escaped slashes, unicode escapes, raw UTF-8 and a NUL-mangled property name.
func Payload(n int) []byte {
	return fmt.Appendf(nil, `{"uuid":"00000000-0000-4000-8000-%012d","displayName":"App\\Jobs\\Run","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Run","command":"O:11:\"App\\Jobs\\Run\":1:{s:5:\"\u0000*\u0000n\";i:%d;} caf\u00e9 \/ café ✓"}}`, n, n)
}

// Claim claims with Limit 1 and returns the job or nil.
func (s *Setup) Claim(t testing.TB, q laravel.Queue, queue string, now, retryAfter int64, exclude ...int64) *laravel.Job {
	t.Helper()
	jobs, err := q.JobClaim(context.Background(), &laravel.JobClaimParams{Queue: queue, Now: now, RetryAfter: retryAfter, Limit: 1, ExcludeIDs: exclude})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	switch len(jobs) {
	case 0:
		return nil
	case 1:
		return jobs[0]
	}
	t.Fatalf("claim with Limit 1 returned %d jobs", len(jobs))
	return nil
}

// Row is a jobs row as stored.
type Row struct {
	ID                     int64
	Queue                  string
	Payload                []byte
	Attempts               int
	ReservedAt             *int64
	AvailableAt, CreatedAt int64
}

// Rows returns every jobs row in id order. A strategy that marks finished rows instead of deleting
// them (laravel.JobSweeper) sweeps first, so rows it finished are gone as they are for the others.
func (s *Setup) Rows(t testing.TB) []Row {
	t.Helper()
	if sw, ok := s.Queue.(laravel.JobSweeper); ok {
		if _, err := sw.JobSweep(context.Background()); err != nil {
			t.Fatalf("sweep: %v", err)
		}
	}
	rows, err := DB(s.Conn).Query("select id, queue, payload, attempts, reserved_at, available_at, created_at from " + Q(s.Conn, s.Conn.Tables().Jobs) + " order by id")
	if err != nil {
		t.Fatalf("select jobs: %v", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		if err := rows.Scan(&r.ID, &r.Queue, &r.Payload, &r.Attempts, &r.ReservedAt, &r.AvailableAt, &r.CreatedAt); err != nil {
			t.Fatalf("scan jobs: %v", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("select jobs: %v", err)
	}
	return out
}

// Count returns the number of rows in a table.
func (s *Setup) Count(t testing.TB, table string) int {
	t.Helper()
	var n int
	if err := DB(s.Conn).QueryRow("select count(*) from " + Q(s.Conn, table)).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// LockWaits counts the statements on c's server that match like (a LIKE pattern) and wait for a lock.
// On MariaDB, whose information_schema.innodb_trx does not reliably list a waiting locking read, it
// counts those that have run for over 50 ms.
func LockWaits(t testing.TB, c *laravel.Conn, like string) int {
	t.Helper()
	q := "select count(*) from information_schema.processlist where time_ms > 50 and info like ? and info not like '%information_schema%'"
	if c.Dialect() == laravel.Postgres {
		q = "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and query like $1"
	}
	var n int
	if err := DB(c).QueryRow(q, like).Scan(&n); err != nil {
		t.Fatalf("watch lock waits: %v", err)
	}
	return n
}

type testCase struct {
	name string
	opts Options
	fn   func(t *testing.T, s *Setup)
}

// cases are the conformance cases, in the order they start.
var cases = []testCase{
	{"FIFOByID", Options{}, caseFIFOByID},
	{"AvailabilityInclusive", Options{}, caseAvailabilityInclusive},
	{"ExpiredIgnoresAvailableAt", Options{}, caseExpiredIgnoresAvailableAt},
	{"AttemptsSaturate", Options{}, caseAttemptsSaturate},
	{"AttemptsSmallint", Options{Schema: laravel.SchemaParams{SmallAttempts: true}}, caseAttemptsSmallint},
	{"ExcludeIDs", Options{}, caseExcludeIDs},
	{"ClaimSkips", Options{}, caseClaimSkips},
	{"MoveUnclaimed", Options{}, caseMoveUnclaimed},
	{"Push", Options{}, casePush},
	{"DeleteFenced", Options{}, caseDeleteFenced},
	{"Release", Options{}, caseRelease},
	{"ReleaseFarFuture", Options{}, caseReleaseFarFuture},
	{"ReleaseFenced", Options{}, caseReleaseFenced},
	{"FailFenced", Options{}, caseFailFenced},
	{"RenewFenced", Options{}, caseRenewFenced},
	{"ReturnFenced", Options{}, caseReturnFenced},
	{"Renew", Options{}, caseRenew},
	{"Return", Options{}, caseReturn},
	{"DeleteAndPush", Options{}, caseDeleteAndPush},
	{"DeleteCountsBatch", Options{}, caseDeleteCountsBatch},
	{"FailCountsBatch", Options{}, caseFailCountsBatch},
	{"ClaimFromMinID", Options{}, caseClaimFromMinID},
	{"ExpiresMidJob", Options{}, caseExpiresMidJob},
	{"FailWithUUID", Options{}, caseFail(false)},
	{"FailWithoutUUID", Options{Schema: laravel.SchemaParams{FailedJobsWithoutUUID: true}}, caseFail(true)},
	{"WorkersRacing", Options{}, caseWorkersRacing},
	{"WorkersRacingLegacyIndex", Options{Schema: laravel.SchemaParams{LegacyJobsIndex: true}, ForceForUpdate: true}, caseWorkersRacingLegacyIndex},
	{"InjectedConflict", Options{}, injectedConflict},
	{"LockWaitTimeout", Options{}, lockWaitTimeout},
}

// register adds a case after the table's, for a case kept in a file of its own.
func register(name string, opts Options, fn func(t *testing.T, s *Setup)) {
	cases = append(cases, testCase{name, opts, fn})
}

// Run runs every conformance case for the named strategy on each database, in parallel. Cases share
// a MySQL database or a PostgreSQL schema (each has its own tables); on SQLite each case has a file of
// its own, since cases sharing one would queue behind each other's writes.
func Run(t *testing.T, strategy string) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		runCases(t, db, strategy, "")
		if db.Dialect == "mysql" {
			// The same cases on the server taken for MySQL 5.7: no DELETE … RETURNING (its deletes
			// lock and read the rows first) and no SKIP LOCKED (its claims lock as MariaDB's before
			// 10.6 do). One such variant: under make race more of them slowed the fault suite
			// beside it past its timing bounds.
			t.Run("mysql-5.7", func(t *testing.T) { runCases(t, db, strategy, "5.7.44-log") })
		}
		if db.Dialect == "pgsql" {
			// The same cases through PgBouncer's transaction pooling, where a connection's server
			// session changes between transactions: nothing may rest on the session.
			t.Run("pgbouncer", func(t *testing.T) { runCases(t, testenv.PostgresPooled(t, "transaction"), strategy, "") })
		}
	})
}

func runCases(t *testing.T, db testenv.Database, strategy, version string) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := c.opts
			o.ServerVersion = version
			c.fn(t, NewSetup(t, testenv.Apart(t, db), strategy, o))
		})
	}
}

// wantLost asserts that err reports a lost reservation.
func wantLost(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, laravel.ErrReservationLost) {
		t.Fatalf("%s after the claim moved on: err = %v, want ErrReservationLost", op, err)
	}
}

var bg = context.Background()

const t0 = int64(1_700_000_000)

// unix returns t0 plus d, for readable timestamps in cases.
func unix(d time.Duration) int64 { return t0 + int64(d/time.Second) }
