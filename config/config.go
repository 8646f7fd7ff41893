// Package config holds artisan-go's configuration: one struct with documented defaults, loaded from a
// Laravel .env file, a YAML file, the process environment and command-line flags, and validated with
// messages that name the field and the fix.
//
// It is the only package that imports viper. Precedence, lowest first:
//
//  1. Default() (Laravel 8.83's skeleton and `queue:work` defaults; see the field comments);
//  2. the Laravel .env file (LoadParams.EnvFile), read as Laravel's phpdotenv reads it;
//  3. the YAML file (LoadParams.ConfigFile);
//  4. the process environment (LoadParams.Environ), under Laravel's names and ours;
//  5. LoadParams.Overrides, set from command-line flags.
//
// Laravel's names (DB_HOST, QUEUE_CONNECTION, APP_KEY, ...) are read from the .env file and from the
// process environment, the real environment winning as it does in Laravel. Every key also has our own
// name, ARTISAN_GO_ followed by its YAML key in upper case with dots as underscores
// (worker.concurrency is ARTISAN_GO_WORKER_CONCURRENCY, laravel_version is
// ARTISAN_GO_LARAVEL_VERSION). In the same layer ours wins over Laravel's. Routes are set only in YAML.
//
// Values from the environment are strings: durations are seconds ("90", "0.5") or Go durations ("90s",
// "1m30s"), lists are comma-separated ("high,default"), booleans are true/false.
package config

import (
	"errors"
	"slices"
	"time"
)

// ErrInvalid is wrapped by every error that reports a bad setting, in Load and in Validate.
var ErrInvalid = errors.New("invalid configuration")

// Config is the whole configuration of artisan-go. The YAML key of each field is its name in snake case
// under its section's key (db.driver, worker.retry_after); the comments give the default and the
// Laravel environment variables that set it.
type Config struct {
	// Connection is the queue connection name the worker serves, as `queue:work <connection>` takes
	// it. It is written to failed_jobs.connection and decides where chained jobs go. Set by
	// QUEUE_CONNECTION (QUEUE_DRIVER before Laravel 5.7). Default "database".
	Connection string `mapstructure:"connection"`
	// Connections names the application's other queue connections with the database driver (from
	// config/queue.php), which `queue:work <connection>` may also name. "database" and the connection
	// QUEUE_CONNECTION names are always known. YAML only. Default empty.
	Connections []string `mapstructure:"connections"`
	// LaravelVersion is the application's Laravel version ("8.83", "11", "12.54"). Payload formats,
	// lock keys and several defaults below depend on it. Set by ARTISAN_GO_LARAVEL_VERSION. Default
	// "8.83".
	LaravelVersion string `mapstructure:"laravel_version"`
	// DB is the database connection that holds the queue tables.
	DB DB `mapstructure:"db"`
	// Tables are the names of Laravel's tables.
	Tables Tables `mapstructure:"tables"`
	// Worker holds the `queue:work` options.
	Worker Worker `mapstructure:"worker"`
	// App holds the application settings the worker needs (encryption and time zone).
	App App `mapstructure:"app"`
	// Cache is the default cache store, where `queue:restart` signals and unique-job locks live.
	Cache Cache `mapstructure:"cache"`
	// Failed selects how failed jobs are recorded.
	Failed Failed `mapstructure:"failed"`
	// Unhandled says what happens to a job whose class has no handler: "leave" (default: the row is
	// handed back untouched for a PHP worker), "fail" (recorded in failed_jobs) or "move:<queue>"
	// (pushed onto another queue that PHP workers serve).
	Unhandled string `mapstructure:"unhandled"`
	// Routes bind job classes to external commands, HTTP endpoints or built-in handlers. YAML only.
	Routes []Route `mapstructure:"routes"`
	// RateLimiters are the limits of the PHP application's named rate limiters, which jobs with the
	// RateLimited middleware use; a job limited by a limiter not listed is left to PHP workers. YAML
	// only.
	RateLimiters []RateLimit `mapstructure:"rate_limiters"`
	// Models say where model classes keep their rows when Eloquent's default table name (the
	// snake-case plural of the class basename) is not theirs. YAML only.
	Models []Model `mapstructure:"models"`
	// UniqueVia names the cache store of each ShouldBeUnique class whose uniqueVia() method returns
	// another store than the default one, where the worker then releases its lock (Laravel 11.39+
	// names the store in the payload itself). YAML only.
	UniqueVia []UniqueVia `mapstructure:"unique_via"`
	// Log configures the worker's own log.
	Log Log `mapstructure:"log"`
	// Metrics configures the Prometheus metrics and health endpoints of `queue:work`.
	Metrics Metrics `mapstructure:"metrics"`
	// Tracing configures OpenTelemetry spans per job.
	Tracing Tracing `mapstructure:"tracing"`
	// Pulse configures the rows written for Laravel Pulse's dashboard.
	Pulse Pulse `mapstructure:"pulse"`

	// envFile is the .env file read ("" for none).
	envFile string
	// defaultQueue is the connection's queue setting (DB_QUEUE) as loaded; see DefaultQueue.
	defaultQueue string
	// configured is the connection the .env, the YAML file and the environment name, when the
	// connection argument of queue:work overrides it; "" otherwise.
	configured string
	// nullConnection says the default connection is PHP's null (QUEUE_CONNECTION=null or (null)), which
	// QueueManager takes as the null driver: Connection is then "null", and PHP shows the name empty.
	nullConnection bool
	// notes are observations made while loading (such as an unknown ARTISAN_GO_ variable) that are
	// reported by Warnings.
	notes []string
	// sources says where each key that is not at its default was set, for Validate's messages.
	sources map[string]string
	// cachedConfig is the cached configuration read (php artisan config:cache), "" when none.
	cachedConfig string
	// unevaluated are the settings the config files give as code the reader does not evaluate, and
	// nothing else gives (each is noted).
	unevaluated []string
	// drivers is the driver of each queue connection of the application, as read from the cached
	// configuration or config/queue.php (with, from Laravel 11, the framework's own merged in); nil when
	// neither lists them all. A driver the reader does not evaluate is "". driversWhere names the file.
	drivers      map[string]string
	driversWhere string
}

