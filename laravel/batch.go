package laravel

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/jmoiron/sqlx"
)

// ErrBatchNotFound means no job_batches row has the id; Laravel then skips the batch bookkeeping.
var ErrBatchNotFound = errors.New("batch not found")

// Batch is one job_batches row.
type Batch struct {
	ID           string
	Name         string
	TotalJobs    int
	PendingJobs  int
	FailedJobs   int
	FailedJobIDs []string
	Options      []byte // PHP-serialized options array, base64-decoded on PostgreSQL
	CreatedAt    int64
	CancelledAt  *int64
	FinishedAt   *int64
	// Unlisted are the uuids of failures the last change counted but left out of FailedJobIDs, which
	// was full (see Conn.fitFailedJobIDs).
	Unlisted []string
}

// BatchCounts are the counters after recording one job, as Laravel's UpdatedBatchJobCounts.
type BatchCounts struct {
	PendingJobs int
	FailedJobs  int
}

// AllJobsHaveRanExactlyOnce reports pending - failed == 0, when Laravel runs the batch's finally
// callbacks.
func (b BatchCounts) AllJobsHaveRanExactlyOnce() bool { return b.PendingJobs-b.FailedJobs == 0 }

const batchColumns = "id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, created_at, cancelled_at, finished_at"

// BatchFind reads a batch with all its columns. A missing batch gives ErrBatchNotFound.
func (c *Conn) BatchFind(ctx context.Context, id string) (*Batch, error) {
	q := c.rebind("select " + batchColumns + " from " + c.quote(c.tables.JobBatches) + " where id = ?")
	b, err := c.scanBatch(c.db.QueryRowxContext(ctx, q, id))
	if err != nil {
		return nil, fmt.Errorf("find batch %s: %w", id, c.translate(err))
	}
	return b, nil
}

func (c *Conn) scanBatch(row *sqlx.Row) (*Batch, error) {
	var b Batch
	var ids string
	var options sql.NullString
	err := row.Scan(&b.ID, &b.Name, &b.TotalJobs, &b.PendingJobs, &b.FailedJobs, &ids, &options, &b.CreatedAt, &b.CancelledAt, &b.FinishedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrBatchNotFound
	}
	if err != nil {
		return nil, err
	}
	if b.FailedJobIDs, err = decodeFailedJobIDs(ids); err != nil {
		return nil, err
	}
	if options.Valid {
		b.Options = []byte(c.d.decodeText(options.String))
	}
	return &b, nil
}

// BatchRecordSuccess records a finished job as DatabaseBatchRepository::decrementPendingJobs does, in
// one transaction under the row lock: pending_jobs - 1 and the uuid removed from failed_job_ids; and
// finished_at = now when pending_jobs reaches 0, as Batch::recordSuccessfulJob then does.
func (c *Conn) BatchRecordSuccess(ctx context.Context, id, jobUUID string) (*BatchCounts, error) {
	counts, err := c.batchUpdate(ctx, id, countSuccess(jobUUID))
	if err != nil {
		return nil, fmt.Errorf("record batch %s success: %w", id, err)
	}
	return counts, nil
}

// BatchRecordFailure records a failed job as DatabaseBatchRepository::incrementFailedJobs does:
// failed_jobs + 1 and the uuid appended to failed_job_ids unless present; pending_jobs is unchanged.
// Cancelling on the first failure when the batch does not allow failures is the caller's step
// (BatchCancel), as in Batch::recordFailedJob.
func (c *Conn) BatchRecordFailure(ctx context.Context, id, jobUUID string) (*BatchCounts, error) {
	counts, err := c.batchUpdate(ctx, id, countFailure(jobUUID))
	if err != nil {
		return nil, fmt.Errorf("record batch %s failure: %w", id, err)
	}
	return counts, nil
}

// countSuccess is a finished job's change to its batch's counters: pending_jobs - 1, and its uuid
// out of failed_job_ids.
func countSuccess(jobUUID string) func(*Batch) {
	return func(b *Batch) {
		b.PendingJobs--
		b.FailedJobIDs = slices.DeleteFunc(b.FailedJobIDs, func(s string) bool { return s == jobUUID })
	}
}

