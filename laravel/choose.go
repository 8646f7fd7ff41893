package laravel

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// AutoStrategy is the strategy name that asks ChooseStrategy to pick one.
const AutoStrategy = "auto"

// ChooseStrategy picks the claim strategy for a connection from the server's capabilities and the jobs
// table's columns, and says why in one line:
//
//   - a delete_mark column (added by queue:migrate-index --strategy delete-mark): delete-mark;
//   - otherwise batch: SQLite, PostgreSQL, and MySQL/MariaDB with SKIP LOCKED; and MySQL before 8.0.1
//     or MariaDB before 10.6, where its claims take a plain FOR UPDATE: claimers queue for the first
//     unlocked rows, but each takes a batch in one commit. On MariaDB taken for 10.5 (queue:bench
//     --server-version 10.5.0-MariaDB, docs/bench.md) batch ran 26,259 / 37,726 / 31,701 jobs/s at
//     1 / 4 / 16 workers and optimistic, the choice before, 4,370 / 6,440 / 3,179; the deadlocks of
//     batch's claims at 16 workers were retried, and no job failed, ran twice or was left.
//
// A missing jobs table is an error wrapping ErrMissingTable that names the migration to run.
func ChooseStrategy(ctx context.Context, c *Conn) (name, reason string, err error) {
	cols, err := c.jobsColumns(ctx)
	if err != nil {
		return "", "", fmt.Errorf("choose claim strategy: %w", err)
	}
	switch {
	case cols["delete_mark"]:
		return "delete-mark", "the jobs table has a delete_mark column", nil
	case c.caps.SkipLocked && !c.caps.UpdateReturning && legacyIndexed(ctx, c):
		// The batch strategy's claims then take a plain FOR UPDATE (see rowClaimer.lockFor).
		return "batch", c.engine + " " + c.version + " has SKIP LOCKED, but the jobs table has Laravel 5.4's (queue, reserved_at) index, over which it deadlocks: batched claims under a plain FOR UPDATE in READ COMMITTED transactions; artisan-go queue:migrate-index replaces the index", nil
	case c.caps.UpdateReturning || c.caps.SkipLocked:
		return "batch", c.d.batchReason(c.engine, c.version), nil
	}
	return "batch", c.engine + " " + c.version + " has no SKIP LOCKED: batched claims under a plain FOR UPDATE in READ COMMITTED transactions, each claimer taking a batch in one commit", nil
}

// OpenQueue is NewQueue for a worker that is starting: an empty or "auto" strategy is chosen by
// ChooseStrategy. It returns the queue and, for the start-up log, why its strategy was chosen.
func OpenQueue(ctx context.Context, c *Conn, p QueueParams) (Queue, string, error) {
	reason := "configured"
	if p.Strategy == "" || p.Strategy == AutoStrategy {
		name, why, err := ChooseStrategy(ctx, c)
		if err != nil {
			return nil, "", err
		}
		p.Strategy, reason = name, "chosen: "+why
	}
	q, err := NewQueue(c, p)
	return q, reason, err
}

// Settle tidies up after a worker stops: it gives back the rows the queue claimed ahead and never
// handed out (Prefetcher) and removes the rows it marked as finished (JobSweeper). Queues that do
// neither have nothing to do.
func Settle(ctx context.Context, q Queue) error {
	var errs []error
	if p, ok := q.(Prefetcher); ok {
		errs = append(errs, p.JobReturnPrefetched(ctx))
	}
	if s, ok := q.(JobSweeper); ok {
		_, err := s.JobSweep(ctx)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// legacyIndexed reports whether the jobs table has Laravel 5.4's (queue, reserved_at) index.
func legacyIndexed(ctx context.Context, c *Conn) bool {
	t, err := InspectJobs(ctx, c)
	return err == nil && slices.ContainsFunc(t.Indexes, Index.timeAfterQueue)
}