// CachedConfig is the file `php artisan config:cache` wrote that the configuration was read from
// instead of .env's Laravel variables, or "" when there is none.
func (c *Config) CachedConfig() string { return c.cachedConfig }

// EnvFile returns the .env file read, or "" when none was.
func (c *Config) EnvFile() string { return c.envFile }

// DB is the database connection, as in Laravel's config/database.php.
type DB struct {
	// Driver is mysql, mariadb, pgsql or sqlite. Set by DB_CONNECTION, which names a connection in
	// Laravel's skeleton that has the same name as its driver. Default "mysql" for Laravel before 11,
	// "sqlite" from 11 on.
	Driver string `mapstructure:"driver"`
	// Host is the server's host. DB_HOST. Default "127.0.0.1".
	Host string `mapstructure:"host"`
	// Port is the server's TCP port. DB_PORT. Default 3306 for mysql and mariadb, 5432 for pgsql, 0 for
	// sqlite.
	Port int `mapstructure:"port"`
	// Database is the database name, or for sqlite the file's path. DB_DATABASE. Default "forge" before
	// Laravel 11, "laravel" from 11 on; for sqlite Laravel's database_path('database.sqlite'), i.e.
	// database/database.sqlite under the application's base directory. A relative sqlite path is
	// resolved against the directory of the file that set it (the .env file's directory is Laravel's
	// base path, where `php artisan` runs), or against the working directory when it came from the
	// environment or a flag. ":memory:" and "file:" URIs are kept as they are.
	Database string `mapstructure:"database"`
	// Username is the user to connect as. DB_USERNAME. Default "forge" before Laravel 11, "root" from 11 on.
	Username string `mapstructure:"username"`
	// Password is the user's password. DB_PASSWORD. Default "".
	Password string `mapstructure:"password"`
	// Socket is a Unix socket path that replaces Host and Port (MySQL/MariaDB). DB_SOCKET. Default "".
	Socket string `mapstructure:"socket"`
	// Schema is PostgreSQL's search_path (a comma-separated list of schemas). DB_SCHEMA. Default "":
	// the server's default search_path.
	Schema string `mapstructure:"schema"`
	// Prefix is the connection's table prefix (config/database.php's prefix, e.g. "app_"): Laravel's
	// query builder puts it before every table name, so the jobs table is then app_jobs, and the
	// worker does the same for every name under tables. Read from the cached configuration; Laravel's
	// skeleton has no .env key for it. Default "".
	Prefix string `mapstructure:"prefix"`
	// PrefixIndexes says whether the schema builder also put Prefix before index names
	// (prefix_indexes), which decides the names queue:migrate-index gives. Default true for mysql,
	// mariadb and pgsql and false for sqlite when Prefix is set, as in Laravel's skeleton; false
	// without a prefix, where it changes nothing.
	PrefixIndexes bool `mapstructure:"prefix_indexes"`
	// SSLMode is PostgreSQL's sslmode (disable, allow, prefer, require, verify-ca, verify-full), as
	// the connection's sslmode key or the url's sslmode option gives it; SSLRootCert, SSLCert and
	// SSLKey are its sslrootcert, sslcert and sslkey files. Read from the cached configuration or
	// db.url; Laravel's skeleton has no .env key for them. Default "": prefer, the skeleton's.
	SSLMode     string `mapstructure:"sslmode"`
	SSLRootCert string `mapstructure:"sslrootcert"`
	SSLCert     string `mapstructure:"sslcert"`
	SSLKey      string `mapstructure:"sslkey"`
	// SSLCA is MySQL's and MariaDB's CA file, the skeleton's PDO::MYSQL_ATTR_SSL_CA option: the
	// connection uses TLS and checks the server's certificate with it. MYSQL_ATTR_SSL_CA. Default "".
	SSLCA string `mapstructure:"ssl_ca"`
	// Version overrides the server version used to pick the claim query, as Laravel's `version`
	// connection key does (e.g. "8.0.36" or "10.6.0-MariaDB"). Default "": ask the server.
	Version string `mapstructure:"version"`
	// DSN is an optional Go driver DSN that wins over the parts above. Default "".
	DSN string `mapstructure:"dsn"`
	// URL is the connection's url (DATABASE_URL before Laravel 11, DB_URL from 11 on), e.g.
	// "mysql://user:p%40ss@db.internal:3307/shop": as Laravel's ConfigurationUrlParser merges it, its
	// scheme (postgres and postgresql are pgsql), host, port, user, password and path (the database)
	// replace the parts above, and its unix_socket and search_path (or schema) query options replace
	// Socket and Schema. Default "".
	URL string `mapstructure:"url"`
}

