package laravel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// pgTables opens a PostgreSQL connection over fresh Laravel tables named with prefix.
func pgTables(t *testing.T, prefix string) (*Conn, Tables) {
	t.Helper()
	return openTables(t, testenv.Postgres(t), prefix, OpenParams{}, SchemaParams{})
}

// openTables opens a connection to db with p (its dialect, DSN and tables filled in) over fresh
// Laravel tables named with prefix, created with schema, and closes it when the test ends.
func openTables(t *testing.T, db testenv.Database, prefix string, p OpenParams, schema SchemaParams) (*Conn, Tables) {
	t.Helper()
	prefix = testenv.Name(prefix)
	p.Dialect, p.DSN = Dialect(db.Dialect), db.DSN
	p.Tables = Tables{Jobs: prefix + "_jobs", FailedJobs: prefix + "_failed", JobBatches: prefix + "_batches", Cache: prefix + "_cache", CacheLocks: prefix + "_locks"}
	c, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := CreateSchema(context.Background(), c, schema); err != nil {
		t.Fatal(err)
	}
	return c, p.Tables
}

// readPlan is a pipeline reader that appends the lines of an EXPLAIN to *plan.
func readPlan(plan *[]string) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			*plan = append(*plan, line)
		}
		return rows.Err()
	}
}

// TestPostgresClaimWalksPrimaryKey checks the plan of a claim from a lower bound on a table PostgreSQL
// has no statistics for (just created and filled, as after a burst of dispatches): with pgIndexOrder
// in its pipeline the claim walks the primary key from the bound and stops after the batch, instead
// of sorting every row of the queue.
func TestPostgresClaimWalksPrimaryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, tables := pgTables(t, "plan")
	fill := "insert into " + c.quote(tables.Jobs) + " (queue, payload, attempts, available_at, created_at) select 'default', repeat('x', 500), 0, 0, 0 from generate_series(1, 5000)"
	if _, err := c.db.ExecContext(ctx, fill); err != nil {
		t.Fatal(err)
	}
	r := &rowClaimer{c: c}
	where, args := claimWhere(&JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90}, nil, 2500)
	explain := func(guard bool) string {
		var plan []string
		step := pgStep{sql: "explain " + r.claimReturningSQL(where, 128), args: append([]any{int64(100)}, args...), read: readPlan(&plan)}
		steps := []pgStep{step}
		if guard {
			steps = append(c.indexOrderSteps(), step)
		}
		if err := c.pgPipelineTx(ctx, steps...); err != nil {
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
	if err := c.db.QueryRowContext(ctx, "show enable_sort").Scan(&sortSetting); err != nil || sortSetting != "on" {
		t.Fatalf("enable_sort after the pipeline = %q, %v; want on: the setting must stay inside the pipeline's transaction", sortSetting, err)
	}
}

// TestPostgresCandidateReadWalksPrimaryKey: optimistic's read of candidates from a lower bound runs in
// a one-round-trip transaction with sorting off, so it walks the primary key as the claims do, and the
// setting ends with that transaction.
func TestPostgresCandidateReadWalksPrimaryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, tables := pgTables(t, "cand")
	c.db.SetMaxOpenConns(1) // the setting is looked for on the connection the read used
	fill := "insert into " + c.quote(tables.Jobs) + " (queue, payload, attempts, available_at, created_at) select 'default', repeat('x', 500), 0, 0, 0 from generate_series(1, 5000)"
	if _, err := c.db.ExecContext(ctx, fill); err != nil {
		t.Fatal(err)
	}
	where, args := claimWhere(&JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90}, nil, 2500)
	sel := c.rebind("explain select " + jobColumns + " from " + c.quote(tables.Jobs) + " where " + where + " order by id limit 16")
	var plan []string
	if err := c.pgPipelineRead(ctx, append(c.indexOrderSteps(), pgStep{sql: sel, args: args, read: readPlan(&plan)})...); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(plan, "\n")
	if strings.Contains(got, "Sort") || !strings.Contains(got, "Index Scan using "+tables.Jobs+"_pkey") {
		t.Fatalf("the candidates' read from a lower bound should walk the primary key without sorting; plan:\n%s", got)
	}
	var sortSetting string
	if err := c.db.QueryRowContext(ctx, "show enable_sort").Scan(&sortSetting); err != nil || sortSetting != "on" {
		t.Fatalf("enable_sort after the read = %q, %v; want on: the setting must end with the read's transaction", sortSetting, err)
	}
	// Candidates come back through the same read, in id order from the bound.
	cands, err := selectCandidates(ctx, c, c.rebind("select "+jobColumns+" from "+c.quote(tables.Jobs)+" where "+where+" order by id limit 16"), args, false, true)
	if err != nil || len(cands) != 16 {
		t.Fatalf("candidates: %d rows, %v; want 16", len(cands), err)
	}
	if cands[0].ID != 2500 {
		t.Fatalf("first candidate %d, want 2500, the bound", cands[0].ID)
	}
}

