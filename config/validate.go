package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	// The time zone database is embedded so that app.timezone validates and converts the same way on
	// hosts without /usr/share/zoneinfo (such as scratch containers).
	_ "time/tzdata"
)

// FieldError is one bad setting: the key, where it is set, what is wrong and how to fix it.
type FieldError struct {
	Field   string // the YAML key, e.g. "worker.concurrency"
	Source  string // where the value came from, or the ways to set it
	Problem string // what is wrong
	Fix     string // what to do
}

// Error implements error.
func (e *FieldError) Error() string {
	s := e.Field
	if e.Source != "" {
		s += " (" + e.Source + ")"
	}
	s += ": " + e.Problem
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// Unwrap makes a FieldError match ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

var (
	identRE    = regexp.MustCompile(`\A[A-Za-z_][A-Za-z0-9_]{0,63}\z`)
	prefixRE   = regexp.MustCompile(`\A[A-Za-z0-9_]{0,63}\z`)
	classRE    = regexp.MustCompile(`\A\\?[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*(\\[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*)*\z`)
	strategyRE = regexp.MustCompile(`\A[a-z0-9][a-z0-9_-]*\z`)
)

// maxClaimBatch bounds worker.claim_batch: one claim statement lists at most this many rows.
const maxClaimBatch = 1000

// maxClaimLanes bounds worker.claim_lanes: each lane's transaction holds a connection of the worker's
// pool (at most 8).
const maxClaimLanes = 8

// Builtins are the names a route's builtin may take.
var Builtins = []string{"noop"}

// Drivers are the database drivers artisan-go supports, as DB_CONNECTION names them.
var Drivers = []string{"mysql", "mariadb", "pgsql", "sqlite"}

// ciphers maps Laravel's cipher names (any case) to their key length in bytes.
var ciphers = map[string]int{"AES-128-CBC": 16, "AES-256-CBC": 32, "AES-128-GCM": 16, "AES-256-GCM": 32}

// Validate checks the meaning of every setting and returns the problems joined, each a *FieldError
// wrapping ErrInvalid that names the key, the variables that set it and the fix. Risky but legal
// settings are reported by Warnings instead.
func (c *Config) Validate() error {
	v := &validator{ver: parseVersion(c.LaravelVersion), sources: c.sources}
	c.validateTop(v)
	c.validateDB(v)
	c.validateWorker(v)
	c.validateApp(v)
	c.validateCacheAndFailed(v)
	c.validateRoutes(v)
	c.validateRateLimits(v)
	c.validateOperating(v)
	c.validateModels(v)
	c.validateUniqueVia(v)
	return errors.Join(v.errs...)
}

type validator struct {
	ver     version
	sources map[string]string // where each key was set, when it was (see Config.sources)
	errs    []error
}

// add reports a problem with field, naming where its value was set, or else what sets it.
func (v *validator) add(field, problem, fix string) {
	source, ok := v.sources[field]
	if !ok {
		source = setters(field, v.ver)
	}
	v.errs = append(v.errs, &FieldError{Field: field, Source: source, Problem: problem, Fix: fix})
}

func oneOf(s string, set []string) bool {
	for _, e := range set {
		if s == e {
			return true
		}
	}
	return false
}

func (c *Config) validateTop(v *validator) {
	if strings.TrimSpace(c.Connection) == "" {
		v.add("connection", "is empty", `set it to the queue connection of config/queue.php the jobs are pushed to, usually "database"`)
	} else if !c.knownConnection(c.Connection) {
		v.add("connection", fmt.Sprintf("The [%s] queue connection has not been configured.", c.Connection),
			fmt.Sprintf("name a connection of config/queue.php: %q, QUEUE_CONNECTION's, or one listed under connections: in the YAML configuration", "database"))
	}
	if ver := parseVersion(c.LaravelVersion); ver.err != nil {
		v.add("laravel_version", fmt.Sprintf("%q is not a Laravel version from 5.4 on", c.LaravelVersion),
			`set it to the application's version as composer show laravel/framework prints it, e.g. "8.83" or "11"`)
	}
	switch {
	case c.Unhandled == "leave", c.Unhandled == "fail":
	case strings.HasPrefix(c.Unhandled, "move:"):
		if q := strings.TrimPrefix(c.Unhandled, "move:"); !validQueue(q) {
			v.add("unhandled", fmt.Sprintf("%q does not name a queue after move:", c.Unhandled),
				`write "move:<queue>" with a queue name without commas or spaces, e.g. "move:php"`)
		}
	default:
		v.add("unhandled", fmt.Sprintf("%q is not a policy", c.Unhandled), `use "leave", "fail" or "move:<queue>"`)
	}
	if !oneOf(c.Log.Format, []string{"text", "json"}) {
		v.add("log.format", fmt.Sprintf("%q is not a log format", c.Log.Format), `use "text" or "json"`)
	}
	if !oneOf(c.Log.Level, []string{"debug", "info", "warn", "error"}) {
		v.add("log.level", fmt.Sprintf("%q is not a log level", c.Log.Level), `use "debug", "info", "warn" or "error"`)
	}
	if c.DB.URL != "" {
		if _, err := parseDatabaseURL(c.DB.URL); err != nil {
			v.add("db.url", "the database configuration URL is malformed", `write it as driver://user:password@host:port/database, with special characters of the password percent-encoded (@ is %40)`)
		}
	}
	if !oneOf(c.Log.Console, []string{"laravel", "off"}) {
		v.add("log.console", fmt.Sprintf("%q is not a console output", c.Log.Console), `use "laravel" (PHP's queue:work lines) or "off"`)
	}
	if c.Log.Flush < 0 || c.Log.Flush > time.Minute {
		v.add("log.flush", fmt.Sprintf("%v is outside 0..1m", c.Log.Flush), "use a short delay such as 200ms, or 0 to write every line at once")
	}
}

func validQueue(q string) bool {
	return q != "" && len(q) <= 255 && !strings.ContainsAny(q, ", \t\r\n")
}

func (c *Config) validateDB(v *validator) {
	d := c.DB
	if !oneOf(d.Driver, Drivers) {
		fix := "use " + strings.Join(Drivers, ", ")
		switch strings.ToLower(d.Driver) {
		case "postgres", "postgresql", "pg":
			fix = `use "pgsql", Laravel's name for PostgreSQL`
		case "sqlsrv":
			fix = "SQL Server is not supported; use " + strings.Join(Drivers, ", ")
		case "sqlite3":
			fix = `use "sqlite"`
		}
		v.add("db.driver", fmt.Sprintf("unknown driver %q", d.Driver), fix)
	}
	network := d.Driver != "sqlite" && d.DSN == ""
	if d.Port < 0 || d.Port > 65535 || network && d.Socket == "" && d.Port == 0 {
		v.add("db.port", fmt.Sprintf("%d is not a TCP port", d.Port), "use a port from 1 to 65535, e.g. 3306 for MySQL or 5432 for PostgreSQL")
	}
	if network && d.Socket == "" && strings.TrimSpace(d.Host) == "" {
		v.add("db.host", "is empty", "set the database server's host name or address, or db.socket")
	}
	if d.DSN == "" && strings.TrimSpace(d.Database) == "" {
		what := "the database name"
		if d.Driver == "sqlite" {
			what = "the path of the SQLite file"
		}
		v.add("db.database", "is empty", "set "+what)
	}
	if d.SSLMode != "" && !oneOf(d.SSLMode, []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}) {
		v.add("db.sslmode", fmt.Sprintf("%q is not a PostgreSQL sslmode", d.SSLMode), "use disable, allow, prefer, require, verify-ca or verify-full")
	}
	if d.Schema != "" {
		for s := range strings.SplitSeq(d.Schema, ",") {
			if s = strings.TrimSpace(s); !identRE.MatchString(s) && s != `"$user"` {
				v.add("db.schema", fmt.Sprintf("%q is not a schema name", s), "use comma-separated plain identifiers, e.g. public")
			}
		}
	}
	tables := []struct{ field, name string }{
		{"tables.jobs", c.Tables.Jobs}, {"tables.failed_jobs", c.Tables.FailedJobs},
		{"tables.job_batches", c.Tables.JobBatches}, {"tables.cache", c.Tables.Cache},
		{"tables.cache_locks", c.Tables.CacheLocks},
	}
	if !prefixRE.MatchString(d.Prefix) {
		v.add("db.prefix", fmt.Sprintf("%q is not a plain table prefix", d.Prefix), "use letters, digits and underscores, e.g. app_")
		return
	}
	for _, t := range tables {
		if !identRE.MatchString(t.name) {
			v.add(t.field, fmt.Sprintf("%q is not a plain table name", t.name),
				"use letters, digits and underscores, starting with a letter or underscore, at most 64 characters")
		} else if n := len(d.Prefix + t.name); n > 64 {
			v.add(t.field, fmt.Sprintf("%q behind db.prefix %q is %d characters long", t.name, d.Prefix, n),
				"the prefixed table name must have at most 64 characters")
		}
	}
}

