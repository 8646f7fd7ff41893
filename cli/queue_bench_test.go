//go:build bench

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/bench"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// TestQueueBenchSmall runs the bench for real on SQLite and MariaDB with 200 jobs and checks its JSON:
// every row ran every job once, and the plot was drawn.
func TestQueueBenchSmall(t *testing.T) {
	t.Parallel()
	my := testenv.MySQL(t)
	lite := testenv.SQLite(t)
	plot := filepath.Join(t.TempDir(), "bench.svg")
	var stdout, stderr bytes.Buffer
	status := Do(context.Background(), []string{"queue:bench", "--db", "sqlite,mysql", "--mysql-dsn", my.DSN,
		"--sqlite-file", lite.DSN, "--jobs", "200", "--workers", "1,3", "--format", "json", "--plot", plot, "--quiet", "--work-binary", ""},
		nil, &stdout, &stderr)
	if status != 0 {
		t.Fatalf("queue:bench exit status %d\nstdout: %s\nstderr: %s", status, stdout.String(), stderr.String())
	}
	var r bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode JSON: %v\n%s", err, stdout.String())
	}
	// Per database: the bare loop and every strategy at two worker counts.
	if want := 2 * 2 * (1 + len(laravel.Strategies())); len(r.Rows) != want {
		t.Fatalf("%d rows, want %d", len(r.Rows), want)
	}
	seen := map[string]bool{}
	for _, row := range r.Rows {
		seen[row.Database+"/"+row.Strategy] = true
		if row.Error != "" || row.Lost != 0 || row.Duplicates != 0 || row.Executions != 200 || row.LeftInTable != 0 || row.JobsPerSec <= 0 {
			t.Errorf("row %+v: want 200 executions, 0 lost, 0 duplicates, nothing left", row)
		}
	}
	for _, row := range r.Rows {
		if (row.Database == "sqlite") != (row.Writes > 0) {
			t.Errorf("row %s/%s × %d counted %d SQLite writes: want some on SQLite, none on MariaDB", row.Database, row.Strategy, row.Workers, row.Writes)
		}
	}
	for _, want := range []string{"sqlite/batch", "mysql/batch", "mysql/bare SQL", "sqlite/delete-mark", "mysql/optimistic", "mysql/delete-retry"} {
		if !seen[want] {
			t.Errorf("no %s row", want)
		}
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !strings.Contains(string(svg), "<circle") {
		t.Fatalf("plot: %v\n%.300s", err, svg)
	}
}

// TestQueueBenchSQLiteWrites counts the bare single-row loop's writes on SQLite: a claim and a delete
// per job, and the few claims that found the queue empty, and shows them in the table.
func TestQueueBenchSQLiteWrites(t *testing.T) {
	t.Parallel()
	lite := testenv.SQLite(t)
	var stdout, stderr bytes.Buffer
	status := Do(context.Background(), []string{"queue:bench", "--db", "sqlite", "--sqlite-file", lite.DSN, "--jobs", "300",
		"--workers", "1", "--batch", "1", "--strategies", "none", "--format", "json", "--quiet", "--work-binary", ""}, nil, &stdout, &stderr)
	if status != 0 {
		t.Fatalf("queue:bench exit status %d\nstdout: %s\nstderr: %s", status, stdout.String(), stderr.String())
	}
	var r bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode JSON: %v\n%s", err, stdout.String())
	}
	if len(r.Rows) != 1 || r.Rows[0].Strategy != bench.RowBare || r.Rows[0].Error != "" {
		t.Fatalf("rows %+v, want one bare loop row", r.Rows)
	}
	if w := r.Rows[0].Writes; w < 600 || w > 630 {
		t.Errorf("bare single-row loop sent %d writes for 300 jobs, want 600 (a claim and a delete each) and a few empty claims", w)
	}
	var table bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "writes/job") || !strings.Contains(table.String(), "  2.0") {
		t.Errorf("table has no writes per job:\n%s", table.String())
	}
}