// TestPostgresPipelineIsOneTransaction checks what deleteAndClaim relies on: the steps of a pipeline
// commit together, so a failing step undoes the delete before it, and a missing table is reported as
// ErrMissingTable with its fix.
func TestPostgresPipelineIsOneTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, tables := pgTables(t, "pipe")
	fill := "insert into " + c.quote(tables.Jobs) + " (queue, payload, attempts, reserved_at, available_at, created_at) select 'default', 'x', 1, 50, 0, 0 from generate_series(1, 3)"
	if _, err := c.db.ExecContext(ctx, fill); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := c.db.QueryRowContext(ctx, "select count(*) from "+c.quote(tables.Jobs)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	held := []*Job{{ID: 1, Attempts: 1, ReservedAt: 50}, {ID: 2, Attempts: 1, ReservedAt: 50}}
	var deleted map[int64]bool
	failing := pgStep{sql: "select 1 / 0"}
	if err := c.pgPipelineTx(ctx, c.deleteFencedStep(held, &deleted), failing); err == nil {
		t.Fatal("a pipeline with a failing step reported no error")
	}
	if n := count(); n != 3 {
		t.Fatalf("%d rows after a pipeline whose last step failed, want 3: the delete must be undone", n)
	}
	if err := c.pgPipelineTx(ctx, c.deleteFencedStep(held, &deleted)); err != nil || len(deleted) != 2 || count() != 1 {
		t.Fatalf("delete pipeline: err %v, deleted %v, %d rows left; want ids 1 and 2 deleted, 1 row left", err, deleted, count())
	}
	if _, err := c.db.ExecContext(ctx, "drop table "+c.quote(tables.Jobs)); err != nil {
		t.Fatal(err)
	}
	r := &rowClaimer{c: c}
	where, args := claimWhere(&JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90}, nil, 1)
	var jobs []*Job
	err := c.pgPipelineTx(ctx, append(c.indexOrderSteps(), r.pgClaimStep(&JobClaimParams{Now: 100}, where, args, 10, &jobs))...)
	var mt *MissingTableError
	if !errors.Is(err, ErrMissingTable) || !errors.As(err, &mt) || mt.Table != tables.Jobs {
		t.Fatalf("claim pipeline without a jobs table: err = %v; want ErrMissingTable naming %s", err, tables.Jobs)
	}
}

// TestPostgresPlansEachRun checks that no statement of a PostgreSQL connection stays prepared on the
// server, where from its sixth run PostgreSQL may keep a generic plan chosen from the table's size at
// that time: the claims and grouped deletes of a worker started beside a small table must not keep a
// sequential scan once the table has grown.
func TestPostgresPlansEachRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.Postgres(t)
	for _, dsn := range []string{db.DSN, dsnKeyValue(db)} {
		prefix := testenv.Name("plans")
		tables := Tables{Jobs: prefix + "_jobs", FailedJobs: prefix + "_failed", JobBatches: prefix + "_batches", Cache: prefix + "_cache", CacheLocks: prefix + "_locks"}
		// One pooled connection, so that the count below reads the session that ran the statements.
		c, err := Open(ctx, OpenParams{Dialect: Postgres, DSN: dsn, Tables: tables, MaxOpenConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := CreateSchema(ctx, c, SchemaParams{}); err != nil {
			t.Fatal(err)
		}
		q, err := NewQueue(c, QueueParams{Strategy: "batch", Batch: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			if _, err := q.JobPush(ctx, &JobPushParams{Queue: "default", Payload: []byte(`{"n":1}`), Now: int64(i), AvailableAt: 0}); err != nil {
				t.Fatal(err)
			}
			jobs, err := q.JobClaim(ctx, &JobClaimParams{Queue: "default", Now: int64(i), RetryAfter: 90, Limit: 1})
			if err != nil || len(jobs) != 1 {
				t.Fatalf("claim %d: %v, %v", i, jobs, err)
			}
			if err := q.JobDelete(ctx, jobs[0]); err != nil {
				t.Fatal(err)
			}
		}
		if err := Settle(ctx, q); err != nil {
			t.Fatal(err)
		}
		var prepared int
		if err := c.db.QueryRowContext(ctx, "select count(*) from pg_prepared_statements").Scan(&prepared); err != nil {
			t.Fatal(err)
		}
		if prepared != 0 {
			t.Fatalf("DSN %q: %d statements prepared on the server, want 0 (each run planned with its arguments)", dsn, prepared)
		}
	}
}

// dsnKeyValue returns db's connection as key=value pairs, the other form of DSN users give.
func dsnKeyValue(db testenv.Database) string {
	kv := fmt.Sprintf("host=%s port=%d dbname=%s user=%s sslmode=disable", db.Host, db.Port, db.Name, db.User)
	if db.Schema != "" {
		kv += " search_path=" + db.Schema
	}
	return kv
}

func TestWithPlanPerRun(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"host=h dbname=d":                          "host=h dbname=d default_query_exec_mode=cache_describe",
		"postgres://u@h/d":                         "postgres://u@h/d?default_query_exec_mode=cache_describe",
		"postgresql://u@h/d?sslmode=disable":       "postgresql://u@h/d?sslmode=disable&default_query_exec_mode=cache_describe",
		"host=h default_query_exec_mode=exec":      "host=h default_query_exec_mode=exec",
		"postgres://h/d?default_query_exec_mode=x": "postgres://h/d?default_query_exec_mode=x",
	} {
		if got := withPlanPerRun(in); got != want {
			t.Errorf("withPlanPerRun(%q) = %q, want %q", in, got, want)
		}
	}
}