func (c *Config) validateWorker(v *validator) {
	w := c.Worker
	if len(w.Queues) == 0 {
		v.add("worker.queues", "is empty", `list at least one queue, e.g. ["default"]`)
	}
	for _, q := range w.Queues {
		if !validQueue(q) {
			v.add("worker.queues", fmt.Sprintf("%q is not a queue name", q), "use names without commas or spaces, at most 255 characters")
		}
	}
	nonNegative := []struct {
		field string
		bad   bool
		value any
	}{
		{"worker.sleep", w.Sleep < 0, w.Sleep}, {"worker.tries", w.Tries < 0, w.Tries},
		{"worker.timeout", w.Timeout < 0, w.Timeout}, {"worker.max_jobs", w.MaxJobs < 0, w.MaxJobs},
		{"worker.max_time", w.MaxTime < 0, w.MaxTime}, {"worker.rest", w.Rest < 0, w.Rest},
		{"worker.stop_when_empty_for", w.StopWhenEmptyFor < 0, w.StopWhenEmptyFor},
		{"worker.memory_mb", w.MemoryMB < 0, w.MemoryMB}, {"worker.shutdown_grace", w.ShutdownGrace < 0, w.ShutdownGrace},
	}
	for _, n := range nonNegative {
		if n.bad {
			v.add(n.field, fmt.Sprintf("%v is negative", n.value), "use 0 or more (0 means no limit where a limit is meant)")
		}
	}
	if len(w.Backoff) == 0 {
		v.add("worker.backoff", "is empty", "list at least one delay in seconds, e.g. [0] or [10, 30, 60]")
	}
	for _, b := range w.Backoff {
		if b < 0 {
			v.add("worker.backoff", fmt.Sprintf("%d is negative", b), "use delays of 0 seconds or more")
		}
	}
	if strings.TrimSpace(w.Name) == "" {
		v.add("worker.name", "is empty", `set a name, e.g. "default"`)
	}
	if w.Concurrency < 1 {
		v.add("worker.concurrency", fmt.Sprintf("%d is less than 1", w.Concurrency), "run at least 1 job at a time")
	}
	if w.ClaimBatch < 0 || w.ClaimBatch > maxClaimBatch {
		v.add("worker.claim_batch", fmt.Sprintf("%d is outside 0..%d", w.ClaimBatch, maxClaimBatch),
			"use 0 for the strategy's default, or a batch of up to 1000 rows")
	}
	if w.ClaimLanes < 0 || w.ClaimLanes > maxClaimLanes {
		v.add("worker.claim_lanes", fmt.Sprintf("%d is outside 0..%d", w.ClaimLanes, maxClaimLanes),
			"use 0 for one lane, or up to 8 lanes")
	}
	if w.RetryAfter <= 0 {
		v.add("worker.retry_after", fmt.Sprintf("%v is not positive", w.RetryAfter),
			"use the retry_after of the connection in config/queue.php (the skeleton's is 90)")
	}
	if w.Strategy != "" && !strategyRE.MatchString(w.Strategy) {
		v.add("worker.strategy", fmt.Sprintf("%q is not a strategy name", w.Strategy),
			`leave it empty to choose at start, or name a strategy (lower-case letters, digits, "-", "_")`)
	}
}

