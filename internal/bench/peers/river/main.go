// Command river burns down no-op jobs with River (github.com/riverqueue/river, pgx v5 driver) on
// PostgreSQL, for queue:bench --peers: it creates River's tables in a schema of its own, inserts the
// jobs, starts the clients with the settings of River's own benchmark, and stops the clock when no
// unfinished job is left in river_job, that is when the last completion is committed. It prints one
// JSON object: jobs, seconds, executions, peak RSS.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// NoopArgs is the job: a number, as the Laravel no-op job carries one.
type NoopArgs struct {
	N int `json:"n"`
}

// Kind names the job kind.
func (NoopArgs) Kind() string { return "noop" }

// noopWorker counts its executions and does nothing else.
type noopWorker struct {
	river.WorkerDefaults[NoopArgs]
	executions *atomic.Int64
}

func (w *noopWorker) Work(ctx context.Context, j *river.Job[NoopArgs]) error {
	w.executions.Add(1)
	return nil
}

type result struct {
	System     string  `json:"system"`
	Jobs       int     `json:"jobs"`
	Workers    int     `json:"workers"`
	Seconds    float64 `json:"seconds"`
	Executions int64   `json:"executions"`
	PeakRSSMB  float64 `json:"peak_rss_mb"`
}

func main() {
	dsn := flag.String("dsn", "postgres://postgres@127.0.0.1:5432/artisan_go_bench?sslmode=disable", "PostgreSQL URL")
	schema := flag.String("schema", "river_bench", "schema for River's tables (dropped and created)")
	jobs := flag.Int("jobs", 10000, "jobs to burn down")
	workers := flag.Int("workers", 1, "River clients, each with its own connection pool")
	maxWorkers := flag.Int("max-workers", 2000, "MaxWorkers of the default queue per client (River's benchmark uses 2,000)")
	flag.Parse()
	if err := run(*dsn, *schema, *jobs, *workers, *maxWorkers); err != nil {
		fmt.Fprintln(os.Stderr, "river:", err)
		os.Exit(1)
	}
}

func run(dsn, schema string, jobs, workers, maxWorkers int) error {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return err
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	admin, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := admin.Exec(ctx, "drop schema if exists "+ident+" cascade; create schema "+ident); err != nil {
		return err
	}
	setupPool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer setupPool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(setupPool), nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var executions atomic.Int64
	clients := make([]*river.Client[pgx.Tx], workers)
	for i := range clients {
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return err
		}
		defer pool.Close()
		ws := river.NewWorkers()
		river.AddWorker(ws, &noopWorker{executions: &executions})
		clients[i], err = river.NewClient(riverpgxv5.New(pool), &river.Config{
			// River's own benchmark (cmd/river/riverbench) settings for throughput.
			FetchCooldown:     2 * time.Millisecond,
			FetchPollInterval: 20 * time.Millisecond,
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
			Workers:           ws,
		})
		if err != nil {
			return err
		}
	}
	params := make([]river.InsertManyParams, 0, 5000)
	for n := range jobs {
		params = append(params, river.InsertManyParams{Args: NoopArgs{N: n}})
		if len(params) == cap(params) || n == jobs-1 {
			if _, err := clients[0].InsertMany(ctx, params); err != nil {
				return fmt.Errorf("insert: %w", err)
			}
			params = params[:0]
		}
	}
	// The poll below is the bench's, not River's: keep it on the index however fresh the statistics.
	if _, err := admin.Exec(ctx, "set enable_seqscan = off"); err != nil {
		return err
	}
	start := time.Now()
	for _, c := range clients {
		if err := c.Start(ctx); err != nil {
			return err
		}
	}
	for {
		var one int
		// The unfinished states, so that the poll reads River's state index rather than every
		// completed row.
		err := admin.QueryRow(ctx, "select 1 from river_job where state in ('available', 'pending', 'retryable', 'running', 'scheduled') limit 1").Scan(&one)
		if err == pgx.ErrNoRows {
			break
		}
		if err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
	seconds := time.Since(start).Seconds()
	for _, c := range clients {
		if err := c.Stop(ctx); err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(result{System: "River", Jobs: jobs, Workers: workers, Seconds: seconds,
		Executions: executions.Load(), PeakRSSMB: peakRSS()})
}

// peakRSS returns this process's peak resident set (VmHWM) in MB.
func peakRSS() float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}
