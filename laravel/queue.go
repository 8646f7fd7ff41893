package laravel

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/jmoiron/sqlx"
)

// DefaultStrategy is the claim strategy used when QueueParams.Strategy is empty: Laravel's own.
const DefaultStrategy = "delete-retry"

// DefaultDeleteRetries is how many times a completion is tried when the database picks it as a deadlock
// victim.
const DefaultDeleteRetries = 5

// QueueParams configures a Queue.
type QueueParams struct {
	// Strategy names a registered claim strategy; empty means DefaultStrategy.
	Strategy string
	// DeleteRetries is how many times a completion (delete, release, fail, renew, return) is tried when
	// it fails with ErrDeadlock; 0 means DefaultDeleteRetries.
	DeleteRetries int
	// Batch is how many rows a batching strategy claims per round trip; 0 means as many as the workers
	// running on the queue run at once (their Concurrency, summed, at most 256), DefaultBatch while none
	// runs.
	Batch int
	// Lanes is how many claim-and-delete cycles the batch strategy runs side by side, each with its
	// share of the workers' slots and of Batch (see laneQueue); 1 means one, as before lanes. They
	// help one process alone on a server, whose single transaction in flight leaves the server
	// waiting while the jobs run; several processes keep the server busy without them, and ran slower
	// with them. 0 runs two where claims skip locked rows, with at least 128 slots per lane, in one
	// queue per jobs table and server (see laneLead), and one elsewhere.
	Lanes int
}

// StrategyFunc builds a Queue for one claim strategy on a connection.
type StrategyFunc func(c *Conn, p QueueParams) (Queue, error)

var (
	strategiesMu sync.RWMutex
	// strategies are the claim strategies by name: the ones artisan-go ships, and any an application
	// adds with RegisterStrategy.
	strategies = map[string]StrategyFunc{
		"batch":        newBatchQueue,
		"delete-mark":  newDeleteMark,
		"delete-retry": newDeleteRetry,
		"optimistic":   newOptimistic,
	}
)

// RegisterStrategy makes a claim strategy available to NewQueue under name. Like database/sql.Register
// it panics when name is empty, fn is nil or the name is taken, because that is a programming error.
func RegisterStrategy(name string, fn StrategyFunc) {
	strategiesMu.Lock()
	defer strategiesMu.Unlock()
	if name == "" || fn == nil {
		panic("laravel: RegisterStrategy needs a name and a function")
	}
	if _, dup := strategies[name]; dup {
		panic("laravel: RegisterStrategy called twice for strategy " + name)
	}
	strategies[name] = fn
}