func (c *Config) validateApp(v *validator) {
	if _, err := time.LoadLocation(c.App.Timezone); err != nil || c.App.Timezone == "" {
		v.add("app.timezone", fmt.Sprintf("unknown time zone %q", c.App.Timezone), `use an IANA name such as "UTC" or "Europe/Paris", as config/app.php has it`)
	}
}

// validateKeys checks APP_KEY, APP_PREVIOUS_KEYS and the cipher. Its problems are warnings: PHP's
// worker runs with such a key and fails only the encrypted jobs, with its encrypter's exception.
func (c *Config) validateKeys(v *validator) {
	cipher := strings.ToUpper(c.App.Cipher)
	size, known := ciphers[cipher]
	if !known {
		v.add("app.cipher", fmt.Sprintf("unknown cipher %q", c.App.Cipher), "use AES-128-CBC, AES-256-CBC, AES-128-GCM or AES-256-GCM")
	}
	check := func(field, k string) {
		key := []byte(k)
		if rest, ok := strings.CutPrefix(k, "base64:"); ok {
			b, err := base64.StdEncoding.DecodeString(rest)
			if err != nil {
				v.add(field, "is not valid base64 after \"base64:\"", "copy APP_KEY from the application's .env exactly")
				return
			}
			key = b
		}
		if known && len(key) != size {
			v.add(field, fmt.Sprintf("is %d bytes long, %s needs %d", len(key), cipher, size),
				"copy APP_KEY from the application's .env exactly, or set app.cipher to the application's cipher")
		}
	}
	if c.App.Key != "" {
		check("app.key", c.App.Key)
	}
	for _, k := range c.App.PreviousKeys {
		check("app.previous_keys", k)
	}
}

