package laravel

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jmoiron/sqlx"
)

// BatchPruneKind says which batches BatchPrune deletes, as the three prune methods of Laravel's
// DatabaseBatchRepository select them.
type BatchPruneKind int

const (
	// BatchFinished selects batches finished before the cutoff (prune, queue:prune-batches --hours).
	BatchFinished BatchPruneKind = iota
	// BatchUnfinished selects batches not finished and created before the cutoff (pruneUnfinished,
	// --unfinished).
	BatchUnfinished
	// BatchCancelled selects cancelled batches created before the cutoff (pruneCancelled, --cancelled,
	// Laravel 9.41+).
	BatchCancelled
)

// BatchPruneParams selects the job_batches rows one BatchPrune call deletes.
type BatchPruneParams struct {
	Kind BatchPruneKind
	// Before is the cutoff in Unix seconds, compared with `<` as Laravel does.
	Before int64
	// Limit is how many rows one call deletes at most; 0 means 1000, Laravel's chunk.
	Limit int
}

// BatchPrune deletes up to Limit batches that p selects, in one transaction, and returns how many it
// deleted; call it until it returns 0, as Laravel's prune loops do.
func (c *Conn) BatchPrune(ctx context.Context, p *BatchPruneParams) (int64, error) {
	cond := "finished_at is not null and finished_at < ?"
	switch p.Kind {
	case BatchUnfinished:
		cond = "finished_at is null and created_at < ?"
	case BatchCancelled:
		cond = "cancelled_at is not null and created_at < ?"
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 1000
	}
	sel := c.rebind("select id from " + c.quote(c.tables.JobBatches) + " where " + cond + " order by created_at, id limit " + strconv.Itoa(limit))
	var n int64
	err := c.InTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		n, err = c.deleteChunk(ctx, tx, c.tables.JobBatches, sel, []any{p.Before})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune batches: %w", err)
	}
	return n, nil
}
