// Package laravel owns Laravel's queue tables: it opens a connection in one of three dialects
// (MariaDB/MySQL, PostgreSQL, SQLite), creates and inspects the schema Laravel's migrations create, and
// claims and completes jobs through named claim strategies that are all safe beside PHP workers.
//
// Everything a PHP worker writes to the database, this package writes the same way: released rows are new
// rows with the exact payload bytes, failed_jobs rows match Laravel's failed-job providers, batch counters
// are updated under a row lock, unique locks are released from the cache_locks table. Unlike PHP, every
// completion is fenced: it applies only while the row still carries this worker's claim.
package laravel

import (
	"context"
	"errors"
	"time"
)

// Dialect names the SQL family of a connection, using Laravel's driver names (DB_CONNECTION).
type Dialect string

// The dialects artisan-go speaks.
const (
	MySQL    Dialect = "mysql" // MySQL and MariaDB
	Postgres Dialect = "pgsql"
	SQLite   Dialect = "sqlite"
)

// Sentinel errors. Each dialect translates native errors (MySQL 1213/1205/1062, PostgreSQL
// 40001/40P01/55P03/23505, SQLITE_BUSY, SQLITE_CONSTRAINT_UNIQUE) into these at its edge, wrapped
// with context, so callers test with errors.Is.
var (
	// ErrReservationLost means the row no longer carries this worker's claim: another worker re-claimed
	// it after retry_after, or it was deleted (queue:clear). The completion did nothing.
	ErrReservationLost = errors.New("reservation lost")
	// ErrDeadlock means the database aborted the transaction to break a deadlock or serialization
	// conflict; the operation may be retried.
	ErrDeadlock = errors.New("deadlock")
	// ErrBusy means a lock could not be taken in time (lock wait timeout, SQLITE_BUSY).
	ErrBusy = errors.New("database busy")
	// ErrDuplicate means a unique or primary key constraint refused a row.
	ErrDuplicate = errors.New("duplicate key")
	// ErrMissingTable means a table the operation needs does not exist.
	ErrMissingTable = errors.New("missing table")
	// ErrUnknownStrategy means no claim strategy has the requested name.
	ErrUnknownStrategy = errors.New("unknown claim strategy")
)

// Tables names the tables the queue uses. Every name is validated as a plain SQL identifier.
type Tables struct {
	Jobs       string // queue.connections.database.table
	FailedJobs string // queue.failed.table
	JobBatches string // queue.batching.table
	Cache      string // cache.stores.database.table
	CacheLocks string // cache.stores.database.lock_table
}

// DefaultTables returns the names Laravel's skeleton uses.
func DefaultTables() Tables {
	return Tables{Jobs: "jobs", FailedJobs: "failed_jobs", JobBatches: "job_batches", Cache: "cache", CacheLocks: "cache_locks"}
}

// Job is one claimed row of the jobs table. ID, Attempts and ReservedAt together are the claim's fence:
// every completion checks all three, and renewal moves ReservedAt forward.
type Job struct {
	ID          int64
	Queue       string
	Payload     []byte // the payload column, byte for byte
	Attempts    int    // attempts after this claim's increment
	ReservedAt  int64  // Unix seconds this worker wrote when claiming or renewing
	AvailableAt int64
	CreatedAt   int64
	Version     int64 // version column, for strategies that keep one; 0 otherwise
	// Read is the caller's: what JobClaimParams.Skip read from Payload, kept for the caller so that it
	// is not read twice. The package never sets or reads it.
	Read any
}

// JobClaimParams says what to claim.
type JobClaimParams struct {
	Queue      string // one queue name; priority across queues is the worker's loop
	Now        int64  // worker clock, Unix seconds, as PHP's Carbon::now()
	RetryAfter int64  // seconds after which a reservation has expired (Laravel's retry_after)
	Limit      int    // claim at most this many (strategies that claim one at a time return one)
	// ExcludeIDs are rows this worker handed back (classes it has no handler for) and must not take
	// again, so that PHP workers on the same queue get them and this worker does not spin on them.
	ExcludeIDs []int64
	// Whole reads the whole queue, below the bound on id the batch and delete-mark strategies start
	// their claims at, where a row that became claimable again waits for a probe: a claim that must
	// not miss one (the last before a worker stops on an empty queue) asks for it.
	Whole bool
	// MinID, when not 0, leaves out the rows below it: a worker whose claims only bring back rows it
	// left for PHP skips to the first row it has not seen.
	MinID int64
	// Skip, when set, is asked about each row the claim would take, to be decided from its payload
	// (attempts and reserved_at may be read before or after the claim's update); the rows it reports
	// true for are passed over: the claim's own transaction never reserves them, or undoes their
	// reservation and attempt before it commits, so that no crash at any point spends an attempt on a
	// row this worker was never going to run. It may be asked again about a row (a deadlock victim is
	// claimed again) and must not block.
	Skip func(*Job) bool
	// Left, when set, is called once a claim has committed with the rows Skip passed over, as they are
	// in the table (attempts and reservation as before the claim). It may run on another goroutine (a
	// grouped delete of the batch strategy claims the next rows for the latest JobClaim).
	Left func([]*Job)
}