// countFailure is a failed job's change: failed_jobs + 1, and its uuid in failed_job_ids unless there.
func countFailure(jobUUID string) func(*Batch) {
	return func(b *Batch) {
		b.FailedJobs++
		if !slices.Contains(b.FailedJobIDs, jobUUID) {
			b.FailedJobIDs = append(b.FailedJobIDs, jobUUID)
		}
	}
}

// batchUpdate is Laravel's updateAtomicValues: a locked read-modify-write of the counters.
func (c *Conn) batchUpdate(ctx context.Context, id string, change func(*Batch)) (*BatchCounts, error) {
	var counts BatchCounts
	err := c.retry(ctx, DefaultDeleteRetries, func() error {
		return c.InTx(ctx, func(tx *sqlx.Tx) error {
			b, err := c.batchUpdateTx(ctx, tx, id, change)
			if err != nil {
				return err
			}
			counts = BatchCounts{PendingJobs: b.PendingJobs, FailedJobs: b.FailedJobs}
			return nil
		})
	})
	return &counts, err
}

// batchUpdateTx is batchUpdate's read-modify-write in tx; it returns the batch as changed.
func (c *Conn) batchUpdateTx(ctx context.Context, tx *sqlx.Tx, id string, change func(*Batch)) (*Batch, error) {
	return c.batchChangeTx(ctx, tx, id, 1, func(_ int, b *Batch) error { change(b); return nil })
}

