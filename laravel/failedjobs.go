package laravel

import (
	"context"
	"fmt"
	"time"
)

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
	uuid, body := "''", "payload, exception"
	if withUUID {
		uuid = "uuid"
	}
	if p.WithoutPayload {
		body = "'', ''"
	}
	q := "select id, " + uuid + ", " + c.quote("connection") + ", queue, " + body + ", failed_at from " + c.quote(c.tables.FailedJobs)
	var args []any
	if p.Queue != "" {
		q += " where queue = ?"
		args = append(args, p.Queue)
	}
	rows, err := c.db.QueryContext(ctx, c.rebind(q+" order by id desc"), args...)
	if err != nil {
		return nil, fmt.Errorf("list failed jobs: %w", c.translate(err))
	}
	defer rows.Close()
	var out []*FailedJob
	for rows.Next() {
		var f FailedJob
		var failedAt any
		if err := rows.Scan(&f.ID, &f.UUID, &f.Connection, &f.Queue, &f.Payload, &f.Exception, &failedAt); err != nil {
			return nil, fmt.Errorf("list failed jobs: %w", err)
		}
		switch v := failedAt.(type) {
		case time.Time:
			f.FailedAt = v.Format(time.DateTime)
		case []byte:
			f.FailedAt = string(v)
		case nil:
		default:
			f.FailedAt = fmt.Sprint(v)
		}
		out = append(out, &f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list failed jobs: %w", c.translate(err))
	}
	return out, nil
}