// Strategies returns the registered strategy names, sorted.
func Strategies() []string {
	strategiesMu.RLock()
	defer strategiesMu.RUnlock()
	names := make([]string, 0, len(strategies))
	for n := range strategies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewQueue returns the jobs table of c seen through the named claim strategy. An unknown name gives an
// error wrapping ErrUnknownStrategy that lists the known ones.
func NewQueue(c *Conn, p QueueParams) (Queue, error) {
	if p.Strategy == "" {
		p.Strategy = DefaultStrategy
	}
	if p.DeleteRetries <= 0 {
		p.DeleteRetries = DefaultDeleteRetries
	}
	strategiesMu.RLock()
	fn := strategies[p.Strategy]
	strategiesMu.RUnlock()
	if fn == nil {
		return nil, fmt.Errorf("%w %q: use one of %s", ErrUnknownStrategy, p.Strategy, strings.Join(Strategies(), ", "))
	}
	if c == nil {
		return nil, fmt.Errorf("%w: NewQueue needs an open connection (laravel.Open)", ErrInvalid)
	}
	return fn(c, p)
}

// jobColumns are the jobs columns every strategy reads, in scanJob's order.
const jobColumns = "id, queue, payload, attempts, reserved_at, available_at, created_at"

// Fenced implements the completions every strategy shares: each applies only where id, attempts and
// reserved_at still match the claim, retries on deadlock, and runs in one transaction. Strategies embed
// it and add JobClaim and Strategy.
type Fenced struct {
	C     *Conn // the connection the queue runs on
	Tries int   // attempts per completion while it fails with ErrDeadlock

	// group joins deletes that arrive while another one runs into one fenced statement and commit;
	// NewFenced sets it, a Fenced built by hand deletes one row per statement.
	group *deleteGroup
}

// NewFenced returns the shared completions for a queue built from p. Its deletes are grouped as a
// database's group commit groups commits: a lone delete runs at once, and deletes that finish while
// it runs share the next statement and commit, so a worker running many jobs at once flushes to disk
// about once per group instead of once per job.
func NewFenced(c *Conn, p QueueParams) Fenced {
	f := Fenced{C: c, Tries: max(p.DeleteRetries, 1)}
	single := f
	f.group = &deleteGroup{run: single.deleteMany, settled: func() bool { return true }}
	return f
}

// ParallelClaimer is implemented by queues that can tell whether claims running at the same time on
// several connections each get their own rows at once. A worker claims in parallel only then.
type ParallelClaimer interface {
	ClaimsInParallel() bool
}

// ClaimScoper is implemented by queues that can name what their claims compete for. The workers of a
// host whose claims share a scope share one bound on the claims they run at once; an empty scope
// shares none.
type ClaimScoper interface {
	ClaimScope(queue string) string
}

// ClaimScope names the rows a claim of queue competes for: the queue of one jobs table, on one server
// and database. It is "" where claims need no shared bound (SQLite, where claims take the one write
// lock in turn).
func (f *Fenced) ClaimScope(queue string) string {
	if !f.C.caps.BoundClaims {
		return ""
	}
	return f.C.where + "\x00" + f.C.tables.Jobs + "\x00" + queue
}

// ClaimsInParallel reports whether the server's locking read skips rows other claims hold (SKIP
// LOCKED). Without it (SQLite's single writer, plain FOR UPDATE) parallel claims only queue up
// behind the same lock.
func (f *Fenced) ClaimsInParallel() bool { return f.C.caps.SkipLocked }

// JobDelete removes a finished job, fenced on the claim: one autocommit statement (the fence makes
// Laravel's select-for-update before the delete unnecessary), shared with the deletes that arrive
// while the previous one runs.
func (f *Fenced) JobDelete(ctx context.Context, j *Job) error {
	if f.group != nil {
		return f.group.delete(ctx, j, nil)
	}
	q := f.C.deleteFencedSQL()
	err := f.C.retry(ctx, f.Tries, func() error {
		return f.C.execFenced(ctx, f.C.db, q, j.ID, j.Attempts, j.ReservedAt)
	})
	if err != nil {
		return fmt.Errorf("delete job %d: %w", j.ID, err)
	}
	return nil
}

// JobDeleteAndPush removes a finished job and inserts the given new jobs in the same transaction, so a
// chain's next link exists exactly when its predecessor is gone, and counts the job in its batch there.
// It returns the new ids.
func (f *Fenced) JobDeleteAndPush(ctx context.Context, j *Job, push []*JobPushParams, batch *BatchStep) ([]int64, error) {
	return f.finishAndPush(ctx, j, push, batch, func(tx *sqlx.Tx) error { return f.C.deleteFenced(ctx, tx, j) })
}

// finishAndPush runs finish (the fenced statement that ends the claim: a delete, or delete-mark's mark),
// the batch's step and inserts the new jobs in one transaction, retried on deadlock, and returns the
// new ids.
func (f *Fenced) finishAndPush(ctx context.Context, j *Job, push []*JobPushParams, batch *BatchStep, finish func(tx *sqlx.Tx) error) ([]int64, error) {
	var ids []int64
	err := f.C.retry(ctx, f.Tries, func() error {
		ids = ids[:0]
		return f.C.InTx(ctx, func(tx *sqlx.Tx) error {
			if err := finish(tx); err != nil {
				return err
			}
			push := push
			if batch != nil {
				more, err := f.C.batchStep(ctx, tx, batch)
				if err != nil {
					return err
				}
				push = append(slices.Clip(push), more...)
			}
			for _, p := range push {
				id, err := f.C.insertJob(ctx, tx, p)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("delete job %d: %w", j.ID, err)
	}
	return ids, nil
}

// JobRelease deletes the row and inserts its exact payload as a new row, in one transaction, fenced.
func (f *Fenced) JobRelease(ctx context.Context, j *Job, p *JobReleaseParams) error {
	err := f.C.retry(ctx, f.Tries, func() error {
		return f.C.InTx(ctx, func(tx *sqlx.Tx) error {
			if err := f.C.deleteFenced(ctx, tx, j); err != nil {
				return err
			}
			_, err := f.C.insertJob(ctx, tx, &JobPushParams{
				Queue: j.Queue, Payload: j.Payload, Attempts: j.Attempts, Now: p.Now, AvailableAt: p.Now + p.Delay,
			})
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("release job %d: %w", j.ID, err)
	}
	return nil
}

// MaxAttempts returns the largest value the attempts column holds: 255 for MySQL's tinyint unsigned,
// 32767 for PostgreSQL's smallint. Claims saturate there instead of failing the update (which would
// leave the row at the head of the queue for ever); a worker then fails it as attempted too many times.
func (c *Conn) MaxAttempts() int { return c.caps.MaxAttempts }

// JobFail deletes the row and writes the failed_jobs row in one transaction, fenced. The uuid column is
// written when the table has one (Laravel 8+), taken from p.UUID or else from the payload.
func (f *Fenced) JobFail(ctx context.Context, j *Job, p *JobFailParams) error {
	withUUID, err := f.C.failedHasUUID(ctx)
	if err != nil {
		return fmt.Errorf("fail job %d: %w", j.ID, err)
	}
	cols := []string{"connection", "queue", "payload", "exception", "failed_at"}
	at := p.FailedAt
	if at.IsZero() {
		at = f.C.clock()
	}
	exception := p.Exception
	if f.C.caps.NoNulInText {
		// PostgreSQL refuses NUL in text (PHP's pdo_pgsql cuts the text at the first one, losing the
		// rest and the trace): a handler's message with one would leave the job unable to fail.
		exception = strings.ReplaceAll(exception, "\x00", "?")
	}
	args := []any{p.Connection, p.Queue, string(j.Payload), exception, at.Format("2006-01-02 15:04:05")}
	if withUUID {
		uuid := p.UUID
		if uuid == "" {
			var env struct {
				UUID string `json:"uuid"`
			}
			_ = json.Unmarshal(j.Payload, &env) // a damaged payload still fails, with a new uuid
			uuid = env.UUID
		}
		if uuid == "" {
			// Payloads from before Laravel 8 carry no uuid; the column is unique and not null, so such
			// a job gets a fresh one rather than failing to fail.
			uuid = newUUID()
		}
		cols = append([]string{"uuid"}, cols...)
		args = append([]any{uuid}, args...)
	}
	insert := f.C.insertSQL(f.C.tables.FailedJobs, cols)
	write := func() error {
		return f.C.retry(ctx, f.Tries, func() error {
			return f.C.InTx(ctx, func(tx *sqlx.Tx) error {
				if err := f.C.deleteFenced(ctx, tx, j); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, insert, args...); err != nil {
					return err
				}
				push := p.Push
				var err error
				if p.Batch != nil {
					var more []*JobPushParams
					more, err = f.C.batchStep(ctx, tx, p.Batch)
					push = append(slices.Clip(push), more...)
				}
				for _, p := range push {
					if err == nil {
						_, err = f.C.insertJob(ctx, tx, p)
					}
				}
				return err
			})
		})
	}
	err = write()
	if err != nil && withUUID && uuidRefused(err) {
		// A job that must fail always reaches failed_jobs: a uuid the table refuses (a duplicate, or
		// longer than the column) is replaced by a fresh one, and the caller is told.
		old := args[0].(string)
		args[0] = newUUID()
		if err = write(); err == nil && p.Rewritten != nil {
			p.Rewritten(fmt.Sprintf("failed_jobs refused uuid %.60q; written with the new uuid %s", old, args[0]))
		}
	}
	if err != nil && charsetRefused(err) {
		// A utf8mb3 failed_jobs table cannot hold an emoji: the payload keeps it as a JSON escape (the
		// same value), the other columns get U+FFFD in its place, and the caller is told.
		var changed []string
		for i, col := range cols {
			text, ok := args[i].(string)
			if !ok || col == "failed_at" || col == "uuid" {
				continue
			}
			var did bool
			if col == "payload" {
				text, did = jsonSupplementaryEscaped(text)
			} else {
				text, did = withoutSupplementary(text)
			}
			if did {
				args[i], changed = text, append(changed, col)
			}
		}
		if len(changed) > 0 {
			if err = write(); err == nil && p.Rewritten != nil {
				p.Rewritten(fmt.Sprintf("failed_jobs' character set holds no character outside the Basic Multilingual Plane (an emoji): written with them escaped in the payload (the same JSON) and replaced by U+FFFD elsewhere, in %s; convert the table to utf8mb4", strings.Join(changed, ", ")))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("fail job %d: %w", j.ID, err)
	}
	return nil
}

// JobRenew moves reserved_at to now while the claim holds, and updates j.ReservedAt.
func (f *Fenced) JobRenew(ctx context.Context, j *Job, now int64) error {
	q := f.C.rebind("update " + f.C.quote(f.C.tables.Jobs) + " set reserved_at = ? where id = ? and attempts = ? and reserved_at = ?")
	err := f.C.retry(ctx, f.Tries, func() error {
		return f.C.execFenced(ctx, f.C.db, q, now, j.ID, j.Attempts, j.ReservedAt)
	})
	if err != nil {
		return fmt.Errorf("renew job %d: %w", j.ID, err)
	}
	j.ReservedAt = now
	return nil
}

// JobReturn undoes the claims of jobs that never started: reserved_at NULL, attempts-1, each fenced.
// Jobs whose claim is gone are reported in the joined error; the others are still returned.
func (f *Fenced) JobReturn(ctx context.Context, jobs []*Job) error {
	q := f.C.returnFencedSQL()
	var errs []error
	for _, j := range jobs {
		err := f.C.retry(ctx, f.Tries, func() error {
			return f.C.execFenced(ctx, f.C.db, q, j.ID, j.Attempts, j.ReservedAt)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("return job %d: %w", j.ID, err))
		}
	}
	// The rows are claimable again: the next claims start low enough to take them first.
	f.C.floors.lower(jobs)
	return errors.Join(errs...)
}

// JobPush inserts a new job row and returns its id.
func (f *Fenced) JobPush(ctx context.Context, p *JobPushParams) (int64, error) {
	id, err := f.C.insertJob(ctx, f.C.db, p)
	if err != nil {
		return 0, fmt.Errorf("push job: %w", f.C.translate(err))
	}
	return id, nil
}

// quote quotes a table or column name for the connection's dialect.
func (c *Conn) quote(name string) string { return c.d.quote(name) }

// rebind turns ? placeholders into the dialect's ($1, $2 … on PostgreSQL).
func (c *Conn) rebind(q string) string { return c.d.rebind(q) }

// InTx runs fn in one transaction (BEGIN IMMEDIATE on SQLite), commits if it returns nil and rolls
// back otherwise. fn returns driver errors as they are; InTx translates them to the package sentinels.
func (c *Conn) InTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return c.inTxIsolation(ctx, sql.LevelDefault, fn)
}

// deleteFenced deletes the claimed row inside tx, or returns ErrReservationLost.
func (c *Conn) deleteFenced(ctx context.Context, tx *sqlx.Tx, j *Job) error {
	return c.execFenced(ctx, tx, c.deleteFencedSQL(), j.ID, j.Attempts, j.ReservedAt)
}

// returnFencedSQL undoes a claim whose id, attempts and reserved_at still match: the row is claimable
// again, its attempt not counted.
func (c *Conn) returnFencedSQL() string {
	return c.rebind("update " + c.quote(c.tables.Jobs) + " set reserved_at = null, attempts = attempts - 1 where id = ? and attempts = ? and reserved_at = ?")
}

func (c *Conn) deleteFencedSQL() string {
	return c.rebind("delete from " + c.quote(c.tables.Jobs) + " where id = ? and attempts = ? and reserved_at = ?")
}

// forUpdate is the lock clause of a read-modify-write select: " for update" where rows can be locked,
// nothing where the transaction holds the database's write lock from its start (SQLite).
func (c *Conn) forUpdate() string {
	if c.caps.RowLocks {
		return " for update"
	}
	return ""
}

// execFenced runs a statement that must touch exactly one row, else ErrReservationLost.
func (c *Conn) execFenced(ctx context.Context, ex sqlx.ExecerContext, q string, args ...any) error {
	res, err := ex.ExecContext(ctx, q, args...)
	if err != nil {
		if _, ok := ex.(*sqlx.Tx); ok {
			return err // InTx translates
		}
		return c.translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return ErrReservationLost
	}
	return nil
}

// insertSQL returns an insert statement for the given columns, rebound.
func (c *Conn) insertSQL(table string, cols []string) string {
	return c.d.rebind("insert into " + c.d.quote(table) + " (" + quoteAll(c.d, cols) + ") values (" + placeholders(len(cols)) + ")")
}

// insertJob inserts one jobs row as Laravel's buildDatabaseRecord does and returns its id. Errors are
// returned untranslated.
func (c *Conn) insertJob(ctx context.Context, ex Execer, p *JobPushParams) (int64, error) {
	return c.d.insertID(ctx, ex, c.jobs.insert, jobRow(c.d, p))
}

// AvailableJobsSQL returns Laravel's getNextAvailableJob select for up to limit rows, with the
// ExcludeIDs and MinID conditions and the given lock clause ("" for none), and its arguments.
func (c *Conn) AvailableJobsSQL(p *JobClaimParams, exclude []int64, limit int, lock string) (string, []any) {
	var b strings.Builder
	b.WriteString("select " + jobColumns + " from " + c.quote(c.tables.Jobs) +
		" where queue = ? and ((reserved_at is null and available_at <= ?) or (reserved_at <= ?))")
	args := []any{p.Queue, p.Now, p.Now - p.RetryAfter}
	if p.MinID > 0 {
		b.WriteString(" and id >= ?")
		args = append(args, p.MinID)
	}
	if len(exclude) > 0 {
		b.WriteString(" and id not in (" + placeholders(len(exclude)) + ")")
		for _, id := range exclude {
			args = append(args, id)
		}
	}
	fmt.Fprintf(&b, " order by id asc limit %d", limit)
	if lock != "" {
		b.WriteString(" " + lock)
	}
	return c.rebind(b.String()), args
}

// ScanJobs reads rows selected with the jobs columns in AvailableJobsSQL's order.
func ScanJobs(rows *sqlx.Rows) ([]*Job, error) {
	defer rows.Close()
	return readJobs(rows)
}

// rowReader is what reading rows needs, from database/sql and from pgx alike.
type rowReader interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// readJobs reads rows of jobColumns.
func readJobs(rows rowReader) ([]*Job, error) {
	var out []*Job
	for rows.Next() {
		var j Job
		var reserved sql.NullInt64
		if err := rows.Scan(&j.ID, &j.Queue, &j.Payload, &j.Attempts, &reserved, &j.AvailableAt, &j.CreatedAt); err != nil {
			return nil, err
		}
		j.ReservedAt = reserved.Int64
		out = append(out, &j)
	}
	return out, rows.Err()
}

// newUUID returns a random (version 4) UUID in its canonical text form.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// failedHasUUID reports, once per Conn, whether failed_jobs has Laravel 8's uuid column.
func (c *Conn) failedHasUUID(ctx context.Context) (bool, error) {
	c.failedUUIDMu.Lock()
	defer c.failedUUIDMu.Unlock()
	if c.failedUUIDKnown {
		return c.failedUUID, nil
	}
	rows, err := c.db.QueryxContext(ctx, "select * from "+c.quote(c.tables.FailedJobs)+" where 1 = 0")
	if err != nil {
		return false, c.translate(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return false, c.translate(err)
	}
	c.failedUUID = slices.ContainsFunc(cols, func(s string) bool { return strings.EqualFold(s, "uuid") })
	c.failedUUIDKnown = true
	return c.failedUUID, nil
}