// batchChangeTx is Laravel's updateAtomicValues made once for n jobs of a batch: the row read under
// its lock, change(i, b) applied for each job in turn, and the row written once, as n transactions
// one after the other would leave it: finished_at set when a change brings pending_jobs to 0, and
// cancelled_at and finished_at when a change cancels it. It returns the batch as changed.
func (c *Conn) batchChangeTx(ctx context.Context, tx *sqlx.Tx, id string, n int, change func(i int, b *Batch) error) (*Batch, error) {
	sel := c.rebind("select " + batchColumns + " from " + c.quote(c.tables.JobBatches) + " where id = ?" + c.forUpdate())
	b, err := c.scanBatch(tx.QueryRowxContext(ctx, sel, id))
	if err != nil {
		return nil, err
	}
	listed := len(b.FailedJobIDs)
	var finishedAt, cancelledAt *int64
	for i := range n {
		wasZero, cancelled := b.PendingJobs == 0, b.CancelledAt
		if err := change(i, b); err != nil {
			return nil, err
		}
		if b.PendingJobs == 0 && !wasZero && finishedAt == nil {
			now := c.now()
			finishedAt, b.FinishedAt = &now, &now
		}
		if b.CancelledAt != cancelled { // a change that cancels sets a new time, as Batch::cancel does
			cancelledAt = b.CancelledAt
		}
	}
	ids, err := c.fitFailedJobIDs(ctx, tx, b, listed)
	if err != nil {
		return nil, err
	}
	upd := c.rebind("update " + c.quote(c.tables.JobBatches) + " set pending_jobs = ?, failed_jobs = ?, failed_job_ids = ? where id = ?")
	if _, err := tx.ExecContext(ctx, upd, b.PendingJobs, b.FailedJobs, ids, id); err != nil {
		return nil, err
	}
	if finishedAt != nil {
		fin := c.rebind("update " + c.quote(c.tables.JobBatches) + " set finished_at = ? where id = ?")
		if _, err := tx.ExecContext(ctx, fin, *finishedAt, id); err != nil {
			return nil, err
		}
	}
	if cancelledAt != nil {
		q := c.rebind("update " + c.quote(c.tables.JobBatches) + " set cancelled_at = ?, finished_at = ? where id = ?")
		if _, err := tx.ExecContext(ctx, q, *cancelledAt, *b.FinishedAt, id); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// fitFailedJobIDs returns b.FailedJobIDs encoded for the failed_job_ids column. Laravel 8 to 9.43
// create it as TEXT, which holds 65,535 bytes on MySQL, about 1,680 uuids: PHP's worker then fails to
// count the batch's next failure (Data too long, or a list cut short where the server is not strict).
// Here the uuids this change appended (past the listed read) that do not fit are left out of the
// list, their failures still counted in failed_jobs, and b.Unlisted names them; the failed_jobs rows
// keep the jobs.
func (c *Conn) fitFailedJobIDs(ctx context.Context, tx *sqlx.Tx, b *Batch, listed int) (string, error) {
	b.Unlisted = nil
	ids := phpJSONStrings(b.FailedJobIDs)
	if c.name != MySQL || len(ids) <= mysqlTextBytes {
		return ids, nil
	}
	limit, err := c.failedJobIDsLimit(ctx, tx)
	if err != nil || limit <= 0 {
		return ids, err
	}
	for len(ids) > limit && len(b.FailedJobIDs) > listed {
		last := len(b.FailedJobIDs) - 1
		b.Unlisted = append(b.Unlisted, b.FailedJobIDs[last])
		b.FailedJobIDs = b.FailedJobIDs[:last]
		ids = phpJSONStrings(b.FailedJobIDs)
	}
	return ids, nil
}

// failedJobIDsFix is the statement that lets failed_job_ids hold every failure, as Laravel 9.44+
// creates it.
func (c *Conn) failedJobIDsFix() string {
	return "alter table " + c.tables.JobBatches + " modify failed_job_ids longtext not null"
}

// mysqlTextBytes is the size of a TEXT column on MySQL.
const mysqlTextBytes = 65535

// failedJobIDsLimit reads how many bytes failed_job_ids holds on MySQL (0: it is not known).
func (c *Conn) failedJobIDsLimit(ctx context.Context, tx *sqlx.Tx) (int, error) {
	limit, _, err := c.failedJobIDsColumn(ctx, tx)
	if err != nil || limit > math.MaxInt32 {
		return 0, err
	}
	return int(limit), nil
}

// failedJobIDsColumn reads the size in bytes and the type of job_batches.failed_job_ids on MySQL;
// 0 and "" when the table or the column is missing.
func (c *Conn) failedJobIDsColumn(ctx context.Context, q sqlx.QueryerContext) (int64, string, error) {
	var limit sql.NullInt64
	var kind string
	err := q.QueryRowxContext(ctx, mysqlFailedJobIDsSQL, c.tables.JobBatches).Scan(&limit, &kind)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	return limit.Int64, kind, err
}

// batchStep counts a job's success or failure in its batch in tx (see BatchStep) and returns the jobs
// its Then adds. A batch that is gone counts nothing.
func (c *Conn) batchStep(ctx context.Context, tx *sqlx.Tx, s *BatchStep) ([]*JobPushParams, error) {
	more, err := c.batchSteps(ctx, tx, s.ID, []*BatchStep{s})
	if err != nil {
		return nil, err
	}
	return more[0], nil
}

// batchSteps counts the steps, all of batch id, in tx, in their order, with one read and one write of
// the row, as as many transactions one after the other would, and returns the jobs each step's Then
// adds, given the batch as that step left it. A batch that is gone counts nothing.
func (c *Conn) batchSteps(ctx context.Context, tx *sqlx.Tx, id string, steps []*BatchStep) ([][]*JobPushParams, error) {
	more := make([][]*JobPushParams, len(steps))
	b, err := c.batchChangeTx(ctx, tx, id, len(steps), func(i int, b *Batch) error {
		s := steps[i]
		if s.Failed {
			countFailure(s.JobUUID)(b)
			if b.FailedJobs == 1 && s.CancelOnFailure != nil && s.CancelOnFailure(b) {
				now := c.now()
				b.CancelledAt, b.FinishedAt = &now, &now
			}
		} else {
			countSuccess(s.JobUUID)(b)
		}
		if s.Then == nil {
			return nil
		}
		seen := *b
		seen.FailedJobIDs = slices.Clone(b.FailedJobIDs)
		var err error
		more[i], err = s.Then(&seen)
		return err
	})
	if errors.Is(err, ErrBatchNotFound) {
		for i, s := range steps {
			if s.Then != nil {
				if more[i], err = s.Then(nil); err != nil {
					return nil, err
				}
			}
		}
		return more, nil
	}
	if err != nil {
		return nil, err // as the driver said it: the transaction's retry reads it
	}
	for _, s := range steps {
		if s.Unlisted != nil && slices.Contains(b.Unlisted, s.JobUUID) {
			s.Unlisted(b, c.failedJobIDsFix())
		}
	}
	return more, nil
}

// BatchCreateParams is a new job_batches row.
type BatchCreateParams struct {
	ID   string // the batch id (Laravel writes an ordered uuid)
	Name string
	// TotalJobs is total_jobs and pending_jobs: the jobs already added to the batch.
	TotalJobs int
	// Options is the PHP-serialized options array; nil means an empty one (a:0:{}).
	Options []byte
	// CreatedAt is in Unix seconds; 0 means now.
	CreatedAt int64
}

// BatchCreate inserts a batch as DatabaseBatchRepository::store and incrementTotalJobs leave it: no
// failures yet, neither cancelled nor finished.
func (c *Conn) BatchCreate(ctx context.Context, p *BatchCreateParams) error {
	options := "a:0:{}"
	if p.Options != nil {
		options = string(p.Options)
	}
	created := p.CreatedAt
	if created == 0 {
		created = c.now()
	}
	cols := []string{"id", "name", "total_jobs", "pending_jobs", "failed_jobs", "failed_job_ids", "options", "created_at"}
	_, err := c.db.ExecContext(ctx, c.insertSQL(c.tables.JobBatches, cols),
		p.ID, p.Name, p.TotalJobs, p.TotalJobs, 0, "[]", c.d.encodeText(options), created)
	if err != nil {
		return fmt.Errorf("create batch %s: %w", p.ID, c.translate(err))
	}
	return nil
}

// BatchCancel marks a batch cancelled and finished at now, as Batch::cancel does.
func (c *Conn) BatchCancel(ctx context.Context, id string, now int64) error {
	q := c.rebind("update " + c.quote(c.tables.JobBatches) + " set cancelled_at = ?, finished_at = ? where id = ?")
	if _, err := c.db.ExecContext(ctx, q, now, now, id); err != nil {
		return fmt.Errorf("cancel batch %s: %w", id, c.translate(err))
	}
	return nil
}

// decodeFailedJobIDs reads failed_job_ids: a JSON list, or an object when PHP kept array keys.
func decodeFailedJobIDs(s string) ([]string, error) {
	if s == "" || s == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal([]byte(s), &list); err == nil {
		return list, nil
	}
	var obj map[string]string
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		if list, ok := cutFailedJobIDs(s); ok {
			return list, nil
		}
		return nil, fmt.Errorf("%w: failed_job_ids %.200q is not a JSON list of uuids", ErrInvalid, s)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	for _, k := range keys {
		list = append(list, obj[k])
	}
	return list, nil
}

// cutFailedJobIDs reads a list that a server not in strict mode cut short to fit the column (Laravel
// 8's TEXT on MySQL, once PHP appended past its 65,535 bytes): the uuids it holds whole. PHP's workers
// fail on such a list at every later count of the batch; the list written back is whole again.
func cutFailedJobIDs(s string) ([]string, bool) {
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	var list []string
	if json.Unmarshal([]byte(s+"]"), &list) == nil {
		return list, true
	}
	cut := "["
	if i := strings.LastIndex(s, `",`); i >= 0 {
		cut = s[:i+1]
	} else if !strings.HasPrefix(s, `["`) {
		return nil, false
	}
	if json.Unmarshal([]byte(cut+"]"), &list) != nil {
		return nil, false
	}
	return list, true
}

// phpJSONStrings encodes a list of strings as PHP's json_encode with default flags: "/" escaped as
// "\/", non-ASCII as \uXXXX (UTF-16), no HTML escaping.
func phpJSONStrings(list []string) string {
	b := []byte{'['}
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for _, r := range s {
			switch {
			case r == '"' || r == '\\' || r == '/':
				b = append(b, '\\', byte(r))
			case r == '\b':
				b = append(b, `\b`...)
			case r == '\f':
				b = append(b, `\f`...)
			case r == '\n':
				b = append(b, `\n`...)
			case r == '\r':
				b = append(b, `\r`...)
			case r == '\t':
				b = append(b, `\t`...)
			case r < 0x20 || r > 0x7f:
				if r > 0xffff {
					r1, r2 := utf16.EncodeRune(r)
					b = fmt.Appendf(b, `\u%04x\u%04x`, r1, r2)
				} else {
					b = fmt.Appendf(b, `\u%04x`, r)
				}
			default:
				b = append(b, byte(r))
			}
		}
		b = append(b, '"')
	}
	return string(append(b, ']'))
}