func (c *Config) validateCacheAndFailed(v *validator) {
	if strings.TrimSpace(c.Cache.Store) == "" {
		v.add("cache.store", "is empty", `set the application's default cache store driver, e.g. "database" or "redis"`)
	}
	if c.Cache.Store == "redis" {
		if p := c.Cache.Redis.Port; p < 1 || p > 65535 {
			v.add("cache.redis.port", fmt.Sprintf("%d is not a TCP port", p), "use a port from 1 to 65535, usually 6379")
		}
		if strings.TrimSpace(c.Cache.Redis.Host) == "" {
			v.add("cache.redis.host", "is empty", "set the Redis host")
		}
	}
	for _, e := range c.Cache.Memcached.Servers {
		if _, err := parseMemcachedServer(e); err != nil {
			v.add("cache.memcached.servers", err.Error(), `write each server as config/cache.php lists it, "host:port:weight", e.g. "10.0.0.5:11211:100"`)
		}
	}
	switch c.Cache.Memcached.Distribution {
	case "", "modula", "consistent", "ketama":
	default:
		v.add("cache.memcached.distribution", fmt.Sprintf("unknown distribution %q", c.Cache.Memcached.Distribution),
			`use "modula" (the memcached extension's default), "consistent" (Memcached::DISTRIBUTION_CONSISTENT) or "ketama" (Memcached::OPT_LIBKETAMA_COMPATIBLE), as config/cache.php's options set it`)
	}
	if _, err := parseMode(c.Cache.File.Permission); err != nil {
		v.add("cache.file.permission", err.Error(), `write the mode config/cache.php's stores.file.permission gives, in octal, e.g. "0664"`)
	}
	if _, err := parseRedisURL(c.Cache.Redis.URL); err != nil {
		v.add("cache.redis.url", err.Error(), "write it as Laravel reads it: redis://[user:password@]host[:port][/database], or rediss:// for TLS")
	}
	if c.Cache.Redis.DB < 0 {
		v.add("cache.redis.db", fmt.Sprintf("%d is negative", c.Cache.Redis.DB), "use a Redis database number of 0 or more")
	}
	switch c.Failed.Driver {
	case "database-uuids", "database", "null":
	case "file", "dynamodb":
		v.add("failed.driver", fmt.Sprintf("the %q failed-job provider is not supported", c.Failed.Driver),
			`use "database-uuids", "database" or "null"`)
	default:
		v.add("failed.driver", fmt.Sprintf("unknown failed-job driver %q", c.Failed.Driver),
			`use "database-uuids" (Laravel 8+), "database" or "null", as config/queue.php's failed.driver says`)
	}
	if d := c.App.MaintenanceDriver; d != "" && d != "file" && d != "cache" {
		v.add("app.maintenance_driver", fmt.Sprintf("unknown maintenance driver %q", d),
			`use "file" or "cache", as config/app.php's maintenance.driver says, or "" to look at both`)
	}
}

func (c *Config) validateModels(v *validator) {
	seen := map[string]int{}
	for i, m := range c.Models {
		field := fmt.Sprintf("models[%d]", i)
		checkEntryClass(v, seen, "models", i, m.Class, `name the model class as PHP does, e.g. App\Models\Person`, "keep one entry per model class")
		if m.Table == "" && m.Key == "" && m.Connection == "" {
			v.add(field, "names no table, key or connection", "set table (and key, connection) as the model's $table, $primaryKey and $connection")
		}
	}
}