// Tables are Laravel's table names. Each must be a plain SQL identifier.
type Tables struct {
	// Jobs is the queue table. DB_QUEUE_TABLE (Laravel 11+). Default "jobs".
	Jobs string `mapstructure:"jobs"`
	// FailedJobs is queue.failed.table. Default "failed_jobs".
	FailedJobs string `mapstructure:"failed_jobs"`
	// JobBatches is queue.batching.table. Default "job_batches".
	JobBatches string `mapstructure:"job_batches"`
	// Cache is the database cache store's table. DB_CACHE_TABLE (Laravel 11+). Default "cache".
	Cache string `mapstructure:"cache"`
	// CacheLocks is the database cache store's lock table. DB_CACHE_LOCK_TABLE (Laravel 11+). Default
	// "cache_locks".
	CacheLocks string `mapstructure:"cache_locks"`
}

// Worker holds the options of `php artisan queue:work`, with Laravel's defaults, and ours.
type Worker struct {
	// Queues are the queues to serve, in strict priority order (--queue). DB_QUEUE. Default ["default"].
	// Names are trimmed: --queue="high, low" works "low", where PHP's worker looks for " low".
	Queues []string `mapstructure:"queues"`
	// Sleep is how long to wait when every queue is empty (--sleep). Default 3s.
	Sleep time.Duration `mapstructure:"sleep"`
	// Tries is the maximum number of attempts for a job that does not say (--tries); 0 is unlimited.
	// Default 1 (0 before Laravel 6, as `queue:work` had then).
	Tries int `mapstructure:"tries"`
	// Timeout is how long one job may run (--timeout); 0 is no limit. Default 60s.
	Timeout time.Duration `mapstructure:"timeout"`
	// Backoff is the delay in seconds before a failed attempt is retried, indexed by attempt and
	// clamped to the last element (--backoff). Default [0].
	Backoff []int `mapstructure:"backoff"`
	// MaxJobs stops the worker after this many jobs (--max-jobs); 0 is no limit. Default 0.
	MaxJobs int `mapstructure:"max_jobs"`
	// MaxTime stops the worker after it has run this long (--max-time); 0 is no limit. Default 0.
	MaxTime time.Duration `mapstructure:"max_time"`
	// StopWhenEmpty stops the worker when every queue is empty (--stop-when-empty). Default false.
	StopWhenEmpty bool `mapstructure:"stop_when_empty"`
	// StopWhenEmptyFor stops the worker once every queue has been empty this long since its last job
	// finished, or since it started (--stop-when-empty-for, Laravel 11.53, 12.60 and 13.10); 0 never.
	// Default 0.
	StopWhenEmptyFor time.Duration `mapstructure:"stop_when_empty_for"`
	// Once runs a single job and stops (--once). Default false.
	Once bool `mapstructure:"once"`
	// Rest is a pause after each job (--rest). Default 0.
	Rest time.Duration `mapstructure:"rest"`
	// MemoryMB stops the worker when the process uses more memory than this (--memory); 0 disables the
	// check. Default 128.
	MemoryMB int `mapstructure:"memory_mb"`
	// Name is the worker's name, as --name passes it to Laravel's events. Default "default".
	Name string `mapstructure:"name"`
	// Force runs the worker while the application is in maintenance mode (--force). Default false.
	Force bool `mapstructure:"force"`
	// Concurrency is how many jobs run at once in this process, each on a goroutine of its own.
	// Default DefaultConcurrency (256): one process drains a busy queue without help, and its claims
	// (which follow the concurrency, see ClaimBatch) carry enough rows per commit for servers that flush
	// every commit. Set 1 for Laravel's behaviour, one job at a time per process: job code ported from
	// PHP that relies on never running beside itself (ordering within a queue, a shared resource, an
	// external command that is heavy) needs it, or a lower number.
	Concurrency int `mapstructure:"concurrency"`
	// RetryAfter is the connection's retry_after: a job reserved longer than this is handed to another
	// worker. It must be what the PHP application's config/queue.php says. DB_QUEUE_RETRY_AFTER.
	// Default 90s, the skeleton's value.
	RetryAfter time.Duration `mapstructure:"retry_after"`
	// Strategy names the claim strategy of the laravel package; "" (default) lets the worker choose at
	// start from the database and its version.
	Strategy string `mapstructure:"strategy"`
	// ClaimBatch is how many rows a batching claim strategy (batch) takes per round trip and hands out
	// to this worker's free slots; 0 (default) is the worker's Concurrency, so that one process
	// reserves at most as many rows as it can run at once. Larger batches mean fewer commits per job,
	// and so more jobs per second on servers that flush every commit, at the price of more jobs
	// reserved ahead by one process.
	ClaimBatch int `mapstructure:"claim_batch"`
	// ClaimLanes is how many claim-and-delete cycles the batch strategy runs side by side, each with
	// its share of the Concurrency and of the ClaimBatch, so that one cycle's transaction runs while
	// another's jobs run and, on a second connection, beside another cycle's transaction. Two suit
	// one process alone on a server with SKIP LOCKED (MySQL 8.0.1+, MariaDB 10.6+, PostgreSQL);
	// several processes on one server ran slower with two each. 0 (default): two for one process per
	// jobs table and server, while it runs at least 256 jobs at once, and one for the others (a lock
	// of its session on the server tells them apart). 1: one. Never more lanes than jobs at once.
	ClaimLanes int `mapstructure:"claim_lanes"`
	// ShutdownGrace bounds how long a stopping worker waits for running jobs before it cancels them;
	// cancelled jobs are handed back. Default 0: wait for each job up to its timeout, as Laravel's
	// worker finishes the current job on SIGTERM.
	ShutdownGrace time.Duration `mapstructure:"shutdown_grace"`
	// BatchCompanion is the PHP job class that runs a batch's then/catch/finally callbacks when a Go
	// worker finishes the batch's jobs (copy testdata/laravel/app/Jobs/RunBatchCallbacks.php into the
	// app). Default "": jobs of batches with callbacks are left to PHP workers.
	BatchCompanion string `mapstructure:"batch_companion"`
	// FailedCompanion is the PHP job class that runs a failed job's chain catch callbacks and failed()
	// method when a Go worker fails it (copy testdata/laravel/app/Jobs/RunFailedHooks.php into the app).
	// Default "": those hooks do not run.
	FailedCompanion string `mapstructure:"failed_companion"`
	// RunUnknownMiddleware lists job classes that run here even though their middleware property holds
	// job middleware artisan-go does not apply (FailOnException, the application's own);
	// those are then skipped. Default none: such jobs are left to PHP workers.
	RunUnknownMiddleware []string `mapstructure:"run_unknown_middleware"`
	// DontRetry lists the PHP exception classes the application's exception handler names with
	// dontRetry (Laravel 13.17+): a job whose error names one of them (its PHPClass method) fails at
	// once instead of being retried. Default none.
	DontRetry []string `mapstructure:"dont_retry"`
	// DeleteWhenMissingModels lists the classes that set $deleteWhenMissingModels (or, in 12.x, carry
	// the DeleteWhenMissingModels attribute): up to 12.x PHP reads it from the class, which Laravel 9.4+
	// leaves out of the payload when it is the class's default (and a queued listener's payload never
	// holds), and deletes such a job whose model is gone instead of failing it. Before 12.0 name the
	// class the job is displayed as (the job, mailable, notification or listener), from 12.0 the job's
	// own class; 13.x reads the payload's key instead. Default none.
	DeleteWhenMissingModels []string `mapstructure:"delete_when_missing_models"`
	// MaintenanceFile is the file `php artisan down` writes with the file maintenance driver (Laravel
	// 8's only driver, the default after): while it exists no job is claimed unless Force. Default
	// storage/framework/down next to the .env file (--env-file, or the working directory's), else in
	// the working directory when it is the application's (it holds artisan); "" without either.
	MaintenanceFile string `mapstructure:"maintenance_file"`
}