// JobReleaseParams says when a released job becomes available again.
type JobReleaseParams struct {
	Now   int64 // worker clock, Unix seconds; becomes created_at of the new row
	Delay int64 // seconds; available_at = Now + Delay
}

// JobFailParams is the failed_jobs row to write beside the delete.
type JobFailParams struct {
	Connection string    // the queue connection name, e.g. "database"
	Queue      string    // the queue the job was popped from
	UUID       string    // payload uuid; written when the table has a uuid column
	Exception  string    // PHP Throwable::__toString layout
	FailedAt   time.Time // written in its location (the app timezone) as Y-m-d H:i:s; zero means now
	// Rewritten, when set, is told what was changed when failed_jobs refused the row as it was (a uuid
	// already there or too long for the column is replaced by a fresh one), so the job still fails.
	Rewritten func(change string)
	// Batch, when set, counts the failure in the job's batch in the same transaction (its Failed set).
	Batch *BatchStep
	// Push are new jobs inserted in the same transaction (the companion that runs the job's PHP
	// failure hooks), before those of Batch.
	Push []*JobPushParams
}

// BatchStep counts a finished job's success in its batch (as BatchRecordSuccess), or its failure (as
// BatchRecordFailure), in the transaction that deletes the job, so that a worker stopped between the
// two (kill -9) neither loses the count, which would leave the batch unfinished for good, nor makes it
// twice.
type BatchStep struct {
	ID      string // the batch id
	JobUUID string // the job's payload uuid
	Failed  bool   // count a failure: failed_jobs + 1 and the uuid in failed_job_ids
	// CancelOnFailure is asked, at the batch's first failure, whether to cancel it (as
	// Batch::recordFailedJob does unless the batch allows failures); nil never cancels.
	CancelOnFailure func(b *Batch) bool
	// Then is given the batch as the success left it, or nil when the batch is gone (pruned, which
	// counts nothing), and returns jobs to insert in the same transaction, such as the companion that
	// runs its callbacks; nil for none. It is called again when the transaction is retried.
	Then func(b *Batch) ([]*JobPushParams, error)
	// Unlisted, when set, is told that the failure was counted but its uuid left out of
	// failed_job_ids, which was full (a TEXT column on MySQL): b is the batch as written, fix the
	// statement that widens the column. It is called again when the transaction is retried.
	Unlisted func(b *Batch, fix string)
}

// JobPushParams is a new job row. The payload is stored byte for byte.
type JobPushParams struct {
	Queue       string
	Payload     []byte
	Attempts    int   // 0 for a new job
	Now         int64 // worker clock, Unix seconds; becomes created_at
	AvailableAt int64 // Unix seconds; Now for no delay
}

// Queue is the jobs table seen through one claim strategy. Every method is safe for concurrent use and
// safe beside PHP workers on the same table.
type Queue interface {
	// Strategy returns the claim strategy's name.
	Strategy() string
	// JobClaim reserves up to Limit available jobs in id order: reserved_at = Now, attempts+1.
	JobClaim(ctx context.Context, p *JobClaimParams) ([]*Job, error)
	// JobDelete removes a finished job, fenced on the claim; ErrReservationLost if the claim is gone.
	JobDelete(ctx context.Context, j *Job) error
	// JobDeleteAndPush removes a finished job and inserts new jobs in the same transaction, fenced, so
	// a chain's next link is written exactly when its predecessor is deleted; with batch, the job's
	// success is counted in its batch in that transaction too. It returns the new ids, push's first.
	JobDeleteAndPush(ctx context.Context, j *Job, push []*JobPushParams, batch *BatchStep) ([]int64, error)
	// JobRelease deletes the row and inserts the exact payload as a new row (new id, attempts kept,
	// reserved_at NULL, available_at = Now + Delay, created_at = Now) in one transaction, fenced.
	JobRelease(ctx context.Context, j *Job, p *JobReleaseParams) error
	// JobFail deletes the row and writes the failed_jobs row in one transaction, fenced.
	JobFail(ctx context.Context, j *Job, p *JobFailParams) error
	// JobRenew moves reserved_at to now while the claim holds, and updates j.ReservedAt.
	JobRenew(ctx context.Context, j *Job, now int64) error
	// JobReturn gives back claimed jobs that never started (shutdown): the reservation and its attempt
	// are undone, fenced, so they run next as if never claimed.
	JobReturn(ctx context.Context, jobs []*Job) error
	// JobPush inserts a new job row and returns its id.
	JobPush(ctx context.Context, p *JobPushParams) (int64, error)
}
