package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/laravel"
)

// tableFlags are the options every table command shares: where the configuration comes from and
// which configuration keys flags override.
type tableFlags struct {
	envFile, configFile *string
	values              map[string]*string
	keys                map[string]string
}

func newTableFlags(fs *flag.FlagSet, overrides ...[3]string) *tableFlags {
	tf := &tableFlags{
		envFile:    fs.String("env-file", "", "a Laravel .env file to read (DB_*, DB_QUEUE_TABLE, ...)"),
		configFile: fs.String("config", "", "a YAML configuration file"),
		values:     map[string]*string{}, keys: map[string]string{},
	}
	for _, o := range overrides {
		tf.values[o[0]], tf.keys[o[0]] = fs.String(o[0], "", o[2]), o[1]
	}
	return tf
}

// open loads the configuration with the flags that were set and opens its database.
func (tf *tableFlags) open(ctx context.Context, fs *flag.FlagSet) (*config.Config, *laravel.Conn, error) {
	overrides := map[string]any{}
	fs.Visit(func(f *flag.Flag) {
		if key, ok := tf.keys[f.Name]; ok {
			overrides[key] = *tf.values[f.Name]
		}
	})
	cfg, err := loadConfig(ctx, *tf.envFile, *tf.configFile, overrides)
	if err != nil {
		return nil, nil, err
	}
	conn, err := openConn(ctx, cfg)
	return cfg, conn, err
}

func runQueueDoctor(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("queue:doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tf := newTableFlags(fs,
		[3]string{"strategy", "worker.strategy", "the claim strategy the workers use (default: the configured one, else the one chosen for this server)"},
		[3]string{"timeout", "worker.timeout", "the longest job timeout in seconds (default: worker.timeout)"},
		[3]string{"retry-after", "worker.retry_after", "the connection's retry_after in seconds (default: worker.retry_after)"})
	format := fs.String("format", "text", "output format: text or json")
	if err := parseAsSymfony(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "artisan-go queue:doctor: --format %q: use text or json\n", *format)
		return 2
	}
	cfg, conn, err := tf.open(ctx, fs)
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:doctor: %v\n", err)
		return 2
	}
	defer conn.Close()
	findings, err := laravel.Diagnose(ctx, conn, laravel.DoctorParams{
		Strategy: cfg.Worker.Strategy, RetryAfter: cfg.Worker.RetryAfter, Timeout: cfg.Worker.Timeout,
		LongTransaction: laravel.DefaultLongTransaction,
		FailedJobs:      cfg.Failed.Driver != "null",
		Batches:         cfg.LaravelAtLeast(8, 0),
		Cache:           cfg.Cache.Store == "database",
	})
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:doctor: %v\n", err)
		return 2
	}
	findings = append(findings, cacheStoreFindings(ctx, cfg)...)
	if msg, err := uuidMismatch(ctx, cfg, conn); err == nil && msg != "" {
		findings = append(findings, laravel.Finding{Code: "failed-jobs-uuid", Severity: laravel.SeverityWarning, Message: msg,
			Fix: "QUEUE_FAILED_DRIVER=database, or the uuid column (string, unique) filled for the rows there"})
	}
	if *format == "json" {
		if findings == nil {
			findings = []laravel.Finding{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(findings)
	} else {
		fmt.Fprintf(stdout, "%s table %s on %s %s\n", conn.Dialect(), conn.Tables().Jobs, conn.Engine(), conn.ServerVersion())
		if len(findings) == 0 {
			fmt.Fprintln(stdout, "ok: nothing to fix")
		}
		for _, f := range findings {
			fmt.Fprintf(stdout, "%s [%s] %s\n    fix: %s\n", strings.ToUpper(string(f.Severity)), f.Code, f.Message, f.Fix)
		}
	}
	if laravel.NeedsFix(findings) {
		return 1
	}
	return 0
}

// cacheStoreFindings checks the cache store the workers share with PHP (queue:restart, unique locks,
// job middleware): one queue:work cannot open stops before it claims anything, and one it does not
// read leaves those unseen.
func cacheStoreFindings(ctx context.Context, cfg *config.Config) []laravel.Finding {
	if cfg.Cache.InProcess() {
		return []laravel.Finding{{Code: "cache-store-in-process", Severity: laravel.SeverityNote,
			Message: `the cache store "array" lives in each worker's memory, PHP's and artisan-go's: each counts maxExceptions and keeps job middleware's locks and rate limiters for itself, php artisan queue:restart stops none of them, and unique locks taken at dispatch are gone with the dispatching process`,
			Fix:     "to share them among workers, use the " + strings.Join(config.ReachedStores, ", ") + " store (CACHE_DRIVER, CACHE_STORE from Laravel 11)"}}
	}
	if !cfg.Cache.Reached() {
		return []laravel.Finding{{Code: "cache-store-unread", Severity: laravel.SeverityWarning,
			Message: fmt.Sprintf("the cache store %q is not one artisan-go reads: php artisan queue:restart does not stop its workers, maxExceptions is not counted, unique locks are not released after their jobs (PHP drops the next dispatches until they expire) and jobs with middleware are left for PHP", cfg.Cache.Store),
			Fix:     "use the " + strings.Join(config.ReachedStores, ", ") + " store (CACHE_DRIVER, CACHE_STORE from Laravel 11)"}}
	}
	cs, err := openCacheStore(ctx, cfg)
	if err != nil {
		return []laravel.Finding{{Code: "cache-store", Severity: laravel.SeverityError, Message: err.Error(),
			Fix: "queue:work does not start until the cache store opens: correct the setting the message names"}}
	}
	defer cs.Close()
	var out []laravel.Finding
	for _, d := range cs.Down() {
		out = append(out, laravel.Finding{Code: "cache-server-down", Severity: laravel.SeverityWarning, Message: d + ": queue:work starts with the pool's other servers, but the keys PHP keeps on this one (queue:restart's signal, paused queues, locks) go unseen",
			Fix: "start the server, or take it out of config/cache.php's servers and cache.memcached.servers together"})
	}
	return out
}
