package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/arraycache"
	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/filecache"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/memcached"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/redislock"
	"github.com/artisan-go/artisan-go/worker"
)

// workDefaults are the worker settings of an application that sets none, for queue:work's --help.
var workDefaults = config.Default().Worker

// defaultIs is " [default: v]" (and more), as Symfony's help shows an option's default.
func defaultIs(v any, more ...string) string {
	return fmt.Sprintf(" [default: %v%s]", v, strings.Join(more, ""))
}

// workFlags maps each queue:work option to the configuration key it overrides.
var workFlags = []struct {
	name, key, usage string
	boolean          bool
}{
	{"queue", "worker.queues", "queues to work, in priority order (comma-separated) [default: the connection's queue]", false},
	{"sleep", "worker.sleep", "seconds to sleep when no job is available" + defaultIs(workDefaults.Sleep.Seconds()), false},
	{"tries", "worker.tries", "attempts before a job fails, when the job does not say (0 is unlimited)" + defaultIs(workDefaults.Tries, "; 0 before Laravel 6"), false},
	{"timeout", "worker.timeout", "seconds a job may run (0 is no limit)" + defaultIs(workDefaults.Timeout.Seconds()), false},
	{"backoff", "worker.backoff", "seconds to wait before retrying a job that threw (comma list, by attempt) [default: 0]", false},
	{"max-jobs", "worker.max_jobs", "stop after this many jobs (0 is no limit) [default: 0]", false},
	{"max-time", "worker.max_time", "stop after this many seconds (0 is no limit) [default: 0]", false},
	{"stop-when-empty", "worker.stop_when_empty", "stop when the queues are empty", true},
	{"stop-when-empty-for", "worker.stop_when_empty_for", "stop once the queues have been empty this many seconds since the last job finished (0 never; Laravel 11.53+, 12.60+, 13.10+)", false},
	{"once", "worker.once", "work one job and stop", true},
	{"rest", "worker.rest", "seconds to rest after each job [default: 0]", false},
	{"memory", "worker.memory_mb", "memory limit in megabytes (0 disables the check)" + defaultIs(workDefaults.MemoryMB), false},
	{"name", "worker.name", "the worker's name" + defaultIs(workDefaults.Name), false},
	{"force", "worker.force", "work even in maintenance mode", true},
	{"concurrency", "worker.concurrency", "jobs run at once by this process (1 runs one job at a time, as PHP's worker)" + defaultIs(workDefaults.Concurrency), false},
	{"retry-after", "worker.retry_after", "the connection's retry_after in seconds (keep it equal to config/queue.php's; a difference is warned of)", false},
	{"claim-batch", "worker.claim_batch", "rows a batching claim strategy takes per round trip (0: the concurrency)", false},
	{"claim-lanes", "worker.claim_lanes", "claim-and-delete cycles the batch strategy runs side by side (0: two for one process per jobs table, one for the others; 1: one)", false},
	{"strategy", "worker.strategy", "claim strategy (" + strings.Join(laravel.Strategies(), ", ") + "); empty chooses", false},
	{"metrics-addr", "metrics.addr", "host:port serving /metrics, /healthz and /readyz (empty: none)", false},
}

