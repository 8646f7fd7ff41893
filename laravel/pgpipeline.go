package laravel

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgStep is one statement of a PostgreSQL pipeline: its text with $n placeholders, its arguments, and
// how its rows are read (nil: its rows, if any, are discarded).
type pgStep struct {
	sql  string
	args []any
	read func(pgx.Rows) error
}

// pgPipeline sends steps to PostgreSQL in one round trip on one pooled connection. Sent before one
// Sync, they run as one implicit transaction: they commit together at the end, and an error in one
// rolls back the steps before it and skips the rest. The error is translated as every other query's.
func (c *Conn) pgPipeline(ctx context.Context, steps ...pgStep) error {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return c.translate(err)
	}
	defer conn.Close()
	err = conn.Raw(func(driverConn any) error {
		sc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("laravel: a PostgreSQL pipeline needs the pgx driver, got %T", driverConn)
		}
		b := &pgx.Batch{}
		for _, s := range steps {
			b.Queue(s.sql, s.args...)
		}
		br := sc.Conn().SendBatch(ctx, b)
		for _, s := range steps {
			rows, err := br.Query()
			if err == nil && s.read != nil {
				err = s.read(rows)
			}
			if err == nil {
				rows.Close()
				err = rows.Err()
			}
			if err != nil {
				_ = br.Close()
				return err
			}
		}
		return br.Close()
	})
	return c.translate(err)
}

// indexOrderSteps are the pipeline steps that make the next claim of the same pipeline walk the
// primary key from its lower bound instead of sorting the queue's rows (see dialect.indexOrderSQL). It
// is used only with a lower bound, that is while the queue has a backlog of at least a batch from that
// bound on.
func (c *Conn) indexOrderSteps() []pgStep {
	if q := c.d.indexOrderSQL(); q != "" {
		return []pgStep{{sql: q}}
	}
	return nil
}

// pgScanJobs returns a pipeline reader that stores the rows (jobColumns) in *out, sorted by id.
func pgScanJobs(out *[]*Job) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		jobs, err := readJobs(rows)
		if err != nil {
			return err
		}
		slices.SortFunc(jobs, func(a, b *Job) int { return cmpInt64(a.ID, b.ID) })
		*out = jobs
		return nil
	}
}

// pgScanIDSet returns a pipeline reader that collects a single id column into *set.
func pgScanIDSet(set *map[int64]bool) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		ids, err := readIDSet(rows)
		*set = ids
		return err
	}
}
