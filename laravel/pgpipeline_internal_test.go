package laravel

import (
	"context"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// TestPostgresClaimWalksPrimaryKey checks the plan of a claim from a lower bound on a table PostgreSQL
// has no statistics for (just created and filled, as after a burst of dispatches): with pgIndexOrder
// in its pipeline the claim walks the primary key from the bound and stops after the batch, instead
// of sorting every row of the queue.
func TestPostgresClaimWalksPrimaryKey(t *testing.T) {
	db := testenv.Postgres(t)
	ctx := context.Background()
	prefix := testenv.Name("plan")
	tables := Tables{Jobs: prefix + "_jobs", FailedJobs: prefix + "_failed", JobBatches: prefix + "_batches", Cache: prefix + "_cache", CacheLocks: prefix + "_locks"}
	c, err := Open(ctx, OpenParams{Dialect: Postgres, DSN: db.DSN, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := CreateSchema(ctx, c, SchemaParams{}); err != nil {
		t.Fatal(err)
	}
	fill := "insert into " + c.Q(tables.Jobs) + " (queue, payload, attempts, available_at, created_at) select 'default', repeat('x', 500), 0, 0, 0 from generate_series(1, 5000)"
	if _, err := c.DB().ExecContext(ctx, fill); err != nil {
		t.Fatal(err)
	}
	r := &rowClaimer{c: c}
	where, args := claimWhere(&JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90}, nil, 2500)
	explain := func(guard bool) string {
		var plan []string
		step := pgStep{sql: "explain " + r.claimReturningSQL(where, 128), args: append([]any{int64(100)}, args...), read: func(rows pgx.Rows) error {
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					return err
				}
				plan = append(plan, line)
			}
			return rows.Err()
		}}
		steps := []pgStep{step}
		if guard {
			steps = []pgStep{pgIndexOrder, step}
		}
		if err := c.pgPipeline(ctx, steps...); err != nil {
			t.Fatal(err)
		}
		return strings.Join(plan, "\n")
	}
	t.Logf("the planner's own choice:\n%s", explain(false))
	plan := explain(true)
	if strings.Contains(plan, "Sort") || !strings.Contains(plan, "Index Scan using "+tables.Jobs+"_pkey") || !strings.Contains(plan, "Index Cond: (id >= ") {
		t.Fatalf("the claim from a lower bound should walk the primary key from the bound without sorting; plan:\n%s", plan)
	}
	var sortSetting string
	if err := c.DB().QueryRowContext(ctx, "show enable_sort").Scan(&sortSetting); err != nil || sortSetting != "on" {
		t.Fatalf("enable_sort after the pipeline = %q, %v; want on: the setting must stay inside the pipeline's transaction", sortSetting, err)
	}
}