// TestQueueBenchPostgres checks PostgreSQL's rows: both bare loops (as PostgreSQL plans Laravel's
// claim, and walking the primary key) and the batch strategy, each running every job once.
func TestQueueBenchPostgres(t *testing.T) {
	t.Parallel()
	pg := testenv.Postgres(t)
	r := runBench(t, "--db", "pgsql", "--pgsql-dsn", pg.DSN, "--jobs", "200", "--workers", "2", "--strategies", "batch", "--work-binary", "")
	var got []string
	for _, row := range r.Rows {
		got = append(got, row.Strategy)
		if row.Error != "" || row.Lost != 0 || row.Duplicates != 0 || row.Executions != 200 || row.LeftInTable != 0 {
			t.Errorf("row %+v: want 200 executions, 0 lost, 0 duplicates, nothing left", row)
		}
	}
	if want := []string{bench.RowBare, bench.RowBarePK, "batch"}; !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}

// TestQueueBenchWorkRows builds the binary and checks the rows of its queue:work command, at its
// defaults and at a --concurrency, on SQLite and PostgreSQL: every job ran once, as the processes
// themselves report, and each process's peak RSS was read.
func TestQueueBenchWorkRows(t *testing.T) {
	pg := testenv.Postgres(t)
	lite := testenv.SQLite(t)
	bin := filepath.Join(t.TempDir(), "artisan-go")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/artisan-go").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r := runBench(t, "--db", "sqlite,pgsql", "--pgsql-dsn", pg.DSN, "--sqlite-file", lite.DSN, "--jobs", "300", "--workers", "2",
		"--strategies", "batch", "--bare=false", "--work-binary", bin, "--work-concurrency", "16")
	var got []string
	for _, row := range r.Rows {
		got = append(got, row.Database+"/"+row.Strategy)
		if row.Error != "" || row.Lost != 0 || row.Duplicates != 0 || row.Executions != 300 || row.LeftInTable != 0 || row.PeakRSSMB <= 0 {
			t.Errorf("row %+v: want 300 executions, 0 lost, 0 duplicates, nothing left, a peak RSS", row)
		}
	}
	want := []string{"sqlite/queue:work", "sqlite/queue:work --concurrency 16", "sqlite/batch", "pgsql/queue:work", "pgsql/queue:work --concurrency 16", "pgsql/batch"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}

// TestQueueBenchWorkStrategy runs the queue:work row with --work-strategy delete-mark on MariaDB, two
// processes whose single-row claims share the host's bound: every job ran once, with the strategy
// asked for.
func TestQueueBenchWorkStrategy(t *testing.T) {
	my := testenv.MySQL(t)
	bin := filepath.Join(t.TempDir(), "artisan-go")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/artisan-go").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r := runBench(t, "--db", "mysql", "--mysql-dsn", my.DSN, "--jobs", "300", "--workers", "2", "--strategies", "none",
		"--bare=false", "--work-binary", bin, "--work-concurrency", "0", "--work-strategy", "delete-mark")
	if len(r.Rows) != 1 {
		t.Fatalf("%d rows, want the queue:work row only", len(r.Rows))
	}
	row := r.Rows[0]
	if row.Strategy != "queue:work --strategy delete-mark" || !strings.HasPrefix(row.Note, "strategy delete-mark,") {
		t.Fatalf("row %q (%s), want queue:work with delete-mark", row.Strategy, row.Note)
	}
	if row.Error != "" || row.Lost != 0 || row.Executions != 300 || row.LeftInTable != 0 {
		t.Errorf("row %+v: want 300 executions, 0 lost, nothing left", row)
	}
}

// TestQueueBenchPeers runs River and graphile-worker from internal/bench/peers on PostgreSQL beside the
// batch strategy: each peer ran every job once on the common clock.
func TestQueueBenchPeers(t *testing.T) {
	pg := testenv.Postgres(t)
	for _, tool := range []string{"go", "node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s is not on PATH: install it to run the peers (River needs go, graphile-worker node and npm)", tool)
		}
	}
	r := runBench(t, "--db", "pgsql", "--pgsql-dsn", pg.DSN, "--jobs", "300", "--workers", "2", "--strategies", "batch",
		"--bare=false", "--work-binary", "", "--peers", "--peers-dir", "../internal/bench/peers", "--peers-workers", "2")
	var got []string
	for _, row := range r.Rows {
		got = append(got, row.Strategy)
		if row.Error != "" || row.Lost != 0 || row.Duplicates != 0 || row.Executions != 300 || row.JobsPerSec <= 0 {
			t.Errorf("row %+v: want 300 executions, 0 lost, 0 duplicates", row)
		}
	}
	if want := []string{"batch", bench.RowRiver, bench.RowGraphile}; !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}