// checkEntryClass checks the class of entry i of a list: a PHP class name, named in no entry before
// (seen maps each class to its entry).
func checkEntryClass(v *validator, seen map[string]int, list string, i int, class, fixName, fixDup string) {
	field := fmt.Sprintf("%s[%d].class", list, i)
	if !classRE.MatchString(class) {
		v.add(field, fmt.Sprintf("%q is not a PHP class name", class), fixName)
		return
	}
	name := strings.TrimPrefix(class, `\`)
	if j, dup := seen[name]; dup {
		v.add(field, fmt.Sprintf("%s is named twice (also %s[%d])", name, list, j), fixDup)
	}
	seen[name] = i
}

// UniqueViaStores are the cache stores a unique_via entry may name: those artisan-go opens.
var UniqueViaStores = []string{"database", "redis", "file", "memcached"}

func (c *Config) validateUniqueVia(v *validator) {
	seen := map[string]int{}
	for i, u := range c.UniqueVia {
		field := fmt.Sprintf("unique_via[%d]", i)
		checkEntryClass(v, seen, "unique_via", i, u.Class, `name the job class as PHP does, e.g. App\Jobs\BuildReport`, "keep one entry per job class")
		if !oneOf(u.Store, UniqueViaStores) {
			v.add(field+".store", fmt.Sprintf("%q is not a cache store artisan-go opens", u.Store),
				"name the store uniqueVia() returns, as config/cache.php names it: database, redis, file or memcached")
		}
	}
}

func (c *Config) validateRoutes(v *validator) {
	seen := map[string]int{}
	for i, r := range c.Routes {
		field := fmt.Sprintf("routes[%d]", i)
		class := strings.TrimPrefix(r.Class, `\`)
		switch {
		case r.Class == "":
			v.add(field+".class", "is empty", `name the PHP job class, e.g. App\Jobs\SendWelcome`)
		case !classRE.MatchString(r.Class):
			v.add(field+".class", fmt.Sprintf("%q is not a PHP class name", r.Class), `write it as PHP does, e.g. App\Jobs\SendWelcome`)
		default:
			if j, dup := seen[class]; dup {
				v.add(field+".class", fmt.Sprintf("%s is routed twice (also routes[%d])", class, j), "keep one route per class")
			}
			seen[class] = i
		}
		n := 0
		if len(r.Exec) > 0 {
			n++
			if strings.TrimSpace(r.Exec[0]) == "" {
				v.add(field+".exec", "has an empty program name", "put the program first, e.g. [/usr/local/bin/handler, --flag]")
			}
		}
		if r.HTTP != "" {
			n++
			u, err := url.Parse(r.HTTP)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				v.add(field+".http", fmt.Sprintf("%q is not an http or https URL", r.HTTP), "write a full URL, e.g. http://127.0.0.1:8080/jobs")
			}
		}
		if r.Builtin != "" {
			n++
			if !oneOf(r.Builtin, Builtins) {
				v.add(field+".builtin", fmt.Sprintf("unknown builtin %q", r.Builtin), "use one of: "+strings.Join(Builtins, ", "))
			}
		}
		if n != 1 {
			v.add(field, fmt.Sprintf("has %d of exec, http and builtin", n), "give each route exactly one of exec, http and builtin")
		}
		if r.Timeout < 0 {
			v.add(field+".timeout", fmt.Sprintf("%v is negative", r.Timeout), "use 0 (the job's timeout) or a positive duration")
		}
	}
}

// Warnings lists settings that are legal but risky, and what was noticed while loading, such as an
// ARTISAN_GO_ variable that is not a configuration key. They are not errors because Laravel accepts the
// same settings: a worker should log them at start.
//
// A timeout at or above retry_after is the main one. Laravel only documents that --timeout must be
// shorter than retry_after, and PHP workers run either way, so refusing it would refuse a working PHP
// setup; but a job that runs past retry_after can be claimed and run a second time by another worker
// unless the reservation is renewed.
func (c *Config) Warnings() []string {
	out := append([]string(nil), c.notes...)
	w := c.Worker
	// A timeout not shorter than retry_after is the worker's own warning (worker.New), said once.
	if w.Timeout == 0 {
		out = append(out, "worker.timeout is 0: jobs run without a time limit, and one that runs past worker.retry_after can be claimed by another worker")
	}
	for i, r := range c.Routes {
		if len(r.Exec) == 1 && strings.ContainsAny(r.Exec[0], " \t") {
			out = append(out, fmt.Sprintf("routes[%d].exec %q is one program name with spaces in it, run without a shell; if it is a command line, write it as a list ([program, arg, ...]) or as [sh, -c, \"...\"]", i, r.Exec[0]))
		}
	}
	keys := &validator{ver: parseVersion(c.LaravelVersion), sources: c.sources}
	c.validateKeys(keys)
	for _, err := range keys.errs {
		out = append(out, err.Error()+"; meanwhile encrypted (ShouldBeEncrypted) jobs fail, as PHP's worker fails them with such a key")
	}
	if c.Cache.InProcess() {
		out = append(out, `cache.store "array" lives in each process's memory, as in PHP's workers: this worker counts maxExceptions and keeps job middleware's locks and rate limiters in its own, but `+"`php artisan queue:restart`"+` cannot stop it (nor PHP's workers), and no lock or limit is shared with another worker; use the database, redis, file or memcached store to share them`)
	} else if !c.Cache.Reached() {
		out = append(out, fmt.Sprintf("cache.store %q is not read by artisan-go, which reads the database, redis, file and memcached cache stores: `php artisan queue:restart` cannot stop this worker, maxExceptions is not counted, unique-job locks are not released and jobs with middleware are left for PHP", c.Cache.Store))
	}
	return out
}

func (c *Config) validateOperating(v *validator) {
	if a := c.Metrics.Addr; a != "" {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			v.add("metrics.addr", fmt.Sprintf("%q is not host:port", a), `use an address such as "127.0.0.1:9090" or ":9090", or "" for no metrics`)
		}
	}
	if c.Metrics.SampleInterval <= 0 {
		v.add("metrics.sample_interval", fmt.Sprintf("%v is not positive", c.Metrics.SampleInterval), "use an interval such as 15s")
	}
	if c.Metrics.StuckAfter <= 0 {
		v.add("metrics.stuck_after", fmt.Sprintf("%v is not positive", c.Metrics.StuckAfter), "use a duration longer than --sleep, such as 60s")
	}
	if e := c.Tracing.OTLPEndpoint; e != "" && !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://") {
		v.add("tracing.otlp_endpoint", fmt.Sprintf("%q is not an http(s) URL", e), `use the collector's OTLP/HTTP traces URL, e.g. "http://127.0.0.1:4318/v1/traces"`)
	}
	if !oneOf(c.Pulse.Mode, []string{"auto", "off"}) {
		v.add("pulse.mode", fmt.Sprintf("%q is not a mode", c.Pulse.Mode), "use auto (write when Pulse's tables exist) or off")
	}
	if c.Pulse.SlowJobThreshold < 0 {
		v.add("pulse.slow_job_threshold", fmt.Sprintf("%v is negative", c.Pulse.SlowJobThreshold), "use Pulse's threshold, 1s by default")
	}
	if c.Pulse.FlushInterval <= 0 {
		v.add("pulse.flush_interval", fmt.Sprintf("%v is not positive", c.Pulse.FlushInterval), "use an interval such as 1s")
	}
}

