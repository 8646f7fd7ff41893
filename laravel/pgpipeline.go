package laravel

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"time"

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

// rollbackTimeout bounds the rollback of a pipeline transaction whose steps failed: a connection that
// does not answer it is dropped instead of holding up the claim.
const rollbackTimeout = 5 * time.Second

// pgPipelineTx runs steps in one transaction, sent in one round trip after a BEGIN, and sends the
// COMMIT in a second one once every step's rows are in. A claim in steps then knows the rows it took
// when the COMMIT's answer is lost (the error wraps ErrCommitUnknown), and can give them back (see
// returnUnknownClaim); in a plain pipeline, a connection cut after the steps were sent leaves rows
// reserved that no worker knows of until retry_after, each with an attempt spent.
func (c *Conn) pgPipelineTx(ctx context.Context, steps ...pgStep) error {
	return c.pgPipeline(ctx, false, steps, nil)
}

// pgPipelineTxThen is pgPipelineTx with more steps, decided once the first steps' rows are in (a
// claim's undo of the rows it passed over, see JobClaimParams.Skip). Any are sent in a round trip of
// their own before the COMMIT's, so that the COMMIT stays the one statement whose answer can be lost
// after it took effect.
func (c *Conn) pgPipelineTxThen(ctx context.Context, then func() []pgStep, steps ...pgStep) error {
	return c.pgPipeline(ctx, false, steps, then)
}

// pgPipelineRead runs steps that only read in one transaction and one round trip, the COMMIT sent
// with them: a read whose answer is lost has taken nothing.
func (c *Conn) pgPipelineRead(ctx context.Context, steps ...pgStep) error {
	return c.pgPipeline(ctx, true, steps, nil)
}

// pgPipeline sends BEGIN and steps in one round trip and the COMMIT with them (withCommit) or, once
// every step's rows are in, in a second one, after the steps then returns.
func (c *Conn) pgPipeline(ctx context.Context, withCommit bool, steps []pgStep, then func() []pgStep) error {
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
		pc := sc.Conn()
		b := &pgx.Batch{}
		b.Queue("begin")
		for _, s := range steps {
			b.Queue(s.sql, s.args...)
		}
		all := append([]pgStep{{}}, steps...)
		if withCommit {
			b.Queue("commit")
			all = append(all, pgStep{})
		}
		br := pc.SendBatch(ctx, b)
		err := readSteps(br, all)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		var more []pgStep
		if err == nil && then != nil {
			more = then()
		}
		if len(more) > 0 {
			b := &pgx.Batch{}
			for _, s := range more {
				b.Queue(s.sql, s.args...)
			}
			br := pc.SendBatch(ctx, b)
			err = readSteps(br, more)
			if cerr := br.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			// Nothing was committed. A connection that cannot roll back, or not soon, is not given
			// back to the pool.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
			_, rerr := pc.Exec(rctx, "rollback")
			cancel()
			if rerr != nil {
				return errors.Join(err, driver.ErrBadConn)
			}
			return err
		}
		if withCommit {
			return nil
		}
		_, err = pc.Exec(ctx, "commit")
		return commitErr(err)
	})
	return c.translate(err)
}

// readSteps reads the results of a batch's statements, one step each, and stops at the first error.
func readSteps(br pgx.BatchResults, steps []pgStep) error {
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
			return err
		}
	}
	return nil
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

// xactIDSteps is a step that stores the transaction's id in *xid (left 0 while the transaction has
// written nothing), where the server can later say whether it committed (see dialect.xactStatus); no
// step elsewhere.
func (c *Conn) xactIDSteps(xid *int64) []pgStep {
	if c.xactIDSQL == "" {
		return nil
	}
	return []pgStep{{sql: c.xactIDSQL, read: func(rows pgx.Rows) error {
		var v *int64
		for rows.Next() {
			if err := rows.Scan(&v); err != nil {
				return err
			}
		}
		if v != nil {
			*xid = *v
		}
		return rows.Err()
	}}}
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