// TestQueueBenchLongTx runs a steady churn beside a held snapshot on PostgreSQL and SQLite: every job
// ran once, and the row has its first and last window, with PostgreSQL's dead tuples.
func TestQueueBenchLongTx(t *testing.T) {
	pg := testenv.Postgres(t)
	lite := testenv.SQLite(t)
	r := runBench(t, "--db", "sqlite,pgsql", "--pgsql-dsn", pg.DSN, "--sqlite-file", lite.DSN, "--rate", "400", "--jobs", "200",
		"--workers", "1", "--strategies", "batch", "--bare=false", "--work-binary", "", "--long-tx")
	if len(r.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(r.Rows))
	}
	for _, row := range r.Rows {
		if row.Error != "" || row.Lost != 0 || row.Duplicates != 0 || row.Executions != 200 || row.Steady == nil || row.Steady.WindowSeconds <= 0 {
			t.Errorf("row %+v (steady %+v): want 200 executions, 0 lost, 0 duplicates, long-transaction figures", row, row.Steady)
		}
		if row.Database == "pgsql" && row.Steady != nil && row.Steady.DeadRowsKind == "" {
			t.Errorf("pgsql row without dead tuples: %+v", row.Steady)
		}
	}
}

// TestQueueBenchPHPProducers dispatches a steady rate from two PHP processes of the Laravel app on
// SQLite: the batch strategy ran every job once, with pickup latencies from PHP's own insert times.
func TestQueueBenchPHPProducers(t *testing.T) {
	lite := testenv.SQLite(t)
	if _, err := exec.LookPath("php"); err != nil {
		testenv.Missing(t, "php is not on PATH: install php-cli (see README, Testing)")
	}
	r := runBench(t, "--db", "sqlite", "--sqlite-file", lite.DSN, "--rate", "200", "--jobs", "100", "--php-producers", "2",
		"--php-app", "../testdata/laravel", "--workers", "1", "--strategies", "batch", "--bare=false", "--work-binary", "")
	if len(r.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(r.Rows))
	}
	row := r.Rows[0]
	if row.Error != "" || row.Lost != 0 || row.Duplicates != 0 || row.Executions != 100 || row.P99Millis < 0 || row.Steady == nil {
		t.Fatalf("row %+v: want 100 executions, 0 lost, 0 duplicates, latencies and steady figures", row)
	}
}

// runBench runs queue:bench with args, quietly and as JSON, and returns its report; it fails the test
// unless the exit status is 0.
func runBench(t *testing.T, args ...string) bench.Report {
	t.Helper()
	var stdout, stderr bytes.Buffer
	status := Do(context.Background(), append(append([]string{"queue:bench"}, args...), "--format", "json", "--quiet"), nil, &stdout, &stderr)
	if status != 0 {
		t.Fatalf("queue:bench exit status %d\nstdout: %s\nstderr: %s", status, stdout.String(), stderr.String())
	}
	var r bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode JSON: %v\n%s", err, stdout.String())
	}
	return r
}

func TestQueueBenchBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--db", "oracle"}, {"--workers", "x"}, {"--db", "sqlite", "--repeat", "0"}, {"--db", "sqlite", "--long-tx"}, {"--format", "xml"}, {"--plot", "a.gif"}, {"--strategies", "nope", "--db", "sqlite"},
		{"--db", "sqlite", "--rate=-5"}, {"--db", "sqlite", "--php-producers", "4"}, {"--db", "sqlite", "--peers"},
	} {
		var stdout, stderr bytes.Buffer
		if status := Do(context.Background(), append([]string{"queue:bench"}, args...), nil, &stdout, &stderr); status != 2 || stderr.Len() == 0 {
			t.Errorf("%v: status %d, stderr %q; want 2 and a message", args, status, stderr.String())
		}
	}
}