func runQueueWork(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("queue:work", flag.ContinueOnError)
	fs.SetOutput(stderr)
	envFile := fs.String("env-file", "", "a Laravel .env file to read (DB_*, QUEUE_CONNECTION, APP_KEY, ...)")
	jsonLog := fs.Bool("json", false, "print each job's events as JSON lines on standard output, as Laravel 11.27+ does; the log becomes JSON too")
	configFile := fs.String("config", "", "a YAML configuration file")
	values := map[string]*string{}
	bools := map[string]*bool{}
	for _, f := range workFlags {
		if f.boolean {
			bools[f.name] = fs.Bool(f.name, false, f.usage)
		} else {
			values[f.name] = fs.String(f.name, "", f.usage)
		}
	}
	// Laravel's deprecated options, which old supervisor programs still pass: --daemon does nothing,
	// and --delay counts as PHP's max() of it and --backoff.
	fs.Bool("daemon", false, "deprecated, as in Laravel: does nothing")
	delay := fs.String("delay", "", "deprecated, as in Laravel: seconds to wait before retrying a job that threw; --backoff is PHP's max() of the two")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: artisan-go queue:work [connection] [options]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, symfonyOptionsHelp)
	}
	overrides := map[string]any{}
	positional := 0
	if err := parseWithPositional(fs, args, func(arg string) { overrides["connection"] = arg; positional++ }); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1 // artisan's status for an option the command does not have
	}
	if positional > 1 {
		fmt.Fprintln(stderr, `artisan-go queue:work: Too many arguments to "queue:work" command, expected arguments "connection".`)
		return 1
	}
	fs.Visit(func(fl *flag.Flag) {
		for _, f := range workFlags {
			if f.name != fl.Name {
				continue
			}
			switch {
			case f.boolean:
				overrides[f.key] = *bools[f.name]
			case *values[f.name] != "": // an option given without its value keeps the default, as in PHP
				overrides[f.key] = *values[f.name]
			}
		}
	})
	if *delay != "" {
		backoff := "0" // Laravel's default for --backoff
		if b, ok := overrides["worker.backoff"].(string); ok {
			backoff = b
		}
		overrides["worker.backoff"] = phpMax(backoff, *delay)
	}
	if *jsonLog {
		overrides["log.format"] = "json"
	}
	switch opts := consoleOptionsOf(ctx); {
	case opts.verbosity == 3:
		overrides["log.level"] = "debug"
	case opts.quiet:
		overrides["log.level"] = "warn" // no line per job, as -q prints none; warnings and failures stay
	}
	cfg, err := loadConfig(ctx, *envFile, *configFile, overrides)
	if err == nil {
		err = cfg.CheckWorkable()
	}
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:work: %v\n", err)
		return 1
	}
	out := newLogWriter(stderr, cfg.Log.Flush)
	log := newLogger(cfg.Log, out)
	laravel.SetDriverLog(log) // the MySQL driver's own lines, at debug level
	fatal := func(err error) int {
		out.Close() // the log lines before the error come first
		fmt.Fprintf(stderr, "artisan-go queue:work: %v\n", err)
		return 1
	}
	defer out.Close()
	for _, warning := range cfg.Warnings() {
		log.Warn(warning)
	}
	ln, err := listenMetrics(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:work: %v\n", err)
		return 1
	}
	if ln != nil {
		defer ln.Close()
	}
	conn, err := openConn(ctx, cfg)
	if err != nil {
		return fatal(err)
	}
	defer conn.Close()
	var events func(worker.RunEvent)
	switch opts := consoleOptionsOf(ctx); {
	case opts.quiet: // -q writes nothing on standard output, JSON lines included
	case *jsonLog:
		events = jsonEvents(stdout, outputTimezone(cfg))
	case cfg.Log.Console == "laravel":
		lines := newLogWriter(stdout, cfg.Log.Flush)
		defer lines.Close()
		events = startConsole(lines, stdout, cfg, opts)
	}
	status, err := work(ctx, cfg, conn, handlers.Default(), log, ln, events)
	if err != nil {
		return fatal(err)
	}
	return status
}

// parseWithPositional parses flags that may come before or after positional arguments, as artisan
// accepts `queue:work database --queue=high` and `queue:work --queue=high database`.
func parseWithPositional(fs *flag.FlagSet, args []string, positional func(string)) error {
	args = emptyValues(fs, args)
	for {
		if err := parseAsSymfony(fs, args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return nil
		}
		positional(rest[0])
		args = rest[1:]
	}
}

// parseAsSymfony parses args with fs, and words an unknown option as Symfony's console does
// ('The "--bogus" option does not exist.') instead of the flag package's message and usage.
func parseAsSymfony(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	name, unknown := strings.CutPrefix(fmt.Sprint(err), "flag provided but not defined: ")
	empty, valueless := "", false
	if rest, ok := strings.CutPrefix(fmt.Sprint(err), `invalid value "" for flag -`); ok {
		empty, _, _ = strings.Cut(rest, ":")
		valueless = true
	}
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
	case valueless:
		// --delay -5, or --tries at the end: Symfony takes no value from an argument starting with "-".
		fmt.Fprintf(out, "The \"--%s\" option requires a value (write --%s=VALUE for one starting with \"-\").\n", empty, empty)
	case unknown:
		dashes := "--"
		if len(name) == 2 { // -x
			dashes = "-"
		}
		fmt.Fprintf(out, "The \"%s%s\" option does not exist.\n", dashes, strings.TrimLeft(name, "-"))
	default:
		fmt.Fprintln(out, err)
		fs.Usage()
	}
	return err
}

