package config

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(c *Config)
		field  string
		want   []string
	}{
		{"empty connection", func(c *Config) { c.Connection = " " }, "connection", []string{"QUEUE_CONNECTION", "is empty"}},
		{"bad version", func(c *Config) { c.LaravelVersion = "eight" }, "laravel_version", []string{"ARTISAN_GO_LARAVEL_VERSION", "not a Laravel version"}},
		{"too old version", func(c *Config) { c.LaravelVersion = "4.2" }, "laravel_version", []string{"5.4"}},
		{"unknown driver", func(c *Config) { c.DB.Driver = "oracle" }, "db.driver", []string{"DB_CONNECTION", `unknown driver "oracle"`, "mysql, mariadb, pgsql, sqlite"}},
		{"postgres spelling", func(c *Config) { c.DB.Driver = "postgres" }, "db.driver", []string{`use "pgsql"`}},
		{"sql server", func(c *Config) { c.DB.Driver = "sqlsrv" }, "db.driver", []string{"not supported"}},
		{"port too high", func(c *Config) { c.DB.Port = 70000 }, "db.port", []string{"DB_PORT", "70000 is not a TCP port"}},
		{"port zero over TCP", func(c *Config) { c.DB.Port = 0 }, "db.port", []string{"0 is not a TCP port"}},
		{"negative port", func(c *Config) { c.DB.Port = -1 }, "db.port", []string{"-1"}},
		{"empty host", func(c *Config) { c.DB.Host = "" }, "db.host", []string{"DB_HOST", "is empty"}},
		{"empty database", func(c *Config) { c.DB.Database = "" }, "db.database", []string{"DB_DATABASE", "database name"}},
		{"empty sqlite path", func(c *Config) { c.DB.Driver, c.DB.Port, c.DB.Database = "sqlite", 0, "" }, "db.database", []string{"SQLite file"}},
		{"bad schema", func(c *Config) { c.DB.Schema = "public; drop" }, "db.schema", []string{"not a schema name"}},
		{"jobs table not an identifier", func(c *Config) { c.Tables.Jobs = "jobs; drop table x" }, "tables.jobs", []string{"DB_QUEUE_TABLE", "not a plain table name"}},
		{"failed_jobs table with a dot", func(c *Config) { c.Tables.FailedJobs = "x.failed" }, "tables.failed_jobs", []string{"not a plain table name"}},
		{"job_batches table empty", func(c *Config) { c.Tables.JobBatches = "" }, "tables.job_batches", []string{"not a plain table name"}},
		{"cache table with a digit first", func(c *Config) { c.Tables.Cache = "1cache" }, "tables.cache", []string{"not a plain table name"}},
		{"cache_locks table too long", func(c *Config) { c.Tables.CacheLocks = strings.Repeat("x", 65) }, "tables.cache_locks", []string{"at most 64"}},
		{"unknown sslmode", func(c *Config) { c.DB.SSLMode = "on" }, "db.sslmode", []string{`"on" is not a PostgreSQL sslmode`, "verify-full"}},
		{"prefix with a dot", func(c *Config) { c.DB.Prefix = "app." }, "db.prefix", []string{`"app." is not a plain table prefix`, "app_"}},
		{"prefixed table too long", func(c *Config) { c.DB.Prefix = strings.Repeat("p", 60) }, "tables.failed_jobs", []string{`behind db.prefix`, "71 characters", "at most 64"}},
		{"no queues", func(c *Config) { c.Worker.Queues = nil }, "worker.queues", []string{"DB_QUEUE", "is empty"}},
		{"queue with a comma", func(c *Config) { c.Worker.Queues = []string{"a,b"} }, "worker.queues", []string{`"a,b"`}},
		{"negative sleep", func(c *Config) { c.Worker.Sleep = -time.Second }, "worker.sleep", []string{"negative"}},
		{"negative tries", func(c *Config) { c.Worker.Tries = -1 }, "worker.tries", []string{"ARTISAN_GO_WORKER_TRIES", "negative"}},
		{"negative timeout", func(c *Config) { c.Worker.Timeout = -1 }, "worker.timeout", []string{"negative"}},
		{"negative max_jobs", func(c *Config) { c.Worker.MaxJobs = -1 }, "worker.max_jobs", []string{"negative"}},
		{"negative max_time", func(c *Config) { c.Worker.MaxTime = -1 }, "worker.max_time", []string{"negative"}},
		{"negative rest", func(c *Config) { c.Worker.Rest = -1 }, "worker.rest", []string{"negative"}},
		{"negative memory", func(c *Config) { c.Worker.MemoryMB = -1 }, "worker.memory_mb", []string{"negative"}},
		{"negative shutdown grace", func(c *Config) { c.Worker.ShutdownGrace = -1 }, "worker.shutdown_grace", []string{"negative"}},
		{"empty backoff", func(c *Config) { c.Worker.Backoff = nil }, "worker.backoff", []string{"is empty"}},
		{"negative backoff", func(c *Config) { c.Worker.Backoff = []int{1, -5} }, "worker.backoff", []string{"-5 is negative"}},
		{"empty name", func(c *Config) { c.Worker.Name = "" }, "worker.name", []string{"is empty"}},
		{"claim batch negative", func(c *Config) { c.Worker.ClaimBatch = -1 }, "worker.claim_batch", []string{"ARTISAN_GO_WORKER_CLAIM_BATCH", "outside 0..1000"}},
		{"claim batch too large", func(c *Config) { c.Worker.ClaimBatch = 5000 }, "worker.claim_batch", []string{"outside 0..1000"}},
		{"claim lanes negative", func(c *Config) { c.Worker.ClaimLanes = -1 }, "worker.claim_lanes", []string{"ARTISAN_GO_WORKER_CLAIM_LANES", "outside 0..8"}},
		{"claim lanes too many", func(c *Config) { c.Worker.ClaimLanes = 9 }, "worker.claim_lanes", []string{"outside 0..8"}},
		{"concurrency zero", func(c *Config) { c.Worker.Concurrency = 0 }, "worker.concurrency", []string{"ARTISAN_GO_WORKER_CONCURRENCY", "less than 1"}},
		{"log flush negative", func(c *Config) { c.Log.Flush = -time.Second }, "log.flush", []string{"ARTISAN_GO_LOG_FLUSH", "outside"}},
		{"retry_after zero", func(c *Config) { c.Worker.RetryAfter = 0 }, "worker.retry_after", []string{"DB_QUEUE_RETRY_AFTER", "not positive"}},
		{"bad strategy", func(c *Config) { c.Worker.Strategy = "Skip Locked" }, "worker.strategy", []string{"not a strategy name"}},
		{"unique_via store unknown", func(c *Config) { c.UniqueVia = []UniqueVia{{Class: `App\Jobs\X`, Store: "dynamodb"}} }, "unique_via[0].store", []string{`"dynamodb" is not a cache store`, "redis"}},
		{"unique_via class twice", func(c *Config) {
			c.UniqueVia = []UniqueVia{{Class: `App\Jobs\X`, Store: "redis"}, {Class: `\App\Jobs\X`, Store: "file"}}
		}, "unique_via[1].class", []string{"named twice"}},
		{"unique_via not a class", func(c *Config) { c.UniqueVia = []UniqueVia{{Class: "App Jobs", Store: "redis"}} }, "unique_via[0].class", []string{"not a PHP class name"}},
		{"unknown time zone", func(c *Config) { c.App.Timezone = "Mars/Olympus" }, "app.timezone", []string{"APP_TIMEZONE", "unknown time zone"}},
		{"empty time zone", func(c *Config) { c.App.Timezone = "" }, "app.timezone", []string{"unknown time zone"}},
		{"rate limit without a limiter", func(c *Config) { c.RateLimiters = []RateLimit{{Allow: 1, Per: time.Minute}} }, "rate_limiters[0].limiter", []string{"is empty"}},
		{"rate limit allowing nothing", func(c *Config) { c.RateLimiters = []RateLimit{{Limiter: "x", Per: time.Minute}} }, "rate_limiters[0].allow", []string{"at least one"}},
		{"rate limit per a fraction", func(c *Config) { c.RateLimiters = []RateLimit{{Limiter: "x", Allow: 1, Per: 1500 * time.Millisecond}} }, "rate_limiters[0].per", []string{"whole seconds"}},
		{"empty cache store", func(c *Config) { c.Cache.Store = "" }, "cache.store", []string{"CACHE_DRIVER", "is empty"}},
		{"redis port", func(c *Config) { c.Cache.Store, c.Cache.Redis.Port = "redis", 0 }, "cache.redis.port", []string{"REDIS_PORT"}},
		{"redis host", func(c *Config) { c.Cache.Store, c.Cache.Redis.Host = "redis", "" }, "cache.redis.host", []string{"REDIS_HOST"}},
		{"redis db", func(c *Config) { c.Cache.Redis.DB = -1 }, "cache.redis.db", []string{"REDIS_CACHE_DB"}},
		{"file permission not octal", func(c *Config) { c.Cache.File.Permission = "0986" }, "cache.file.permission", []string{`"0986" is not an octal file mode`}},
		{"file permission too wide", func(c *Config) { c.Cache.File.Permission = "17777" }, "cache.file.permission", []string{"not an octal file mode"}},
		{"file permission none", func(c *Config) { c.Cache.File.Permission = "0" }, "cache.file.permission", []string{"no one"}},
		{"memcached server without port", func(c *Config) { c.Cache.Memcached.Servers = []string{"10.0.0.1"} }, "cache.memcached.servers", []string{`"10.0.0.1" is not host:port:weight`}},
		{"memcached server port", func(c *Config) { c.Cache.Memcached.Servers = []string{"10.0.0.1:0:100"} }, "cache.memcached.servers", []string{"not a TCP port"}},
		{"memcached server weight", func(c *Config) { c.Cache.Memcached.Servers = []string{"10.0.0.1:11211:-1"} }, "cache.memcached.servers", []string{"weight"}},
		{"memcached distribution", func(c *Config) { c.Cache.Memcached.Distribution = "random" }, "cache.memcached.distribution", []string{`"random"`, "ketama"}},
		{"unsupported failed driver", func(c *Config) { c.Failed.Driver = "dynamodb" }, "failed.driver", []string{"not supported"}},
		{"unknown failed driver", func(c *Config) { c.Failed.Driver = "db" }, "failed.driver", []string{"unknown failed-job driver"}},
		{"unknown unhandled policy", func(c *Config) { c.Unhandled = "drop" }, "unhandled", []string{`"drop" is not a policy`}},
		{"move without a queue", func(c *Config) { c.Unhandled = "move:" }, "unhandled", []string{"does not name a queue"}},
		{"move to a list", func(c *Config) { c.Unhandled = "move:a,b" }, "unhandled", []string{"does not name a queue"}},
		{"log format", func(c *Config) { c.Log.Format = "xml" }, "log.format", []string{"not a log format"}},
		{"log level", func(c *Config) { c.Log.Level = "verbose" }, "log.level", []string{"not a log level"}},
		{"route without class", func(c *Config) { c.Routes = []Route{{Builtin: "noop"}} }, "routes[0].class", []string{"is empty"}},
		{"route class not PHP", func(c *Config) { c.Routes = []Route{{Class: "App/Jobs/X", Builtin: "noop"}} }, "routes[0].class", []string{"not a PHP class name"}},
		{"route duplicate class", func(c *Config) {
			c.Routes = []Route{{Class: `App\X`, Builtin: "noop"}, {Class: `\App\X`, Builtin: "noop"}}
		}, "routes[1].class", []string{"routed twice"}},
		{"route with no target", func(c *Config) { c.Routes = []Route{{Class: "X"}} }, "routes[0]", []string{"has 0 of exec, http and builtin"}},
		{"route with two targets", func(c *Config) { c.Routes = []Route{{Class: "X", Builtin: "noop", HTTP: "http://h/"}} }, "routes[0]", []string{"has 2 of"}},
		{"route empty program", func(c *Config) { c.Routes = []Route{{Class: "X", Exec: []string{""}}} }, "routes[0].exec", []string{"empty program"}},
		{"route bad URL", func(c *Config) { c.Routes = []Route{{Class: "X", HTTP: "ftp://h/x"}} }, "routes[0].http", []string{"not an http or https URL"}},
		{"route URL without host", func(c *Config) { c.Routes = []Route{{Class: "X", HTTP: "http:///x"}} }, "routes[0].http", []string{"not an http"}},
		{"route unknown builtin", func(c *Config) { c.Routes = []Route{{Class: "X", Builtin: "sleep"}} }, "routes[0].builtin", []string{`unknown builtin "sleep"`, "noop"}},
		{"route negative timeout", func(c *Config) { c.Routes = []Route{{Class: "X", Builtin: "noop", Timeout: -1}} }, "routes[0].timeout", []string{"negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tt.mutate(&c)
			err := c.Validate()
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate() = %v, want an error wrapping ErrInvalid", err)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Validate() = %v, want a *FieldError for %s first", err, tt.field)
			}
			if fe.Fix == "" {
				t.Errorf("%v names no fix", fe)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateJoinsErrors(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Worker.Concurrency = 0
	c.DB.Driver = "oracle"
	c.Tables.Jobs = "a b"
	err := c.Validate()
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Fatalf("Validate() = %v, want 3 joined errors", err)
	}
}

func TestValidateAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(c *Config)
	}{
		{"defaults", func(*Config) {}},
		{"sqlite without host or port", func(c *Config) { c.DB = DB{Driver: "sqlite", Database: ":memory:"} }},
		{"socket without port", func(c *Config) { c.DB.Port, c.DB.Host, c.DB.Socket = 0, "", "/run/mysqld/mysqld.sock" }},
		{"DSN alone", func(c *Config) { c.DB = DB{Driver: "pgsql", DSN: "postgres://u@h/db"} }},
		{"every cipher with its key", func(c *Config) {
			c.App.Cipher, c.App.Key = "aes-128-gcm", "base64:AAAAAAAAAAAAAAAAAAAAAA=="
			c.App.PreviousKeys = []string{"0123456789abcdef"}
		}},
		{"a 32-byte raw key", func(c *Config) { c.App.Key = "0123456789abcdef0123456789abcdef" }},
		{"policies", func(c *Config) { c.Unhandled = "move:php-only" }},
		{"fail policy", func(c *Config) { c.Unhandled = "fail" }},
		{"routes", func(c *Config) {
			c.Routes = []Route{{Class: `\App\Jobs\A`, Exec: []string{"x"}}, {Class: `App\Jobs\B`, HTTP: "https://h:8443/x", Timeout: time.Second}}
		}},
		{"search path", func(c *Config) { c.DB.Schema = `"$user", public` }},
		{"prefix starting with a digit", func(c *Config) { c.DB.Prefix = "2024_" }},
		{"versions", func(c *Config) { c.LaravelVersion = "v12.54.1" }},
		{"a major's newest minor", func(c *Config) { c.LaravelVersion = "12.x" }},
		{"a development version", func(c *Config) { c.LaravelVersion = "11.0-dev" }},
		{"timeout at retry_after is a warning only", func(c *Config) { c.Worker.Timeout = c.Worker.RetryAfter }},
		{"file permission", func(c *Config) { c.Cache.File.Permission = "0o2775" }},
		{"memcached pool", func(c *Config) {
			c.Cache.Memcached.Servers = []string{"10.0.0.1:11211:100", "cache-2:11212", "[::1]:11213:0"}
			c.Cache.Memcached.Distribution = "ketama"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tt.mutate(&c)
			if err := c.Validate(); err != nil {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Cache.Store = "database"
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("defaults with the database store warn: %q", w)
	}
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"no timeout", func(c *Config) { c.Worker.Timeout = 0 }, "without a time limit"},
		{"array cache", func(c *Config) { c.Cache.Store = "array" }, "queue:restart"},
		{"command line as a program", func(c *Config) { c.Routes = []Route{{Class: "X", Exec: []string{"php artisan app:run"}}} }, "[sh, -c"},
	}
	for _, tt := range tests {
		c := Default()
		c.Cache.Store = "database"
		tt.mutate(&c)
		if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, tt.want) {
			t.Errorf("%s: warnings %q do not contain %q", tt.name, w, tt.want)
		}
	}
}