// TestQueueBenchUnreachable runs on a server nobody listens on: the error alone, on stderr, and no
// table header or empty JSON report on stdout before it.
func TestQueueBenchUnreachable(t *testing.T) {
	t.Parallel()
	dsn := fmt.Sprintf("root@tcp(127.0.0.1:%d)/artisan_go_bench", testenv.FreePort(t))
	for _, format := range []string{"table", "json"} {
		var stdout, stderr bytes.Buffer
		status := Do(context.Background(), []string{"queue:bench", "--db", "mysql", "--mysql-dsn", dsn, "--format", format}, nil, &stdout, &stderr)
		if status != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "connection refused") {
			t.Errorf("--format %s: status %d, stdout %q, stderr %q; want 1, nothing on stdout, the refused connection on stderr", format, status, stdout.String(), stderr.String())
		}
	}
}

// TestQueueBenchRepeat runs every row three times: each row lists its three rates in the order they
// ran and reports the median one, and every run ran every job once.
func TestQueueBenchRepeat(t *testing.T) {
	t.Parallel()
	lite := testenv.SQLite(t)
	r := runBench(t, "--db", "sqlite", "--sqlite-file", lite.DSN, "--jobs", "300", "--workers", "1,2", "--repeat", "3",
		"--strategies", "batch", "--work-binary", "")
	if len(r.Rows) != 4 || r.Params.Repeat != 3 {
		t.Fatalf("%d rows, repeat %d; want 4 rows (bare and batch at 1 and 2 workers), repeat 3", len(r.Rows), r.Params.Repeat)
	}
	for _, row := range r.Rows {
		if len(row.Runs) != 3 {
			t.Fatalf("row %s × %d has runs %v, want 3", row.Strategy, row.Workers, row.Runs)
		}
		sorted := slices.Clone(row.Runs)
		slices.Sort(sorted)
		if row.JobsPerSec != sorted[1] || sorted[0] <= 0 {
			t.Errorf("row %s × %d: %v jobs/s, runs %v: want the median run", row.Strategy, row.Workers, row.JobsPerSec, row.Runs)
		}
		if row.Error != "" || row.Lost != 0 || row.Duplicates != 0 || row.Executions != 300 || row.LeftInTable != 0 {
			t.Errorf("row %+v: want 300 executions, 0 lost, 0 duplicates, nothing left", row)
		}
	}
}

// TestQueueBenchTimedOutRow gives a row far less time than its jobs need (a millisecond beyond the
// 4 ms its 400 jobs take to enqueue at 100,000 a second): the row reports its error, the jobs left (not
// lost), and a rate of the jobs that ran rather than of the jobs it was given.
func TestQueueBenchTimedOutRow(t *testing.T) {
	t.Parallel()
	lite := testenv.SQLite(t)
	var stdout, stderr bytes.Buffer
	status := Do(context.Background(), []string{"queue:bench", "--db", "sqlite", "--sqlite-file", lite.DSN, "--rate", "100000", "--jobs", "400",
		"--workers", "1", "--strategies", "batch", "--bare=false", "--work-binary", "", "--timeout", "1ms", "--format", "json", "--quiet"},
		nil, &stdout, &stderr)
	if status != 1 {
		t.Fatalf("queue:bench exit status %d, want 1 (a row failed)\nstderr: %s", status, stderr.String())
	}
	var r bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode JSON: %v\n%s", err, stdout.String())
	}
	if len(r.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(r.Rows))
	}
	row := r.Rows[0]
	if !strings.Contains(row.Error, "timed out") || row.LeftInTable == 0 || row.Executions+row.LeftInTable != 400 {
		t.Fatalf("row %+v: want a timeout with jobs left, executions and jobs left adding up to 400", row)
	}
	if row.Lost != 0 {
		t.Errorf("%d jobs lost, want 0: the %d left in the table did not run, and none is gone", row.Lost, row.LeftInTable)
	}
	if want := float64(row.Executions) / row.Seconds; row.JobsPerSec != want {
		t.Errorf("jobs/s %v, want the %d executions over %.2f s = %v", row.JobsPerSec, row.Executions, row.Seconds, want)
	}
}