// App holds the Laravel application settings the worker needs.
type App struct {
	// Name is APP_NAME; it seeds the default cache and Redis prefixes. Default "Laravel".
	Name string `mapstructure:"name"`
	// Key is APP_KEY ("base64:..." or a raw key), used to decrypt encrypted jobs. Default "".
	Key string `mapstructure:"key"`
	// PreviousKeys are APP_PREVIOUS_KEYS (comma-separated), tried when Key fails. Default none.
	PreviousKeys []string `mapstructure:"previous_keys"`
	// Cipher is AES-128-CBC, AES-256-CBC, AES-128-GCM or AES-256-GCM. APP_CIPHER. Default "AES-256-CBC".
	Cipher string `mapstructure:"cipher"`
	// Timezone is the application time zone, used for failed_jobs.failed_at. APP_TIMEZONE. Default "UTC".
	Timezone string `mapstructure:"timezone"`
	// Env is APP_ENV; in "production" queue:clear asks before deleting, as Laravel's confirmable
	// commands do. Default "production", as config/app.php has it.
	Env string `mapstructure:"env"`
	// MaintenanceDriver is config/app.php's maintenance.driver (Laravel 9+): "file", where php artisan
	// down writes storage/framework/down, or "cache", where it writes illuminate:foundation:down in
	// MaintenanceStore. APP_MAINTENANCE_DRIVER from 11. Default "": not known, and both are looked at
	// (the cache key in the default store).
	MaintenanceDriver string `mapstructure:"maintenance_driver"`
	// MaintenanceStore is maintenance.store, the cache store the cache driver uses ("" is the default
	// store). APP_MAINTENANCE_STORE from 11. Default "" before 11, "database" from 11 (the
	// framework's config/app.php); a config/app.php whose maintenance array has no store gives "".
	MaintenanceStore string `mapstructure:"maintenance_store"`
}