// skeletonConnections are the queue connections of Laravel's config/queue.php skeleton besides
// database, each named after its driver. They exist in most applications, so the operations commands
// take them (see CheckWorkable for queue:work).
var skeletonConnections = []string{"sync", "redis", "sqs", "beanstalkd", "null", "deferred", "background", "failover"}

// CheckWorkable reports an error when queue:work cannot work Connection: a connection of Laravel's
// skeleton that is not a database one (queue:work redis copied from a PHP supervisor, or
// QUEUE_CONNECTION=sync), unless the configuration lists it under connections. Working the jobs table
// under that name would record its failures under a connection whose retries go elsewhere.
func (c *Config) CheckWorkable() error {
	return c.checkDatabaseConnection("artisan-go queue:work database")
}

// CheckPushable reports an error when queue:push cannot push onto Connection for the same reasons:
// PHP's dispatch() onto it would not put the job in a jobs table (sync runs it at once, redis pushes
// it to Redis), so a row there would be one nobody works.
func (c *Config) CheckPushable() error {
	return c.checkDatabaseConnection("artisan-go queue:push --connection database")
}

// checkDatabaseConnection is CheckWorkable and CheckPushable; example is the command line that names
// a database connection.
func (c *Config) checkDatabaseConnection(example string) error {
	if oneOf(c.Connection, c.Connections) {
		return nil
	}
	if d, ok := c.drivers[c.Connection]; ok && d != "" {
		if d == "database" {
			return nil
		}
		return fmt.Errorf("the [%s] queue connection has the %s driver in %s, not the database driver: its jobs are not in a jobs table artisan-go works. "+
			"Name the database connection the jobs are pushed to (%s; QUEUE_CONNECTION names the default)", c.Connection, d, c.driversWhere, example)
	}
	if !oneOf(c.Connection, skeletonConnections) {
		return nil
	}
	return fmt.Errorf("the [%s] queue connection is Laravel's %s driver, not a database connection: artisan-go works the jobs tables of database connections. "+
		"Name the database connection the jobs are pushed to (%s; QUEUE_CONNECTION names the default), "+
		"or list %q under connections: in the YAML configuration if your config/queue.php makes it a database connection", c.Connection, c.Connection, example, c.Connection)
}

