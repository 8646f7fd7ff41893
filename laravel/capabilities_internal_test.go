package laravel

import (
	"context"
	"testing"
)

// TestPostgresWithoutPipeline runs the batch strategy on PostgreSQL with pipelining switched off, as a
// dialect for a server behind a pooler that cannot pipeline would declare it: claims and grouped
// deletes take the one-statement and transaction paths instead, and every job is still claimed once.
func TestPostgresWithoutPipeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, tables := pgTables(t, "nopipe")
	c.caps.Pipeline = false
	fill := "insert into " + c.quote(tables.Jobs) + " (queue, payload, attempts, available_at, created_at) select 'default', 'x', 0, 0, 0 from generate_series(1, 300)"
	if _, err := c.db.ExecContext(ctx, fill); err != nil {
		t.Fatal(err)
	}
	q, err := NewQueue(c, QueueParams{Strategy: "batch", Batch: 64})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for {
		jobs, err := q.JobClaim(ctx, &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90, Limit: 64})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			break
		}
		for _, j := range jobs {
			if seen[j.ID] {
				t.Fatalf("job %d claimed twice", j.ID)
			}
			seen[j.ID] = true
			if err := q.JobDelete(ctx, j); err != nil {
				t.Fatalf("delete %d: %v", j.ID, err)
			}
		}
	}
	var left int
	if err := c.db.QueryRowContext(ctx, "select count(*) from "+c.quote(tables.Jobs)).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 300 || left != 0 {
		t.Fatalf("claimed %d of 300 jobs, %d rows left", len(seen), left)
	}
}
