package laravel

import (
	"context"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
)

// splitSkipped returns the jobs p.Skip keeps and the ones it passes over, each in the order given.
func splitSkipped(p *JobClaimParams, jobs []*Job) (take, skipped []*Job) {
	if p.Skip == nil {
		return jobs, nil
	}
	split := false // take is a copy from the first row passed over on
	for i, j := range jobs {
		switch {
		case p.Skip(j):
			if !split {
				take, split = slices.Clone(jobs[:i]), true
			}
			skipped = append(skipped, j)
		case split:
			take = append(take, j)
		}
	}
	if !split {
		return jobs, nil
	}
	return take, skipped
}

// reportLeft hands the rows a committed claim passed over to p.Left.
func reportLeft(p *JobClaimParams, skipped []*Job) {
	if p.Left != nil && len(skipped) > 0 {
		p.Left(skipped)
	}
}

// unclaimSQL undoes, inside the claim's transaction, the reservation and attempt that the claim's
// UPDATE … RETURNING made on rows it then passed over (see JobClaimParams.Skip).
func (c *Conn) unclaimSQL(jobs []*Job) (string, []any) {
	args := make([]any, len(jobs))
	for i, j := range jobs {
		args[i] = j.ID
	}
	return c.rebind("update " + c.quote(c.tables.Jobs) + " set reserved_at = null, attempts = attempts - 1 where id in (" + placeholders(len(jobs)) + ")"), args
}

// unclaimed records in memory what unclaimSQL wrote.
func unclaimed(jobs []*Job) {
	for _, j := range jobs {
		j.Attempts = max(j.Attempts-1, 0)
		j.ReservedAt = 0
	}
}

// unclaimSteps is unclaimSQL as a PostgreSQL pipeline step, or none when nothing was passed over.
func (c *Conn) unclaimSteps(skipped []*Job) []pgStep {
	if len(skipped) == 0 {
		return nil
	}
	q, args := c.unclaimSQL(skipped)
	return []pgStep{{sql: q, args: args}}
}

// claimReturningTx is claimReturning inside tx, with the rows p.Skip passes over put back as they were
// before the transaction commits.
func (r *rowClaimer) claimReturningTx(ctx context.Context, tx *sqlx.Tx, p *JobClaimParams, where string, args []any, limit int) (take, skipped []*Job, err error) {
	jobs, err := r.claimReturning(ctx, tx, p, where, args, limit)
	if err != nil {
		return nil, nil, err
	}
	take, skipped = splitSkipped(p, jobs)
	if len(skipped) > 0 {
		q, uargs := r.c.unclaimSQL(skipped)
		if _, err := tx.ExecContext(ctx, q, uargs...); err != nil {
			return nil, nil, fmt.Errorf("put back the rows the claim passed over: %w", err)
		}
		unclaimed(skipped)
	}
	return take, skipped, nil
}

// seenRows is every row a claim looked at and settled, taken or passed over, in id order: what the
// queue's lower bound moves past (see idFloors.claimed).
func seenRows(take, skipped []*Job) []*Job {
	if len(skipped) == 0 {
		return take
	}
	all := append(slices.Clone(take), skipped...)
	slices.SortFunc(all, func(a, b *Job) int { return cmpInt64(a.ID, b.ID) })
	return all
}