// Cache is Laravel's default cache store.
type Cache struct {
	// Store is the store's driver. The worker reads restart signals and unique locks from the
	// "database", "redis", "file" and "memcached" stores; with any other they cannot be seen (a
	// warning).
	// CACHE_DRIVER before Laravel 11, CACHE_STORE from 11 on. Default "file" before 11, "database"
	// from 11 on.
	Store string `mapstructure:"store"`
	// Prefix is the cache key prefix. CACHE_PREFIX. Default, as the skeleton's config/cache.php of the
	// version computes it from APP_NAME: "laravel" (5.4), Str::slug(APP_NAME, '_') followed by "_cache"
	// (5.5–8.x) or "_cache_" (9.x to 12.19), and Str::slug(APP_NAME) followed by "-cache-" from 12.20
	// (the skeleton of June 2025). The file is the application's own, so when in doubt set it.
	Prefix string `mapstructure:"prefix"`
	// Redis is the Redis connection of the redis store.
	Redis Redis `mapstructure:"redis"`
	// File is where the file store keeps its files.
	File FileStore `mapstructure:"file"`
	// Memcached is the memcached store's servers.
	Memcached Memcached `mapstructure:"memcached"`
}

// Memcached is the memcached cache store's servers: the skeleton's one (MEMCACHED_HOST,
// MEMCACHED_PORT), or the pool of config/cache.php's servers list. SASL authentication
// (MEMCACHED_USERNAME) needs memcached's binary protocol, which artisan-go does not speak: the worker
// refuses to start with it.
type Memcached struct {
	// Host is MEMCACHED_HOST. Default "127.0.0.1".
	Host string `mapstructure:"host"`
	// Port is MEMCACHED_PORT. Default 11211.
	Port int `mapstructure:"port"`
	// Username is MEMCACHED_USERNAME (SASL). Default "" (none).
	Username string `mapstructure:"username"`
	// Servers is config/cache.php's servers list when it names more than the skeleton's one server:
	// "host:port:weight" each ("[::1]:11211:100" for IPv6; the weight, 100 when left out, counts only
	// with consistent hashing), in the file's order, which decides where each key goes. Set, it
	// replaces host and port. Default none.
	Servers []string `mapstructure:"servers"`
	// Distribution is how PHP's memcached extension spreads keys over the servers, from
	// config/cache.php's options: "modula" (the extension's default), "consistent"
	// (Memcached::OPT_DISTRIBUTION => Memcached::DISTRIBUTION_CONSISTENT, or the ini setting
	// memcached.default_consistent_hash) or "ketama" (Memcached::OPT_LIBKETAMA_COMPATIBLE => true).
	// It matters only with several servers. Default "modula".
	Distribution string `mapstructure:"distribution"`
}

// MemcachedServer is one server of the memcached store's pool.
type MemcachedServer struct {
	Host   string
	Port   int
	Weight int
}

