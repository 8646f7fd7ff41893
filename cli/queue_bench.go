//go:build bench

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/internal/bench"
	"github.com/artisan-go/artisan-go/laravel"
)

// queueBenchSummary is queue:bench's line in the command list.
const queueBenchSummary = "Measure the claim strategies against bare SQL and php artisan queue:work on real tables"

func runQueueBench(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("queue:bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbs := fs.String("db", "mysql,pgsql,sqlite", "databases to run on (comma-separated: mysql, pgsql, sqlite)")
	mysqlDSN := fs.String("mysql-dsn", bench.DefaultDSN(laravel.MySQL), "MySQL/MariaDB DSN; the database is created when missing")
	pgsqlDSN := fs.String("pgsql-dsn", bench.DefaultDSN(laravel.Postgres), "PostgreSQL URL; the database is created when missing")
	sqliteFile := fs.String("sqlite-file", "", "SQLite file (default: a fresh temporary file)")
	jobs := fs.Int("jobs", 10000, "no-op jobs per row")
	repeat := fs.Int("repeat", 1, "run every row this many times, in rounds, and report each row's median run (the slower middle one for an even count) with the range of its rates")
	workers := fs.String("workers", "1,4,16", "worker counts (comma-separated); each Go worker has its own connection")
	concurrency := fs.Int("concurrency", 128, "jobs in flight per Go worker")
	batch := fs.Int("batch", 0, "rows per claim for the batch strategy and the bare SQL loop (0: the concurrency, as queue:work)")
	strategies := fs.String("strategies", strings.Join(laravel.Strategies(), ","), "claim strategies to measure in the bench process (none: only the other rows)")
	php := fs.Bool("php", false, "add a baseline row of real php artisan queue:work processes on the same table")
	phpDB := fs.String("php-db", "", "databases to run the PHP row on (default: every --db)")
	phpWorkers := fs.Int("php-workers", 10, "PHP queue:work processes in the baseline row")
	phpApp := fs.String("php-app", "testdata/laravel", "the Laravel application the PHP workers run")
	phpBin := fs.String("php-binary", "php", "the php binary")
	self, _ := os.Executable()
	workBinary := fs.String("work-binary", self, "the artisan-go binary whose queue:work runs as separate processes in rows of their own (empty: no such rows)")
	workConcurrency := fs.Int("work-concurrency", 128, "also run the queue:work row at this --concurrency (0: only at its defaults)")
	workStrategy := fs.String("work-strategy", "", "the --strategy of the queue:work rows (empty: the command chooses)")
	peersDir := fs.String("peers-dir", "internal/bench/peers", "River's Go module and graphile-worker's npm package, for --peers")
	peerWorkers := fs.String("peers-workers", "1,4", "worker counts of the peers' rows (a graphile-worker process holds up to 25 connections; PostgreSQL allows 100 by default)")
	peersOn := fs.Bool("peers", false, "on PostgreSQL, add rows of River and graphile-worker burning down the same jobs (needs go and node; see --peers-dir)")
	producers := fs.Int("php-producers", 0, "with --rate: dispatch from this many php artisan processes of --php-app instead of from the bench")
	appWrites := fs.Bool("app-writes", false, "time the application's own writes beside each row: a php artisan process of --php-app inserting a row every 10 ms")
	longTx := fs.Bool("long-tx", false, "hold a REPEATABLE READ snapshot open beside each row (with --rate) and compare the row's first and last minute")
	bare := fs.Bool("bare", true, "add a bare batched claim+delete SQL loop row per worker count (the ceiling)")
	rate := fs.Float64("rate", 0, "enqueue at this many jobs/s while the workers drain (0: enqueue all first)")
	sleep := fs.Duration("sleep", 10*time.Millisecond, "worker sleep when the queue is empty")
	legacy := fs.Bool("legacy-index", false, "Laravel 5.4's (queue, reserved_at) index and plain FOR UPDATE claims")
	serverVersion := fs.String("server-version", "", "take the servers for this version, as Laravel's version connection key does (e.g. 10.5.0-MariaDB: no SKIP LOCKED); it decides the locks of every claim in the bench process")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up on a row after this long (with --rate, beyond the time its jobs take to enqueue)")
	format := fs.String("format", "table", "output format: table or json")
	plot := fs.String("plot", "", "also draw jobs/s per strategy and worker count to this .svg or .png file")
	workerLog := fs.String("worker-log", "", "log the Go workers' messages at this level and above (debug, info, warn, error) to standard error")
	quiet := fs.Bool("quiet", false, "no progress lines on standard error")
	from := fs.String("from", "", "render JSON reports of earlier runs (comma-separated, joined) instead of running, with --format and --plot")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the run to this file")
	if err := parseAsSymfony(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "artisan-go queue:bench: %v\n", err)
		return 2
	}
	if *repeat < 1 {
		return fail(fmt.Errorf("--repeat %d: run every row at least once", *repeat))
	}
	if *format != "table" && *format != "json" {
		return fail(fmt.Errorf("--format %q: use table or json", *format))
	}
	if ext := filepath.Ext(*plot); *plot != "" && ext != ".svg" && ext != ".png" {
		return fail(fmt.Errorf("--plot %q: give a file name ending in .svg or .png", *plot))
	}
	p := bench.Params{
		Jobs: *jobs, Repeat: *repeat, Concurrency: *concurrency, Batch: *batch, Rate: *rate, Sleep: *sleep, Bare: *bare,
		PHPApp: *phpApp, PHPBinary: *phpBin, LegacyIndex: *legacy, ServerVersion: *serverVersion, Timeout: *timeout,
		WorkBinary: *workBinary, WorkConcurrency: *workConcurrency, WorkStrategy: *workStrategy, LongTx: *longTx, PHPProducers: *producers, AppWrites: *appWrites,
	}
	if *workStrategy != "" && !slices.Contains(laravel.Strategies(), *workStrategy) {
		return fail(fmt.Errorf("--work-strategy %q: use one of %s", *workStrategy, strings.Join(laravel.Strategies(), ", ")))
	}
	if *peersOn {
		p.PeersDir = *peersDir
		for _, s := range splitList(*peerWorkers) {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fail(fmt.Errorf("--peers-workers %q: give whole numbers separated by commas, e.g. 1,4", *peerWorkers))
			}
			p.PeerWorkers = append(p.PeerWorkers, n)
		}
	}
	if *workerLog != "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(*workerLog)); err != nil {
			return fail(fmt.Errorf("--worker-log %q: use debug, info, warn or error", *workerLog))
		}
		p.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	}
	if *php {
		p.PHP = *phpWorkers
		p.PHPDatabases = splitList(*phpDB)
	}
	for _, s := range splitList(*strategies) {
		p.Strategies = append(p.Strategies, s)
	}
	for _, s := range splitList(*workers) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fail(fmt.Errorf("--workers %q: give whole numbers separated by commas, e.g. 1,4,16", *workers))
		}
		p.Workers = append(p.Workers, n)
	}
	for _, d := range splitList(*dbs) {
		switch laravel.Dialect(d) {
		case laravel.MySQL, laravel.MariaDB:
			p.Databases = append(p.Databases, bench.Database{Dialect: laravel.MySQL, DSN: *mysqlDSN})
		case laravel.Postgres:
			p.Databases = append(p.Databases, bench.Database{Dialect: laravel.Postgres, DSN: *pgsqlDSN})
		case laravel.SQLite:
			p.Databases = append(p.Databases, bench.Database{Dialect: laravel.SQLite, DSN: *sqliteFile})
		default:
			return fail(fmt.Errorf("--db %q: use mysql, pgsql and sqlite, separated by commas", d))
		}
	}
	if !*quiet {
		p.Progress = func(format string, args ...any) {
			fmt.Fprintf(stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fail(fmt.Errorf("--cpuprofile: %w", err))
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(fmt.Errorf("--cpuprofile: %w", err))
		}
		defer pprof.StopCPUProfile()
	}
	var report *bench.Report
	var err error
	if *from != "" {
		report, err = readReports(splitList(*from))
	} else {
		report, err = bench.Run(ctx, p)
	}
	if err != nil && report == nil {
		return fail(err)
	}
	if err != nil && len(report.Rows) == 0 {
		// No row ran (a database that cannot be reached, say): the error alone, with no empty report.
		fmt.Fprintf(stderr, "artisan-go queue:bench: %v\n", err)
		return 1
	}
	if *format == "json" {
		_ = report.WriteJSON(stdout)
	} else {
		_ = report.WriteTable(stdout)
	}
	if *plot != "" {
		f, perr := os.Create(*plot)
		if perr == nil {
			write := report.WriteSVG
			if filepath.Ext(*plot) == ".png" {
				write = report.WritePNG
			}
			perr = errors.Join(write(f), f.Close())
		}
		if perr != nil {
			return fail(fmt.Errorf("--plot: %w", perr))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:bench: %v\n", err)
		return 1
	}
	for _, row := range report.Rows {
		if row.Error != "" || row.Lost > 0 || row.Duplicates > 0 {
			return 1
		}
	}
	return 0
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// readReports reads reports that --format json wrote and joins their rows into one, in order.
func readReports(paths []string) (*bench.Report, error) {
	var all *bench.Report
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		var r bench.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("--from %s: not a queue:bench JSON report: %w", path, err)
		}
		if all == nil {
			all = &r
			continue
		}
		all.Rows = append(all.Rows, r.Rows...)
		for k, v := range r.Servers {
			all.Servers[k] = v
		}
		all.Params.Jobs = max(all.Params.Jobs, r.Params.Jobs)
	}
	return all, nil
}
