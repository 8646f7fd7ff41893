//go:build bench

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
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
	my := testenv.MySQL(t)
	lite := testenv.SQLite(t)
	plot := filepath.Join(t.TempDir(), "bench.svg")
	var stdout, stderr bytes.Buffer
	status := Do(context.Background(), []string{"queue:bench", "--db", "sqlite,mysql", "--mysql-dsn", my.DSN,
		"--sqlite-file", lite.DSN, "--jobs", "200", "--workers", "1,3", "--format", "json", "--plot", plot, "--quiet"},
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

// TestQueueBenchPostgres checks PostgreSQL's rows: both bare loops (as PostgreSQL plans Laravel's
// claim, and walking the primary key) and the batch strategy, each running every job once.
func TestQueueBenchPostgres(t *testing.T) {
	pg := testenv.Postgres(t)
	var stdout, stderr bytes.Buffer
	status := Do(context.Background(), []string{"queue:bench", "--db", "pgsql", "--pgsql-dsn", pg.DSN,
		"--jobs", "200", "--workers", "2", "--strategies", "batch", "--format", "json", "--quiet"}, nil, &stdout, &stderr)
	if status != 0 {
		t.Fatalf("queue:bench exit status %d\nstdout: %s\nstderr: %s", status, stdout.String(), stderr.String())
	}
	var r bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode JSON: %v\n%s", err, stdout.String())
	}
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

func TestQueueBenchBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--db", "oracle"}, {"--workers", "x"}, {"--format", "xml"}, {"--plot", "a.gif"}, {"--strategies", "nope", "--db", "sqlite"},
	} {
		var stdout, stderr bytes.Buffer
		if status := Do(context.Background(), append([]string{"queue:bench"}, args...), nil, &stdout, &stderr); status != 2 || stderr.Len() == 0 {
			t.Errorf("%v: status %d, stderr %q; want 2 and a message", args, status, stderr.String())
		}
	}
}