// TestValidateNamesWhereSet: a bad value is reported with where it was set (a flag, the environment,
// the .env file), not with every variable that could have set it.
func TestValidateNamesWhereSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    LoadParams
		want string
	}{
		{LoadParams{Overrides: map[string]any{"worker.tries": "-1"}}, "worker.tries (given on the command line)"},
		{LoadParams{Environ: []string{"ARTISAN_GO_WORKER_TRIES=-1"}}, "worker.tries (ARTISAN_GO_WORKER_TRIES in the environment)"},
		{LoadParams{}, ""},
	} {
		cfg, err := Load(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("defaults: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
}

// TestCheckWorkable refuses the skeleton's connections that are not database ones, unless the
// configuration lists them as database connections; the operations commands are not asked.
func TestCheckWorkable(t *testing.T) {
	t.Parallel()
	for conn, wantErr := range map[string]bool{"database": false, "sync": true, "redis": true, "sqs": true, "database-2": false} {
		c := Default()
		c.Connection = conn
		if err := c.CheckWorkable(); (err != nil) != wantErr {
			t.Errorf("CheckWorkable(%q) = %v, want error %v", conn, err, wantErr)
		} else if err != nil && !strings.Contains(err.Error(), "queue:work database") {
			t.Errorf("CheckWorkable(%q) does not say what to run: %v", conn, err)
		}
	}
	c := Default()
	c.Connection, c.Connections = "redis", []string{"redis"}
	if err := c.CheckWorkable(); err != nil {
		t.Errorf("a connection listed under connections: %v", err)
	}
}

// TestMemcachedPool reads cache.memcached.servers as config/cache.php lists them, the skeleton's one
// server (MEMCACHED_HOST, MEMCACHED_PORT, weight 100) when it is not set.
func TestMemcachedPool(t *testing.T) {
	t.Parallel()
	m := Memcached{Host: "mc", Port: 11300}
	if got := m.Pool(); !slices.Equal(got, []MemcachedServer{{"mc", 11300, 100}}) {
		t.Errorf("the skeleton's server: %v", got)
	}
	m.Servers = []string{"10.0.0.1:11211:100", " cache-2:11212 ", "[::1]:11213:0"}
	want := []MemcachedServer{{"10.0.0.1", 11211, 100}, {"cache-2", 11212, 100}, {"::1", 11213, 0}}
	if got := m.Pool(); !slices.Equal(got, want) {
		t.Errorf("Pool() = %v, want %v", got, want)
	}
}

// TestFileModes reads stores.file.permission as PHP's chmod takes it: octal, up to 07777.
func TestFileModes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]fs.FileMode{"": 0, "0664": 0o664, "664": 0o664, "0o770": 0o770, "2775": fs.ModeSetgid | 0o775, "07777": fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky | 0o777} {
		if got := (FileStore{Permission: in}).Mode(); got != want {
			t.Errorf("Mode(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestKeyWarnings reports an APP_KEY, APP_PREVIOUS_KEYS or cipher PHP's encrypter cannot use as a
// warning that names the setting, not an error: PHP's worker runs such an app's other jobs.
func TestKeyWarnings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		mutate func(c *Config)
		want   []string
	}{
		{"unknown cipher", func(c *Config) { c.App.Cipher = "AES-512-CBC" }, []string{"app.cipher", "APP_CIPHER", "unknown cipher"}},
		{"key not base64", func(c *Config) { c.App.Key = "base64:***" }, []string{"app.key", "APP_KEY", "not valid base64"}},
		{"key too short for the cipher", func(c *Config) { c.App.Key = "base64:AAAAAAAAAAAAAAAAAAAAAA==" }, []string{"app.key", "is 16 bytes long, AES-256-CBC needs 32"}},
		{"raw key of the wrong length", func(c *Config) { c.App.Key = "short" }, []string{"app.key", "5 bytes"}},
		{"previous key too short", func(c *Config) { c.App.PreviousKeys = []string{"base64:AAAA"} }, []string{"app.previous_keys", "APP_PREVIOUS_KEYS", "3 bytes"}},
	} {
		c := Default()
		tt.mutate(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%s: Validate: %v, want a warning only", tt.name, err)
		}
		w := strings.Join(c.Warnings(), "\n")
		for _, want := range append(tt.want, "encrypted (ShouldBeEncrypted) jobs fail") {
			if !strings.Contains(w, want) {
				t.Errorf("%s: warnings %q do not say %q", tt.name, w, want)
			}
		}
	}
}