// Pool is the memcached store's servers: Servers when set, otherwise Host and Port with the
// skeleton's weight. An entry that does not parse is left out; Validate reports it.
func (m Memcached) Pool() []MemcachedServer {
	if len(m.Servers) == 0 {
		return []MemcachedServer{{Host: m.Host, Port: m.Port, Weight: 100}}
	}
	var out []MemcachedServer
	for _, e := range m.Servers {
		if s, err := parseMemcachedServer(e); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// ReachedStores are the cache store drivers artisan-go reads and writes as PHP does.
var ReachedStores = []string{"database", "redis", "file", "memcached"}

// Reached reports whether artisan-go reads and writes the store (see ReachedStores).
func (c Cache) Reached() bool { return slices.Contains(ReachedStores, c.Store) }

// InProcess reports whether the store is the array store, which lives in each process's memory (PHP's
// worker's as much as artisan-go's): a worker keeps its own, which no other process reaches.
func (c Cache) InProcess() bool { return c.Store == "array" }

// FileStore is where the file cache store keeps its files; the worker must run on a host that
// reaches them (the application's own, or a shared volume).
type FileStore struct {
	// Path is config/cache.php's stores.file.path. Default storage/framework/cache/data beside the
	// .env file; a relative path is relative to the file that sets it.
	Path string `mapstructure:"path"`
	// LockPath is stores.file.lock_path (Laravel 10.x on), where the store keeps its locks. Default
	// "": the same directory, as every skeleton has it.
	LockPath string `mapstructure:"lock_path"`
	// Permission is stores.file.permission, in octal ("0664"): the mode PHP gives each cache file it
	// writes and each directory it creates, which the worker gives them too. Default "": as the
	// umask makes them.
	Permission string `mapstructure:"permission"`
}

// Redis is the Redis connection the redis cache store uses.
type Redis struct {
	// Host is REDIS_HOST. Default "127.0.0.1".
	Host string `mapstructure:"host"`
	// Port is REDIS_PORT. Default 6379.
	Port int `mapstructure:"port"`
	// Username is REDIS_USERNAME (Redis 6+ ACL users; the skeleton's since Laravel 9). Default "":
	// AUTH with the password alone.
	Username string `mapstructure:"username"`
	// Password is REDIS_PASSWORD. Default "" (none).
	Password string `mapstructure:"password"`
	// URL is REDIS_URL, which both of the skeleton's Redis connections read: what it gives (scheme,
	// user, password, host, port, /database) replaces the settings above, as Laravel's
	// ConfigurationUrlParser does; rediss:// (or tls://) connects over TLS. Default "".
	URL string `mapstructure:"url"`
	// TLS connects over TLS, as a connection whose scheme is tls does (rediss:// in REDIS_URL sets
	// it). Default false.
	TLS bool `mapstructure:"tls"`
	// CAFile is a PEM file of the certificate authorities that sign the server's certificate over
	// TLS (phpredis's context cafile); "" trusts the system's. Default "".
	CAFile string `mapstructure:"ca_file"`
	// DB is the database number of the cache connection: REDIS_CACHE_DB, default 1 (Laravel 5.7 on);
	// REDIS_DB, default 0, before.
	DB int `mapstructure:"db"`
	// LockDB is the database number of the store's lock connection, where unique-job locks live: the
	// skeleton's lock_connection is "default", so REDIS_DB, default 0 (Laravel 8 on); before 8, DB.
	LockDB int `mapstructure:"lock_db"`
	// Prefix is the Redis client's key prefix, put before the cache prefix. REDIS_PREFIX. Default
	// Str::slug(APP_NAME, '_') followed by "_database_" (Laravel 5.8 to 12.19), Str::slug(APP_NAME)
	// followed by "-database-" from 12.20, "" before 5.8.
	Prefix string `mapstructure:"prefix"`
}

// Failed selects the failed-job provider, as queue.failed.driver does.
type Failed struct {
	// Driver is "database-uuids" (default from Laravel 8: failed_jobs has a uuid column), "database"
	// (numeric ids only, the only kind before 8) or "null" (failed jobs are not recorded).
	// QUEUE_FAILED_DRIVER (Laravel 6+).
	Driver string `mapstructure:"driver"`
}

// Route binds a job class to a handler that is not Go code; the stock binary reads these from YAML.
// Exactly one of Exec, HTTP and Builtin is set.
type Route struct {
	// Class is the PHP job class (commandName, or the class of a raw Class@method job).
	Class string `mapstructure:"class"`
	// Exec is the argv of a command run for each job, with the job as JSON on its standard input.
	// No shell is involved.
	Exec []string `mapstructure:"exec"`
	// HTTP is a URL the job is POSTed to as JSON.
	HTTP string `mapstructure:"http"`
	// Builtin names a handler compiled into the binary: "noop".
	Builtin string `mapstructure:"builtin"`
	// Timeout bounds one run of the route, within the job's own timeout; 0 means the job's timeout.
	Timeout time.Duration `mapstructure:"timeout"`
	// UniqueID computes the uniqueId of a ShouldBeUnique class whose uniqueId() is a PHP method from
	// the command's properties, e.g. "{reportId}", so that the worker releases the lock PHP took.
	UniqueID string `mapstructure:"unique_id"`
	// UniqueUntilProcessing marks a ShouldBeUniqueUntilProcessing class.
	UniqueUntilProcessing bool `mapstructure:"unique_until_processing"`
}

// Model names the table (and key column, and database connection) of a model class whose rows the
// worker looks up before running a SerializesModels job.
type Model struct {
	// Class is the model class, e.g. App\Models\Person.
	Class string `mapstructure:"class"`
	// Table is the model's table ($table in PHP).
	Table string `mapstructure:"table"`
	// Key is the primary key column ($primaryKey); empty is id.
	Key string `mapstructure:"key"`
	// Connection is the model's connection name ($connection), when the job does not carry one.
	Connection string `mapstructure:"connection"`
}

// UniqueVia is the cache store a ShouldBeUnique class's uniqueVia() returns.
type UniqueVia struct {
	// Class is the job class, e.g. App\Jobs\BuildReport.
	Class string `mapstructure:"class"`
	// Store is the store's name in config/cache.php: database, redis, file or memcached.
	Store string `mapstructure:"store"`
}

// Log configures the worker's own log.
type Log struct {
	// Format is "text" (default) or "json".
	Format string `mapstructure:"format"`
	// Level is "debug", "info" (default), "warn" or "error".
	Level string `mapstructure:"level"`
	// Flush is how long log lines may wait in memory before they are written out together, so that a
	// busy worker does not pay a write system call for each of its two lines per job. Lines are also
	// written when the buffer fills and when the process stops. Default DefaultLogFlush (200ms);
	// 0 writes every line at once.
	Flush time.Duration `mapstructure:"flush"`
	// Console is what queue:work prints on standard output for each job: "laravel" (default), the
	// lines PHP's `queue:work` prints for laravel_version ("[date][id] Processing: App\Jobs\X" up to
	// 9.20, "  date App\Jobs\X ..... 1.23ms DONE" from 9.21), or "off". --json prints Laravel 11.27+'s
	// JSON lines instead, and -q nothing, as in PHP.
	Console string `mapstructure:"console"`
	// OutputTimezone is Laravel 9.49+'s queue.output_timezone: the time zone of the times queue:work
	// prints (its per-job lines and --json's timestamp) when it is not the app's. PHP reads it from
	// config/queue.php, which has no variable for it, so here it is read from the cached
	// configuration, or set in YAML or ARTISAN_GO_LOG_OUTPUT_TIMEZONE. Default "": the app's zone.
	OutputTimezone string `mapstructure:"output_timezone"`
	// Channel is the application's log channel (LOG_CHANNEL), where PHP's exception handler reports
	// the exceptions of the jobs it runs. Default "stack" (the skeleton's, a stack of "single").
	Channel string `mapstructure:"channel"`
	// LaravelFile is the application's log file, to which queue:work appends each job exception as
	// PHP's handler reports it (Monolog's line: "[date] env.ERROR: message {"exception":...}"); "{date}"
	// in it is the day, as the daily channel names its files. Only a file that exists is written: one
	// the worker created could leave PHP, running as another user, unable to write its own log.
	// Default from Channel, beside the .env file: "stack" and "single" storage/logs/laravel.log, "daily"
	// storage/logs/laravel-{date}.log; any other channel, or "off", writes none.
	LaravelFile string `mapstructure:"laravel_file"`
}

// DefaultConcurrency is worker.concurrency when nothing sets it.
const DefaultConcurrency = 256

// DefaultLogFlush is log.flush when nothing sets it.
const DefaultLogFlush = 200 * time.Millisecond

// Metrics configures the HTTP endpoints `queue:work` serves: /metrics (Prometheus text format),
// /healthz and /readyz.
type Metrics struct {
	// Addr is the host:port to listen on (--metrics-addr), e.g. "127.0.0.1:9090". Default "": no
	// endpoints.
	Addr string `mapstructure:"addr"`
	// Classes are the job classes that get their own class label; others are counted as "other".
	// Default none: the classes this worker has handlers or routes for.
	Classes []string `mapstructure:"classes"`
	// SampleInterval is how often each queue's depth and head age are read from the database.
	// Default 15s.
	SampleInterval time.Duration `mapstructure:"sample_interval"`
	// StuckAfter is how long the worker may go without a working claim while it has free slots,
	// beyond its --sleep, before /readyz fails. Default 60s.
	StuckAfter time.Duration `mapstructure:"stuck_after"`
}

// Tracing configures OpenTelemetry: one span per job, continuing the trace a Laravel app put in the
// job's Context (a "traceparent" value).
type Tracing struct {
	// OTLPEndpoint is an OTLP/HTTP traces endpoint, e.g. "http://127.0.0.1:4318/v1/traces". Default
	// "": no spans.
	OTLPEndpoint string `mapstructure:"otlp_endpoint"`
	// ServiceName is the service.name resource attribute. Default "artisan-go".
	ServiceName string `mapstructure:"service_name"`
}

// Pulse configures the rows artisan-go writes for Laravel Pulse's Queues and SlowJobs cards.
type Pulse struct {
	// Mode is "auto" (write when the pulse_entries and pulse_aggregates tables exist) or "off".
	// Default "auto".
	Mode string `mapstructure:"mode"`
	// SlowJobThreshold is Pulse's SlowJobs threshold (pulse.recorders.SlowJobs.threshold). Default 1s.
	SlowJobThreshold time.Duration `mapstructure:"slow_job_threshold"`
	// FlushInterval is how often the recorded rows are written, in one transaction. Default 1s.
	FlushInterval time.Duration `mapstructure:"flush_interval"`
}

// DefaultQueue returns the connection's default queue, queue.connections.<connection>.queue in
// Laravel: DB_QUEUE (from the .env file or the environment), or "default". Laravel pushes a job that
// names no queue there, including the next job of a chain without chainQueue. It differs from
// Worker.Queues when --queue (or worker.queues) chooses other queues to work.
func (c *Config) DefaultQueue() string {
	if c.defaultQueue == "" {
		return "default"
	}
	return c.defaultQueue
}

// DefaultConnection returns the application's default queue connection (queue.default, in Laravel
// QUEUE_CONNECTION), where PHP dispatches a job that names none, such as a chain's next link. It
// differs from Connection when queue:work's connection argument names another.
func (c *Config) DefaultConnection() string {
	if c.configured != "" {
		return c.configured
	}
	return c.Connection
}

// DefaultLaravelVersion is the Laravel version assumed when none is configured.
const DefaultLaravelVersion = "8.83"

// Default returns the configuration used when nothing is set: Laravel 8.83's skeleton and `queue:work`
// defaults. Load changes the defaults that depend on the Laravel version or the database driver when
// those are set and the dependent key is not.
func Default() Config {
	return Config{
		Connection:     "database",
		LaravelVersion: DefaultLaravelVersion,
		DB: DB{
			Driver:   "mysql",
			Host:     "127.0.0.1",
			Port:     3306,
			Database: "forge",
			Username: "forge",
		},
		Tables: Tables{
			Jobs:       "jobs",
			FailedJobs: "failed_jobs",
			JobBatches: "job_batches",
			Cache:      "cache",
			CacheLocks: "cache_locks",
		},
		Worker: Worker{
			Queues:      []string{"default"},
			Sleep:       3 * time.Second,
			Tries:       1,
			Timeout:     60 * time.Second,
			Backoff:     []int{0},
			MemoryMB:    128,
			Name:        "default",
			Concurrency: DefaultConcurrency,
			RetryAfter:  90 * time.Second,
		},
		App: App{
			Name:     "Laravel",
			Cipher:   "AES-256-CBC",
			Timezone: "UTC",
			Env:      "production",
		},
		Cache: Cache{
			Store:     "file",
			Prefix:    "laravel_cache",
			Memcached: Memcached{Host: "127.0.0.1", Port: 11211, Distribution: "modula"},
			Redis: Redis{
				Host:   "127.0.0.1",
				Port:   6379,
				DB:     1,
				Prefix: "laravel_database_",
			},
		},
		Failed:    Failed{Driver: "database-uuids"},
		Unhandled: "leave",
		Log:       Log{Format: "text", Level: "info", Flush: DefaultLogFlush, Console: "laravel", Channel: "stack"},
		Metrics:   Metrics{Classes: []string{}, SampleInterval: 15 * time.Second, StuckAfter: 60 * time.Second},
		Tracing:   Tracing{ServiceName: "artisan-go"},
		Pulse:     Pulse{Mode: "auto", SlowJobThreshold: time.Second, FlushInterval: time.Second},
	}
}

// ConnectionShown is the default connection's name as PHP's commands print it: "" when it is PHP's
// null (QUEUE_CONNECTION=null), else Connection.
func (c *Config) ConnectionShown() string {
	if c.nullConnection && c.Connection == "null" {
		return ""
	}
	return c.Connection
}