// QueueDriver returns the driver of the queue connection name, as far as artisan-go can know it:
// database for those listed under connections; the driver the cached configuration or
// config/queue.php gives it; "null" for null, which Laravel's QueueManager always takes as the Null
// queue; else the driver of its name for the skeleton's others (sync, redis, …), even when it is the
// configured connection, and database for the configured connection and "database". known is false
// for any other name, which Laravel would say has not been configured.
func (c *Config) QueueDriver(name string) (driver string, known bool) {
	if oneOf(name, c.Connections) {
		return "database", true
	}
	if name == "null" {
		return "null", true
	}
	d, listed := c.drivers[name]
	switch {
	case d != "":
		return d, true
	case c.drivers != nil && !listed:
		return "", false
	case oneOf(name, skeletonConnections):
		// QUEUE_CONNECTION=sync too: CheckWorkable refuses to work it as a database connection.
		return name, true
	case listed || name == c.Connection || name == "database" || name == c.configured:
		return "database", true
	}
	return "", false
}

// knownConnection reports whether the application has a queue connection of that name, as far as
// artisan-go can know: those of the cached configuration or config/queue.php when they list them all,
// else "database", the connection the configuration names and the skeleton's; null; and those listed
// under connections. Laravel refuses any other name.
func (c *Config) knownConnection(name string) bool {
	if oneOf(name, c.Connections) || name == "null" {
		return true
	}
	if c.drivers != nil { // the application's files list them all, as PHP reads them
		_, listed := c.drivers[name]
		return listed
	}
	return name == "database" || name == c.configured || c.configured == "" || oneOf(name, skeletonConnections)
}

// Mode is Permission as a file mode (0 when it is not set or not an octal mode up to 07777).
func (f FileStore) Mode() fs.FileMode {
	m, err := parseMode(f.Permission)
	if err != nil {
		return 0
	}
	return m
}

// parseMemcachedServer reads "host:port[:weight]" ("[ipv6]:port[:weight]").
func parseMemcachedServer(e string) (MemcachedServer, error) {
	e = strings.TrimSpace(e)
	hostPort, weight := e, "100"
	if i := strings.LastIndexByte(e, ':'); i > strings.LastIndexByte(e, ']') && strings.Count(e[strings.LastIndexByte(e, ']')+1:], ":") == 2 {
		hostPort, weight = e[:i], e[i+1:]
	}
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil || host == "" {
		return MemcachedServer{}, fmt.Errorf("%q is not host:port:weight", e)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return MemcachedServer{}, fmt.Errorf("%q: %q is not a TCP port", e, port)
	}
	w, err := strconv.Atoi(weight)
	if err != nil || w < 0 {
		return MemcachedServer{}, fmt.Errorf("%q: the weight %q is not a whole number of 0 or more", e, weight)
	}
	return MemcachedServer{Host: host, Port: p, Weight: w}, nil
}

// parseMode reads an octal mode up to 07777, as PHP's chmod takes it, into a Go file mode.
func parseMode(s string) (fs.FileMode, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O"), 8, 32)
	if err != nil || n > 0o7777 {
		return 0, fmt.Errorf("%q is not an octal file mode", s)
	}
	if n == 0 {
		return 0, fmt.Errorf("%q leaves no one able to read the cache files", s)
	}
	m := fs.FileMode(n & 0o777)
	for bit, mode := range map[uint64]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
		if n&bit != 0 {
			m |= mode
		}
	}
	return m, nil
}