// TestQueueBenchSteady runs a row at a steady rate: every job ran once, and the row's first and last
// windows carry the pickup, claim and insert figures.
func TestQueueBenchSteady(t *testing.T) {
	t.Parallel()
	lite := testenv.SQLite(t)
	r := runBench(t, "--db", "sqlite", "--sqlite-file", lite.DSN, "--rate", "400", "--jobs", "400", "--workers", "1",
		"--strategies", "batch", "--bare=false", "--work-binary", "")
	if len(r.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(r.Rows))
	}
	row := r.Rows[0]
	if row.Error != "" || row.Lost != 0 || row.Duplicates != 0 || row.Executions != 400 || row.Steady == nil {
		t.Fatalf("row %+v: want 400 executions, 0 lost, 0 duplicates, steady figures", row)
	}
	st := row.Steady
	// Every window (a quarter of the second the jobs take to enqueue) holds inserts and starts. A claim
	// counts in each window it overlaps, so one stalled across both (seconds, beside an insert loop
	// that holds SQLite's write lock on a machine whose fsyncs are slow) shows in both; a window may
	// still hold none while the worker was between claims.
	if st.P99FirstMS < 0 || st.P99LastMS < 0 || max(st.ClaimP99FirstMS, st.ClaimP99LastMS) < 0 || st.InsertMaxFirstMS <= 0 || st.InsertMaxLastMS <= 0 {
		t.Fatalf("steady figures %+v: want pickup and insert times in both windows, and claim times", st)
	}
}

// TestQueueBenchAppWrites times the Laravel application's own inserts beside a row on SQLite; with
// no application to run, the row says which flag to fix.
func TestQueueBenchAppWrites(t *testing.T) {
	t.Parallel()
	lite := testenv.SQLite(t)
	if _, err := exec.LookPath("php"); err != nil {
		testenv.Missing(t, "php is not on PATH: install php-cli (see README, Testing)")
	}
	r := runBench(t, "--db", "sqlite", "--sqlite-file", lite.DSN, "--jobs", "20000", "--app-writes", "--php-app", "../testdata/laravel",
		"--workers", "1", "--strategies", "batch", "--bare=false", "--work-binary", "")
	if len(r.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(r.Rows))
	}
	row := r.Rows[0]
	if row.Error != "" || row.Lost != 0 || row.Executions != 20000 {
		t.Fatalf("row %+v: want 20000 executions, none lost", row)
	}
	a := row.AppWrites
	if a == nil || a.Inserts == 0 || a.P50MS <= 0 || a.P99MS < a.P50MS || a.MaxMS < a.P99MS {
		t.Fatalf("app writes %+v: want inserts timed during the row", a)
	}
	var n int
	if err := lite.Open(t).QueryRow("select count(*) from bench_app_writes").Scan(&n); err != nil || n < a.Inserts {
		t.Fatalf("bench_app_writes holds %d rows (%v), want at least the %d timed", n, err, a.Inserts)
	}

	badRow := func(want string, args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		Do(context.Background(), append([]string{"queue:bench", "--db", "sqlite", "--sqlite-file", lite.DSN, "--jobs", "20000", "--app-writes",
			"--workers", "1", "--strategies", "batch", "--bare=false", "--work-binary", "", "--format", "json", "--quiet"}, args...), nil, &stdout, &stderr)
		var bad bench.Report
		if err := json.Unmarshal(stdout.Bytes(), &bad); err != nil || len(bad.Rows) != 1 || !strings.Contains(bad.Rows[0].Error, want) {
			t.Fatalf("%v: %v, rows %+v, stderr %s; want a row whose error says %q", args, err, bad.Rows, stderr.String(), want)
		}
	}
	badRow("--php-app", "--php-app", t.TempDir())
	// A writer that stops during the row leaves figures for part of it only: the row says why.
	fake := filepath.Join(t.TempDir(), "php")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho ready\necho 'SQLSTATE[HY000]: disk I/O error' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	badRow("disk I/O error", "--php-app", "../testdata/laravel", "--php-binary", fake)
}
