package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// ErrFailedJobNotFound means no failed_jobs row has the id (or uuid) asked for.
var ErrFailedJobNotFound = errors.New("failed job not found")

// FailedJob is one failed_jobs row.
type FailedJob struct {
	ID         int64
	UUID       string // "" when the table has no uuid column (Laravel before 8)
	Connection string
	Queue      string
	Payload    []byte
	Exception  string
	FailedAt   string // as stored: Y-m-d H:i:s in the app timezone
}

// FailedJobListParams selects failed jobs; the zero value selects all of them.
type FailedJobListParams struct {
	// Queue keeps only the jobs that failed on this queue.
	Queue string
	// WithoutPayload leaves Payload and Exception empty, for listings of large tables.
	WithoutPayload bool
}

// FailedJobList returns failed jobs newest first (`order by id desc`), as both of Laravel's database
// failed-job providers list them.
func (c *Conn) FailedJobList(ctx context.Context, p *FailedJobListParams) ([]*FailedJob, error) {
	withUUID, err := c.failedHasUUID(ctx)
	if err != nil {
		return nil, fmt.Errorf("list failed jobs: %w", err)
	}
	payload := "payload, exception"
	if p.WithoutPayload {
		payload = "'', ''"
	}
	q := "select " + c.failedColumns(withUUID, payload) + " from " + c.quote(c.tables.FailedJobs)
	var args []any
	if p.Queue != "" {
		q += " where queue = ?"
		args = append(args, p.Queue)
	}
	rows, err := c.db.QueryxContext(ctx, c.rebind(q+" order by id desc"), args...)
	if err != nil {
		return nil, fmt.Errorf("list failed jobs: %w", c.translate(err))
	}
	defer rows.Close()
	var out []*FailedJob
	for rows.Next() {
		f, err := scanFailedJob(rows, withUUID)
		if err != nil {
			return nil, fmt.Errorf("list failed jobs: %w", err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list failed jobs: %w", c.translate(err))
	}
	return out, nil
}

// FailedJobHasUUID reports whether failed_jobs has Laravel 8's uuid column.
func (c *Conn) FailedJobHasUUID(ctx context.Context) (bool, error) {
	ok, err := c.failedHasUUID(ctx)
	if err != nil {
		return false, fmt.Errorf("read the columns of %s: %w", c.tables.FailedJobs, err)
	}
	return ok, nil
}

// FailedJobRef names one failed job as a Laravel failed-job provider's find($id) and forget($id) do.
type FailedJobRef struct {
	// ID is the id the command was given: a uuid when ByUUID, else the numeric id.
	ID string
	// ByUUID looks the job up by its uuid column, as the database-uuids provider does.
	ByUUID bool
	// Row, when not 0, is the row's numeric id, which selects it whatever ID says: FailedJobIDs gives
	// it, so that a row whose uuid is NULL (a failed_jobs table of Laravel 7 or older given a
	// nullable uuid column, as Laravel 8's upgrade guide has it) is found, with ID "" as PHP shows it.
	Row int64
}

// where returns the condition and argument that select the job; ok is false when a numeric id is
// not a number, which no row can match.
func (r *FailedJobRef) where() (string, any, bool) {
	if r.Row != 0 {
		return "id = ?", r.Row, true
	}
	if r.ByUUID {
		return "uuid = ?", r.ID, true
	}
	n, err := strconv.ParseInt(strings.TrimSpace(r.ID), 10, 64)
	return "id = ?", n, err == nil
}

// FailedJobFind reads one failed job; ErrFailedJobNotFound when no row matches.
func (c *Conn) FailedJobFind(ctx context.Context, p *FailedJobRef) (*FailedJob, error) {
	withUUID, err := c.failedHasUUID(ctx)
	if err != nil {
		return nil, fmt.Errorf("find failed job %s: %w", p.ID, err)
	}
	cond, arg, ok := p.where()
	if !ok {
		return nil, fmt.Errorf("find failed job %s: %w", p.ID, ErrFailedJobNotFound)
	}
	q := c.rebind("select " + c.failedColumns(withUUID, "payload, exception") + " from " + c.quote(c.tables.FailedJobs) + " where " + cond)
	rows, err := c.db.QueryxContext(ctx, q, arg)
	if err != nil {
		return nil, fmt.Errorf("find failed job %s: %w", p.ID, c.translate(err))
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("find failed job %s: %w", p.ID, c.translate(err))
		}
		return nil, fmt.Errorf("find failed job %s: %w", p.ID, ErrFailedJobNotFound)
	}
	f, err := scanFailedJob(rows, withUUID)
	if err != nil {
		return nil, fmt.Errorf("find failed job %s: %w", p.ID, err)
	}
	return f, nil
}

// FailedJobForget deletes one failed job and reports whether a row was deleted.
func (c *Conn) FailedJobForget(ctx context.Context, p *FailedJobRef) (bool, error) {
	cond, arg, ok := p.where()
	if !ok {
		return false, nil
	}
	res, err := c.db.ExecContext(ctx, c.rebind("delete from "+c.quote(c.tables.FailedJobs)+" where "+cond), arg)
	if err != nil {
		return false, fmt.Errorf("forget failed job %s: %w", p.ID, c.translate(err))
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// FailedJobDeleteParams selects the failed jobs FailedJobDelete and FailedJobCount act on.
type FailedJobDeleteParams struct {
	// Before, when not zero, keeps only jobs that failed before it, compared with failed_at as
	// Laravel's query builder compares it: Before formatted as Y-m-d H:i:s in its own location (give
	// it in the app timezone).
	Before time.Time
	// Inclusive compares failed_at <= Before (queue:flush --hours) instead of < (queue:prune-failed).
	Inclusive bool
	// Limit is how many rows one call deletes at most; 0 means 1000, the chunk Laravel's prune uses.
	Limit int
}

func (p *FailedJobDeleteParams) where() (string, []any) {
	if p.Before.IsZero() {
		return "", nil
	}
	op := "<"
	if p.Inclusive {
		op = "<="
	}
	return " where failed_at " + op + " ?", []any{p.Before.Format(time.DateTime)}
}

// FailedJobCount counts the failed jobs p selects.
func (c *Conn) FailedJobCount(ctx context.Context, p *FailedJobDeleteParams) (int64, error) {
	cond, args := p.where()
	var n int64
	if err := c.db.QueryRowxContext(ctx, c.rebind("select count(*) from "+c.quote(c.tables.FailedJobs)+cond), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count failed jobs: %w", c.translate(err))
	}
	return n, nil
}

// FailedJobDelete deletes up to Limit of the failed jobs p selects, oldest id first, in one
// transaction, and returns how many it deleted; call it until it returns 0. Laravel deletes them in
// one statement (queue:flush) or in chunks of 1000 (queue:prune-failed); chunks let a long flush
// report progress and stop between two chunks.
func (c *Conn) FailedJobDelete(ctx context.Context, p *FailedJobDeleteParams) (int64, error) {
	cond, args := p.where()
	limit := p.Limit
	if limit <= 0 {
		limit = 1000
	}
	sel := c.rebind("select id from " + c.quote(c.tables.FailedJobs) + cond + " order by id limit " + strconv.Itoa(limit))
	var n int64
	err := c.InTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		n, err = c.deleteChunk(ctx, tx, c.tables.FailedJobs, sel, args)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete failed jobs: %w", err)
	}
	return n, nil
}

// deleteChunk deletes the rows of table whose ids sel selects (with args) and returns how many it
// deleted. Selecting the ids first works on every dialect, where `delete … limit` does not.
func (c *Conn) deleteChunk(ctx context.Context, tx *sqlx.Tx, table, sel string, args []any) (int64, error) {
	var ids []any
	rows, err := tx.QueryContext(ctx, sel, args...)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var id any
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return 0, err
	}
	return c.deleteIDs(ctx, tx, table, ids)
}

// deleteIDs deletes the rows of table whose id is in ids and returns how many it deleted.
func (c *Conn) deleteIDs(ctx context.Context, ex sqlx.ExecerContext, table string, ids []any) (int64, error) {
	q := c.rebind("delete from " + c.quote(table) + " where id in (" + placeholders(len(ids)) + ")")
	res, err := ex.ExecContext(ctx, q, ids...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// FailedJobIDsParams selects the ids queue:retry works through.
type FailedJobIDsParams struct {
	// Queue keeps only jobs that failed on this queue.
	Queue string
	// UUIDs returns the uuid column instead of id, as the database-uuids provider's ids() does.
	UUIDs bool
}

// FailedJobIDs returns the failed jobs newest first, as queue:retry all and queue:retry --queue take
// them: each with its id (or uuid, "" where it is NULL) and its row; it reads no payload, so it is
// cheap on a large table.
func (c *Conn) FailedJobIDs(ctx context.Context, p *FailedJobIDsParams) ([]*FailedJobRef, error) {
	col := "id, id"
	if p.UUIDs {
		col = "uuid, id"
	}
	q := "select " + col + " from " + c.quote(c.tables.FailedJobs)
	var args []any
	if p.Queue != "" {
		q += " where queue = ?"
		args = append(args, p.Queue)
	}
	rows, err := c.db.QueryContext(ctx, c.rebind(q+" order by id desc"), args...)
	if err != nil {
		return nil, fmt.Errorf("list failed job ids: %w", c.translate(err))
	}
	defer rows.Close()
	var ids []*FailedJobRef
	for rows.Next() {
		var id sql.NullString
		var row int64
		if err := rows.Scan(&id, &row); err != nil {
			return nil, fmt.Errorf("list failed job ids: %w", err)
		}
		ids = append(ids, &FailedJobRef{ID: id.String, ByUUID: p.UUIDs, Row: row})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list failed job ids: %w", c.translate(err))
	}
	return ids, nil
}

// FailedJobRetryParams is one failed job to put back on the queue.
type FailedJobRetryParams struct {
	// ID is the failed_jobs row's numeric id.
	ID int64
	// Queue is the queue to push onto: the failed row's queue.
	Queue string
	// Payload is the payload to push, as queue:retry rewrites it (payload.RetryPayload).
	Payload []byte
	// Now is the clock in Unix seconds: created_at and available_at of the new row.
	Now int64
}

// FailedJobRetry moves failed jobs back onto the queue: for each, it deletes the failed row and
// inserts the payload as a new jobs row (attempts 0, available now, as DatabaseQueue's pushRaw writes
// it), all in one transaction, and returns the new jobs' ids, 0 for a failed row that was already
// gone (retried or forgotten by someone else meanwhile), for which nothing is pushed. Laravel pushes
// and then forgets in two steps; here every job is either still failed or queued, never both or
// neither, and a group of jobs costs one commit.
func (c *Conn) FailedJobRetry(ctx context.Context, jobs []*FailedJobRetryParams) ([]int64, error) {
	ids := make([]int64, len(jobs))
	err := c.retry(ctx, DefaultDeleteRetries, func() error {
		clear(ids)
		return c.InTx(ctx, func(tx *sqlx.Tx) error {
			for i, p := range jobs {
				n, err := c.deleteIDs(ctx, tx, c.tables.FailedJobs, []any{p.ID})
				if err != nil {
					return err
				}
				if n != 1 {
					continue
				}
				if ids[i], err = c.insertJob(ctx, tx, &JobPushParams{Queue: p.Queue, Payload: p.Payload, Now: p.Now, AvailableAt: p.Now}); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("retry failed jobs: %w", err)
	}
	return ids, nil
}

// failedColumns lists the columns scanFailedJob reads, with the given payload and exception columns.
func (c *Conn) failedColumns(withUUID bool, payload string) string {
	uuid := "''"
	if withUUID {
		uuid = "uuid"
	}
	return "id, " + uuid + ", " + c.quote("connection") + ", queue, " + payload + ", failed_at"
}

func scanFailedJob(rows *sqlx.Rows, withUUID bool) (*FailedJob, error) {
	var f FailedJob
	var uuid sql.NullString
	var failedAt any
	if err := rows.Scan(&f.ID, &uuid, &f.Connection, &f.Queue, &f.Payload, &f.Exception, &failedAt); err != nil {
		return nil, err
	}
	f.UUID = uuid.String
	switch v := failedAt.(type) {
	case time.Time:
		f.FailedAt = v.Format(time.DateTime)
	case []byte:
		f.FailedAt = string(v)
	case string:
		f.FailedAt = v
	case nil:
	default:
		f.FailedAt = fmt.Sprint(v)
	}
	return &f, nil
}