// emptyValues gives an option that takes a value, written without one before another option or at
// the end (--queue --range=1-2), the empty value, as Symfony's parser does: the next argument is its
// value only when it does not start with "-".
func emptyValues(fs *flag.FlagSet, args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' || strings.Contains(a, "=") {
			continue
		}
		f := fs.Lookup(strings.TrimLeft(a, "-"))
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 == len(out) || len(out[i+1]) > 1 && out[i+1][0] == '-' {
			out[i] = a + "="
		}
	}
	return out
}

// appDir is the working directory when no .env file names the application's and it is a Laravel
// application's (it holds artisan), as a container that sets the environment runs
// `php artisan queue:work` there without a .env file; "" otherwise.
func appDir(envFile string) string {
	if envFile != "" {
		return ""
	}
	if st, err := os.Stat("artisan"); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	return dir
}

// loadConfig reads the configuration (defaults < .env < YAML < environment < flags) and validates it.
// Without envFile it reads the working directory's .env when there is one, as artisan reads the
// application's from its directory. Symfony's --env names the application environment and picks
// .env.<env> when it exists; else, as Laravel's LoadEnvironmentVariables does, an APP_ENV in the
// process environment picks .env.<APP_ENV> when it exists.
func loadConfig(ctx context.Context, envFile, configFile string, overrides map[string]any) (*config.Config, error) {
	if envFile == "" {
		// artisan reads base_path('.env'), and it is run from the application's directory.
		if st, err := os.Stat(".env"); err == nil && st.Mode().IsRegular() {
			if abs, err := filepath.Abs(".env"); err == nil {
				envFile = abs
			}
		}
	}
	given := envFile
	if env := consoleOptionsOf(ctx).env; env != "" {
		envFile = environmentFile(envFile, env)
		if overrides == nil {
			overrides = map[string]any{}
		}
		overrides["app.env"] = env
	}
	if appEnv, ok := config.LaravelEnv(os.Getenv("APP_ENV")); envFile == given && ok && appEnv != "" && appEnv != "0" && appEnv != "false" {
		envFile = environmentFile(envFile, appEnv)
	}
	cfg, err := config.Load(config.LoadParams{EnvFile: envFile, ConfigFile: configFile, Environ: os.Environ(), Overrides: overrides, AppDir: appDir(envFile)})
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// newLogger builds the worker's log: text or JSON lines at the configured level.
func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openConn opens the database the configuration names; when no .env file was read, its error says so.
func openConn(ctx context.Context, cfg *config.Config) (*laravel.Conn, error) {
	conn, err := laravel.Open(ctx, laravel.OpenParams{
		Dialect: laravel.Dialect(cfg.DB.Driver), DSN: cfg.DB.DSN, Host: cfg.DB.Host, Port: cfg.DB.Port,
		Database: cfg.DB.Database, Username: cfg.DB.Username, Password: cfg.DB.Password,
		Socket: cfg.DB.Socket, Schema: cfg.DB.Schema, ServerVersion: cfg.DB.Version,
		SSL: laravel.TLSParams{Mode: cfg.DB.SSLMode, RootCert: cfg.DB.SSLRootCert, Cert: cfg.DB.SSLCert, Key: cfg.DB.SSLKey, MySQLCA: cfg.DB.SSLCA},
		Tables: laravel.Tables{
			Jobs: cfg.Tables.Jobs, FailedJobs: cfg.Tables.FailedJobs, JobBatches: cfg.Tables.JobBatches,
			Cache: cfg.Tables.Cache, CacheLocks: cfg.Tables.CacheLocks,
		},
		TablePrefix: cfg.DB.Prefix, PrefixIndexes: cfg.DB.PrefixIndexes,
		CachePrefix:  cfg.Cache.Prefix,
		MaxOpenConns: poolSize(cfg.Worker.Concurrency),
		// A DB_DATABASE that names no file is a wrong path, as Laravel's SQLite connector says; an empty
		// database created there would only hide it behind "table jobs does not exist".
		RequireSQLiteFile: true,
	})
	switch {
	case err == nil:
	case cfg.CachedConfig() != "":
		err = fmt.Errorf("%w (the database settings were read from the cached configuration %s, not from .env, as PHP reads them: after changing .env, run php artisan config:cache again)", err, cfg.CachedConfig())
	case cfg.EnvFile() == "" && appDir("") != "":
		err = fmt.Errorf("%w (the application's directory %s has no .env file: the database settings came from the environment and Laravel's defaults; set DB_CONNECTION, DB_DATABASE and the others as PHP's workers have them, or pass --env-file)", err, appDir(""))
	case cfg.EnvFile() == "":
		err = fmt.Errorf("%w (no .env file was read: run artisan-go from the application's directory, or pass --env-file /path/to/app/.env)", err)
	}
	return conn, err
}

// maxPoolSize bounds a worker's database connections whatever its concurrency: claims and grouped
// completions need a few, and sixteen processes stay below a default MariaDB's 151 connections.
const maxPoolSize = 8

// poolSize is the connection pool of a worker running concurrency jobs at once: one connection per
// job and two more (a claim, a renewal), up to maxPoolSize. Completions that find every connection
// busy wait for one, as they would wait for the server's own locks.
func poolSize(concurrency int) int { return min(max(concurrency, 1)+2, maxPoolSize) }

// work builds the queue, the handlers and the worker from the configuration and runs the worker.
// ln serves the metrics when it is not nil.
func work(ctx context.Context, cfg *config.Config, conn *laravel.Conn, reg *handlers.Registry, log *slog.Logger, ln net.Listener, events func(worker.RunEvent)) (int, error) {
	cs, err := openCacheStore(ctx, cfg)
	if err != nil {
		return 1, err
	}
	if cs == nil && cfg.Cache.InProcess() {
		// The array store: this process's own, as each PHP worker's is (a warning at start says so).
		a := arraycache.New(nil)
		cs = &cacheStore{locks: a, values: a, close: func() {}}
	}
	defer cs.Close()
	for _, d := range cs.Down() {
		log.Warn("a cache server does not answer; the keys PHP keeps there (queue:restart, paused queues, locks) cannot be read until it does", "error", d)
	}
	op, err := newOperating(ctx, cfg, conn, reg, log, ln)
	if err != nil {
		return 1, err
	}
	uniqueStores, closeStores, err := openUniqueStores(ctx, cfg)
	if err != nil {
		return 1, err
	}
	defer closeStores()
	maintenance, closeMaintenance, err := openMaintenanceStore(ctx, cfg, conn, log)
	if err != nil {
		return 1, err
	}
	defer closeMaintenance()
	w, q, err := newWorker(cfg, conn, reg, log, cs, uniqueStores, maintenance, op.observer(), events)
	if err != nil {
		return 1, err
	}
	if msg, err := uuidMismatch(ctx, cfg, conn); err == nil && msg != "" {
		log.Warn(msg)
	}
	// Checked before the first claim: jobs that run but can never complete would run again and again.
	if err := laravel.CheckGrants(ctx, conn, laravel.GrantsParams{
		FailedJobs: cfg.Failed.Driver != "null", Cache: cfg.Cache.Store == "database", Batches: true,
	}); err != nil {
		return 1, err
	}
	if err := laravel.CheckJobsTable(ctx, conn); err != nil {
		return 1, err
	}
	if cfg.Cache.Store == "database" {
		// PHP's worker reads the restart signal from the store first, and stops on the error.
		var missing *laravel.MissingTableError
		if _, _, err := conn.CacheGet(ctx, "illuminate:queue:restart"); errors.As(err, &missing) {
			return 1, fmt.Errorf("%w (the cache store is database, CACHE_DRIVER): without it php artisan queue:restart cannot stop this worker", missing)
		}
	}
	if ok, err := conn.BatchesTableExists(ctx); err == nil && !ok && cfg.LaravelAtLeast(8, 0) {
		log.Warn("the table job_batches does not exist: a job of a Bus::batch() would run here and stay reserved, its batch never counted; if the application dispatches batches, run php artisan queue:batches-table && php artisan migrate",
			"table", conn.Tables().JobBatches)
	}
	if skew, err := laravel.ClockSkew(ctx, conn, laravel.ClockSkewParams{}); err == nil && skew.Abs() >= laravel.MaxClockSkew {
		log.Warn("this machine's clock is off the database server's: claims compare reserved_at and available_at with the worker's clock, as Laravel's do, so this worker takes jobs early (ahead) or late (behind) by that much, and may take a running job from another worker before retry_after; synchronise the clocks (NTP)",
			"ahead_by", skew.Round(time.Millisecond))
	}
	opCtx, stopOp := context.WithCancel(context.WithoutCancel(ctx))
	defer op.stop()
	defer stopOp()
	if err := op.start(opCtx, w, w.Config(), conn); err != nil {
		return 1, err
	}
	defer pauseSignals(w)()
	if ctx.Value(stopSignalsKey{}) != nil {
		defer stopSignals(w, log)()
	}
	if cfg.Worker.MemoryMB == 0 {
		log.Info("--memory 0: no memory limit; PHP's worker reads 0 as a limit every process is past and stops after its first job")
	}
	defer worker.TuneGC(cfg.Worker.MemoryMB)()
	status, err := w.Run(ctx)
	// Bounded: across a network that drops packets a statement waits for TCP to give up (minutes);
	// what it leaves reserved runs again after retry_after.
	sctx, cancelSettle := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancelSettle()
	if rerr := laravel.Settle(sctx, q); rerr != nil {
		log.Warn("settle the queue: give back prefetched jobs, sweep marked ones", "error", rerr)
	}
	st := w.Stats()
	if st.Refused > 0 && err == nil {
		// Nothing is lost (the rows stay reserved), but the worker did not finish what it ran: a
		// supervisor, a deploy script or a CI step must see it.
		status = 1
		err = fmt.Errorf("the database refused the completion of %d job(s) (COMPLETION REFUSED above): their rows stay reserved and run again after retry_after; fix the cause the error names (a grant, a table, a trigger, a value the column does not hold) before then", st.Refused)
	}
	log.Info("artisan-go worker stopped", "status", status, "processed", st.Processed, "deleted", st.Deleted, "released", st.Released,
		"failed", st.Failed, "left_for_php", st.LeftForPHP, "moved", st.Moved, "chained", st.ChainDispatched, "lost", st.Lost,
		"reapplied", st.Reapplied, "unapplied", st.Unapplied)
	return status, err
}

// settleTimeout bounds the give-back and sweep after the worker stops.
const settleTimeout = 10 * time.Second

// claimBatch is the batch size a batching strategy uses: worker.claim_batch, or by default the
// worker's concurrency, so that a process reserves at most as many rows as it can run at once; and
// never more rows than --once (one job) or --max-jobs let the process run.
func claimBatch(w config.Worker) int {
	n := w.ClaimBatch
	if n < 1 {
		n = max(w.Concurrency, 1)
	}
	if w.Once {
		n = 1
	}
	if w.MaxJobs > 0 {
		n = min(n, w.MaxJobs)
	}
	return n
}

// claimLanes is how many claim-and-delete cycles the queue runs for the worker's slots (see
// laravel.QueueParams.Lanes); 1 for a strategy without lanes.
func claimLanes(q laravel.Queue, wc worker.Config) int {
	l, ok := q.(interface{ LanesFor(slots int) int })
	if !ok {
		return 1
	}
	return l.LanesFor(wc.Slots())
}

// newWorker wires a worker for the configuration: the claim strategy, the routes, the keyring, and
// the cache store when it is Redis, files or memcached (cs, nil for the database store).
func newWorker(cfg *config.Config, conn *laravel.Conn, reg *handlers.Registry, log *slog.Logger, cs *cacheStore, uniqueStores map[string]worker.LockReleaser, maintenance worker.CacheStore, obs worker.Observer, events func(worker.RunEvent)) (*worker.Worker, laravel.Queue, error) {
	q, why, err := laravel.OpenQueue(context.Background(), conn, laravel.QueueParams{Strategy: cfg.Worker.Strategy, Batch: claimBatch(cfg.Worker), Lanes: cfg.Worker.ClaimLanes})
	if err != nil {
		return nil, nil, err
	}
	reg = reg.Clone() // the routes are this worker's: a second worker in the process adds them again
	if err := addRoutes(reg, cfg.Routes); err != nil {
		return nil, nil, err
	}
	// An APP_KEY the cipher cannot use is a warning (config.Warnings), not a reason to stop: PHP's worker
	// runs every job but the encrypted ones, which fail with its encrypter's exception, and so does this.
	var kr *payload.Keyring
	var krErr error
	if cfg.App.Key != "" {
		kr, krErr = payload.NewKeyring(cfg.App.Key, cfg.App.PreviousKeys, cfg.App.Cipher)
	}
	wc, err := workerConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	pooled, perr := conn.TransactionPooled(pctx)
	cancel()
	log.Info("artisan-go worker starting", "connection", wc.Connection, "queues", strings.Join(wc.Queues, ","),
		"strategy", q.Strategy(), "strategy_reason", why, "dialect", conn.Dialect(), "database", conn.Where(), "table", conn.Tables().Jobs,
		"cache_store", cfg.Cache.Store, "cache_prefix", cfg.Cache.Prefix, "server", conn.ServerVersion(),
		"galera", conn.InCluster(), "transaction_pooler", pooled, "laravel", wc.LaravelVersion, "concurrency", wc.Concurrency,
		"claim_batch", claimBatch(cfg.Worker), "claim_lanes", claimLanes(q, wc))
	if perr != nil {
		log.Warn("could not tell whether a transaction pooler stands between the worker and the server", "err", perr)
	}
	if f := cfg.CachedConfig(); f != "" {
		log.Info("the application's configuration is read from its cache (php artisan config:cache), as PHP reads it, not from .env; cache it again after changing .env", "file", f)
	}
	if len(reg.Classes()) == 0 {
		log.Warn("no handlers are registered and no routes are configured: every job is left for PHP workers; add routes to the configuration, or build a binary that registers Go handlers")
	}
	p := worker.Params{Queue: q, Conn: conn, Registry: reg, Keyring: kr, KeyringErr: krErr, Config: wc, Logger: log, Observer: obs, Events: events, UniqueStores: uniqueStores, MaintenanceStore: maintenance}
	switch {
	case cs != nil:
		p.Locks, p.Cache = cs.locks, cs.values
	case cfg.Cache.Store != "database":
		log.Warn("the cache store is not the database, redis, file or memcached store: queue:restart signals, maxExceptions counters and unique locks are not seen",
			"cache_store", cfg.Cache.Store)
	}
	w, err := worker.New(p)
	return w, q, err
}

// cacheStore is the application's cache store when it is not the database: Redis (its lock and
// cache connections), files or memcached.
type cacheStore struct {
	locks  worker.LockReleaser // unique locks; also a worker.LockStore for job middleware
	values cacheValues
	// rawNumbers: the store keeps numbers as they are (RedisStore), not PHP-serialized.
	rawNumbers bool
	close      func()
	// down lists the servers of a pool that did not answer at start-up (memcached), each with its error.
	down []string
}

// cacheValues is a cache store's values as the worker and the signal commands use them.
type cacheValues interface {
	worker.CacheStore
	CacheForever(ctx context.Context, key, value string) error
}

// Down lists the servers that did not answer when the store opened; a nil store has none.
func (c *cacheStore) Down() []string {
	if c == nil {
		return nil
	}
	return c.down
}

// Close closes the store's connections; a nil store has none.
func (c *cacheStore) Close() {
	if c != nil {
		c.close()
	}
}

// redisTLS is the TLS configuration of a Redis connection over TLS (nil for a plain one): the
// server's name checked against REDIS_HOST, by the system's authorities or those of
// cache.redis.ca_file.
func redisTLS(r config.Redis) (*tls.Config, error) {
	if !r.TLS {
		return nil, nil
	}
	c := &tls.Config{ServerName: r.Host, MinVersion: tls.VersionTLS12}
	if r.CAFile != "" {
		pem, err := os.ReadFile(r.CAFile)
		if err != nil {
			return nil, fmt.Errorf("cache.redis.ca_file: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("cache.redis.ca_file %s holds no PEM certificate", r.CAFile)
		}
	}
	return c, nil
}

// openCacheStore opens the cache store when it is Redis, files or memcached; nil for any other.
func openCacheStore(ctx context.Context, cfg *config.Config) (*cacheStore, error) {
	return openCacheDriver(ctx, cfg, cfg.Cache.Store)
}

// openUniqueStores opens the cache stores unique_via names besides the default one (the database
// store needs none: it is the connection's), where the locks of those classes are released.
func openUniqueStores(ctx context.Context, cfg *config.Config) (map[string]worker.LockReleaser, func(), error) {
	stores := map[string]worker.LockReleaser{}
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, u := range cfg.UniqueVia {
		if _, open := stores[u.Store]; open || u.Store == cfg.Cache.Store || u.Store == "database" {
			continue
		}
		cs, err := openCacheDriver(ctx, cfg, u.Store)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("unique_via: the %s cache store of %s: %w", u.Store, u.Class, err)
		}
		stores[u.Store] = cs.locks
		closers = append(closers, cs.close)
	}
	return stores, closeAll, nil
}

// openMaintenanceStore opens the cache store the cache maintenance driver (Laravel 9+) keeps
// illuminate:foundation:down in, when it is another than the default store; nil otherwise. A store
// the worker does not reach is logged: php artisan down is then not seen.
func openMaintenanceStore(ctx context.Context, cfg *config.Config, conn *laravel.Conn, log *slog.Logger) (worker.CacheStore, func(), error) {
	store := cfg.App.MaintenanceStore
	if cfg.App.MaintenanceDriver != "cache" || store == "" || store == cfg.Cache.Store {
		return nil, func() {}, nil
	}
	if store == "database" {
		return conn, func() {}, nil
	}
	cs, err := openCacheDriver(ctx, cfg, store)
	if err != nil {
		return nil, nil, fmt.Errorf("app.maintenance_store: the %s cache store: %w", store, err)
	}
	if cs == nil {
		log.Warn("the maintenance mode's cache store is not one artisan-go reads: php artisan down is not seen by this worker; use the database, redis, file or memcached store",
			"maintenance_store", store)
		return nil, func() {}, nil
	}
	return cs.values, cs.close, nil
}

// openCacheDriver opens the cache store of the driver with the configuration's settings for it (nil
// for the database and the drivers artisan-go does not read).
func openCacheDriver(ctx context.Context, cfg *config.Config, driver string) (*cacheStore, error) {
	switch driver {
	case "redis":
		r := cfg.Cache.Redis
		tlsConfig, err := redisTLS(r)
		if err != nil {
			return nil, err
		}
		rc, err := redislock.OpenStore(ctx, redislock.Params{
			Addr: net.JoinHostPort(r.Host, strconv.Itoa(r.Port)), Username: r.Username, Password: r.Password, TLS: tlsConfig,
			Prefix: redislock.LockPrefix(r.Prefix, cfg.Cache.Prefix), ClientPrefix: r.Prefix,
		}, r.LockDB, r.DB)
		if err != nil {
			return nil, err
		}
		return &cacheStore{locks: rc.Locks, values: rc.Values, rawNumbers: true, close: rc.Close}, nil
	case "file":
		fc, err := filecache.Open(filecache.Params{Dir: cfg.Cache.File.Path, LockDir: cfg.Cache.File.LockPath, Permission: cfg.Cache.File.Mode()})
		if err != nil {
			return nil, fmt.Errorf("cache.store file: %w", err)
		}
		return &cacheStore{locks: fc, values: fc, close: func() {}}, nil
	case "memcached":
		m := cfg.Cache.Memcached
		if m.Username != "" {
			return nil, errors.New("cache.store memcached: MEMCACHED_USERNAME is set, and SASL authentication needs memcached's binary protocol, which artisan-go does not speak; unset it, or use the database or redis cache store")
		}
		mc, err := memcached.Open(ctx, memcachedParams(cfg))
		if err != nil {
			return nil, fmt.Errorf("cache.store memcached: %w", err)
		}
		return &cacheStore{locks: mc, values: mc, close: func() { mc.Close() }, down: mc.Down()}, nil
	}
	return nil, nil
}

// memcachedParams is the memcached store's pool as the configuration gives it.
func memcachedParams(cfg *config.Config) memcached.Params {
	p := memcached.Params{Prefix: cfg.Cache.Prefix, Distribution: memcached.Distribution(cfg.Cache.Memcached.Distribution)}
	for _, s := range cfg.Cache.Memcached.Pool() {
		p.Servers = append(p.Servers, memcached.Server{Host: s.Host, Port: s.Port, Weight: s.Weight})
	}
	return p
}

// addRoutes registers the configured exec, http and builtin routes.
func addRoutes(reg *handlers.Registry, rs []config.Route) error {
	routes := make([]handlers.Route, 0, len(rs))
	for _, r := range rs {
		routes = append(routes, handlers.Route(r))
	}
	return handlers.AddRoutes(reg, routes)
}

// workerConfig maps the configuration onto the worker's options.
func workerConfig(cfg *config.Config) (worker.Config, error) {
	loc, err := time.LoadLocation(cfg.App.Timezone)
	if err != nil {
		return worker.Config{}, fmt.Errorf("app.timezone %q: %w; use an IANA name such as UTC or Europe/Paris", cfg.App.Timezone, err)
	}
	w := cfg.Worker
	wc := worker.Defaults()
	wc.Connection = cfg.Connection
	wc.LaravelVersion = cfg.LaravelVersion
	wc.Queues = w.Queues
	// Chain links without a queue go to the connection's queue, as DatabaseQueue::getQueue falls back
	// to it: config/queue.php's (the skeleton's "default" up to 10, DB_QUEUE from 11), whatever
	// --queue the worker serves.
	wc.DefaultQueue, wc.DefaultConnection = cfg.DefaultQueue(), cfg.DefaultConnection()
	wc.Sleep, wc.Tries, wc.Timeout, wc.Backoff = w.Sleep, w.Tries, w.Timeout, w.Backoff
	wc.MaxJobs, wc.MaxTime, wc.StopWhenEmpty, wc.Once = w.MaxJobs, w.MaxTime, w.StopWhenEmpty, w.Once
	wc.StopWhenEmptyFor = w.StopWhenEmptyFor
	wc.Rest, wc.MemoryMB, wc.Concurrency, wc.RetryAfter = w.Rest, w.MemoryMB, w.Concurrency, w.RetryAfter
	wc.ShutdownGrace, wc.Force, wc.MaintenanceFile = w.ShutdownGrace, w.Force, w.MaintenanceFile
	wc.MaintenanceDriver = cfg.App.MaintenanceDriver
	wc.BatchCompanion, wc.FailedCompanion = w.BatchCompanion, w.FailedCompanion
	wc.Unhandled = cfg.Unhandled
	wc.FailedDriver = cfg.Failed.Driver
	wc.Location = loc
	wc.CacheEnabled = cfg.Cache.Reached() || cfg.Cache.InProcess()
	wc.CacheStore = cfg.Cache.Store
	wc.UniqueVia = map[string]string{}
	for _, u := range cfg.UniqueVia {
		wc.UniqueVia[strings.TrimPrefix(u.Class, `\`)] = u.Store
	}
	wc.RateLimiters = map[string][]worker.RateLimit{}
	for _, l := range cfg.RateLimiters {
		wc.RateLimiters[l.Limiter] = append(wc.RateLimiters[l.Limiter], worker.RateLimit{Allow: l.Allow, Per: l.Per, By: l.By})
	}
	wc.RunUnknownMiddleware, wc.DontRetry = classSet(w.RunUnknownMiddleware), classSet(w.DontRetry)
	wc.DeleteWhenMissingModels = classSet(w.DeleteWhenMissingModels)
	wc.DBConnection = cfg.DB.Driver
	wc.Models = workerModels(cfg)
	return wc, nil
}

// workerModels is the configuration's models: by class, where their rows are.
func workerModels(cfg *config.Config) map[string]worker.Model {
	models := map[string]worker.Model{}
	for _, m := range cfg.Models {
		models[strings.TrimPrefix(m.Class, `\`)] = worker.Model{Table: m.Table, Key: m.Key, Connection: m.Connection}
	}
	return models
}

// classSet is a set of PHP class names, written with or without a leading backslash.
func classSet(classes []string) map[string]bool {
	set := make(map[string]bool, len(classes))
	for _, c := range classes {
		set[strings.TrimPrefix(c, `\`)] = true
	}
	return set
}
