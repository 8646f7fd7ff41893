package laravel

import (
	"context"
	"fmt"
)

// JobListParams selects rows of the jobs table; the zero value selects all of them.
type JobListParams struct {
	// Queue keeps only the jobs of this queue.
	Queue string
}

// JobList returns the jobs table's rows in id order, reserved or not, as they are (ReservedAt is 0
// for an unreserved row). It is for tools and small tables, not for claiming.
func (c *Conn) JobList(ctx context.Context, p *JobListParams) ([]*Job, error) {
	q := "select " + jobColumns + " from " + c.quote(c.tables.Jobs)
	var args []any
	if p.Queue != "" {
		q += " where queue = ?"
		args = append(args, p.Queue)
	}
	rows, err := c.db.QueryxContext(ctx, c.rebind(q+" order by id"), args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", c.translate(err))
	}
	jobs, err := ScanJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", c.translate(err))
	}
	return jobs, nil
}
