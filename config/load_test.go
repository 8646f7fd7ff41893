package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadPrecedence sets the same keys in every combination of the five layers and checks that the
// highest layer present wins: defaults < .env < YAML < environment < overrides.
func TestLoadPrecedence(t *testing.T) {
	t.Parallel()
	type layers struct{ dotenv, yaml, env, override bool }
	tests := []struct {
		name        string
		l           layers
		concurrency int
		host        string
		retry       time.Duration
	}{
		{"defaults only", layers{}, DefaultConcurrency, "127.0.0.1", 90 * time.Second},
		{".env over defaults", layers{dotenv: true}, 2, "dotenv-host", 10 * time.Second},
		{"YAML over .env", layers{dotenv: true, yaml: true}, 3, "yaml-host", 20 * time.Second},
		{"YAML alone", layers{yaml: true}, 3, "yaml-host", 20 * time.Second},
		{"environment over YAML", layers{dotenv: true, yaml: true, env: true}, 4, "env-host", 30 * time.Second},
		{"environment over .env", layers{dotenv: true, env: true}, 4, "env-host", 30 * time.Second},
		{"overrides over everything", layers{true, true, true, true}, 5, "flag-host", 40 * time.Second},
		{"overrides over defaults", layers{override: true}, 5, "flag-host", 40 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var p LoadParams
			if tt.l.dotenv {
				p.EnvFile = writeFile(t, dir, ".env", "DB_HOST=dotenv-host\nARTISAN_GO_WORKER_CONCURRENCY=2\nDB_QUEUE_RETRY_AFTER=10\n")
			}
			if tt.l.yaml {
				p.ConfigFile = writeFile(t, dir, "artisan-go.yaml", "db:\n  host: yaml-host\nworker:\n  concurrency: 3\n  retry_after: 20s\n")
			}
			if tt.l.env {
				p.Environ = []string{"DB_HOST=env-host", "ARTISAN_GO_WORKER_CONCURRENCY=4", "ARTISAN_GO_WORKER_RETRY_AFTER=30", "UNRELATED=x"}
			}
			if tt.l.override {
				p.Overrides = map[string]any{"db.host": "flag-host", "worker.concurrency": 5, "worker.retry_after": 40 * time.Second}
			}
			cfg, err := Load(p)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.Worker.Concurrency != tt.concurrency || cfg.DB.Host != tt.host || cfg.Worker.RetryAfter != tt.retry {
				t.Errorf("got concurrency %d, host %q, retry_after %v; want %d, %q, %v",
					cfg.Worker.Concurrency, cfg.DB.Host, cfg.Worker.RetryAfter, tt.concurrency, tt.host, tt.retry)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestLoadNothingIsDefault(t *testing.T) {
	t.Parallel()
	cfg, err := Load(LoadParams{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.sources = nil // where keys were set: TestValidateNamesWhereSet
	if want := Default(); !reflect.DeepEqual(*cfg, want) {
		t.Errorf("got  %+v\nwant %+v", *cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

// TestLoadOursWinsOverLaravelInOneLayer: in the same layer ARTISAN_GO_DB_HOST wins over DB_HOST.
func TestLoadOursWinsOverLaravelInOneLayer(t *testing.T) {
	t.Parallel()
	cfg, err := Load(LoadParams{Environ: []string{"ARTISAN_GO_DB_HOST=ours", "DB_HOST=laravel"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DB.Host != "ours" {
		t.Errorf("host %q, want ours", cfg.DB.Host)
	}
}

func TestLoadFullYAML(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	yaml := `connection: database
laravel_version: "12.19"
db:
  driver: pgsql
  host: db.internal
  database: shop
  username: app
  password: secret
  schema: queue
  version: "16.2"
tables:
  jobs: queue_jobs
worker:
  queues: [high, default]
  sleep: 0.5
  tries: 3
  timeout: 2m
  backoff: "10,30,60"
  max_jobs: 1000
  max_time: 3600
  stop_when_empty: true
  memory_mb: 0
  name: supervisor-1
  concurrency: 16
  retry_after: 300
  strategy: skip-locked
  shutdown_grace: 30s
app:
  name: My Shop!
  timezone: Europe/Paris
  previous_keys: [base64:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=]
cache:
  store: redis
  redis:
    host: redis.internal
    password: pw
failed:
  driver: database
unhandled: move:php
routes:
  - class: App\Jobs\Resize
    exec: [/usr/local/bin/resize, --fast]
    timeout: 30s
  - class: App\Jobs\Notify
    http: http://127.0.0.1:9000/jobs
  - class: App\Jobs\Ping
    builtin: noop
  - class: App\Jobs\One
    exec: /bin/true
log:
  format: json
  level: debug
  flush: 50ms
`
	cfg, err := Load(LoadParams{ConfigFile: writeFile(t, dir, "c.yaml", yaml)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	want := Default()
	want.LaravelVersion = "12.19"
	want.DB = DB{Driver: "pgsql", Host: "db.internal", Port: 5432, Database: "shop", Username: "app", Password: "secret", Schema: "queue", Version: "16.2"}
	want.Tables.Jobs = "queue_jobs"
	want.Worker = Worker{Queues: []string{"high", "default"}, Sleep: 500 * time.Millisecond, Tries: 3, Timeout: 2 * time.Minute,
		Backoff: []int{10, 30, 60}, MaxJobs: 1000, MaxTime: time.Hour, StopWhenEmpty: true, Name: "supervisor-1",
		Concurrency: 16, RetryAfter: 300 * time.Second, Strategy: "skip-locked", ShutdownGrace: 30 * time.Second}
	want.App = App{Name: "My Shop!", Timezone: "Europe/Paris", Cipher: "AES-256-CBC", Env: "production",
		PreviousKeys: []string{"base64:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}, MaintenanceStore: "database"}
	want.Cache = Cache{Store: "redis", Prefix: "my_shop_cache_", Redis: Redis{Host: "redis.internal", Port: 6379, Password: "pw", DB: 1, Prefix: "my_shop_database_"}, Memcached: Memcached{Host: "127.0.0.1", Port: 11211, Distribution: "modula"}}
	want.Failed.Driver = "database"
	want.Unhandled = "move:php"
	want.Routes = []Route{
		{Class: `App\Jobs\Resize`, Exec: []string{"/usr/local/bin/resize", "--fast"}, Timeout: 30 * time.Second},
		{Class: `App\Jobs\Notify`, HTTP: "http://127.0.0.1:9000/jobs"},
		{Class: `App\Jobs\Ping`, Builtin: "noop"},
		{Class: `App\Jobs\One`, Exec: []string{"/bin/true"}},
	}
	want.Log = Log{Format: "json", Level: "debug", Flush: 50 * time.Millisecond, Console: "laravel", Channel: "stack"}
	cfg.sources = nil // where keys were set: TestValidateNamesWhereSet
	if !reflect.DeepEqual(*cfg, want) {
		t.Errorf("got  %+v\nwant %+v", *cfg, want)
	}
}

func TestLoadVersionDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version string
		check   func(c *Config) bool
		want    string
	}{
		{"5.4", func(c *Config) bool {
			return c.Worker.Tries == 0 && c.Failed.Driver == "database" && c.Cache.Prefix == "laravel" && c.Cache.Redis.DB == 0 && c.Cache.Redis.Prefix == ""
		}, "tries 0, failed database, prefix laravel, redis db 0, no redis prefix"},
		{"5.8", func(c *Config) bool {
			return c.Worker.Tries == 0 && c.Cache.Prefix == "laravel_cache" && c.Cache.Redis.DB == 1
		}, "tries 0, prefix laravel_cache, redis db 1"},
		{"8.83", func(c *Config) bool {
			return c.Worker.Tries == 1 && c.Failed.Driver == "database-uuids" && c.Cache.Store == "file" && c.DB.Driver == "mysql" && c.DB.Database == "forge"
		}, "tries 1, database-uuids, file store, mysql forge"},
		{"9.52", func(c *Config) bool {
			return c.Cache.Store == "file" && c.Cache.Prefix == "laravel_cache_" && c.Cache.Redis.Prefix == "laravel_database_"
		}, "file store, laravel_cache_"},
		{"12.54", func(c *Config) bool {
			return c.Cache.Prefix == "laravel-cache-" && c.Cache.Redis.Prefix == "laravel-database-" &&
				strings.Contains(strings.Join(c.Warnings(), "\n"), "set CACHE_PREFIX")
		}, "hyphenated prefixes and a note about them"},
		{"12", func(c *Config) bool {
			return c.Cache.Prefix == "laravel-cache-" && c.Cache.Redis.Prefix == "laravel-database-"
		}, "12 is 12's newest minor: hyphenated prefixes"},
		{"12.x", func(c *Config) bool {
			return c.Cache.Prefix == "laravel-cache-" && c.Cache.Store == "database"
		}, "12.x is 12's newest minor: hyphenated prefixes, database store"},
		{"11.0-dev", func(c *Config) bool {
			return c.Cache.Store == "database" && c.Cache.Prefix == "laravel_cache_"
		}, "11.0: database store, laravel_cache_"},
		{"13.24", func(c *Config) bool {
			return c.Cache.Prefix == "laravel-cache-" && c.Cache.Store == "database"
		}, "13.x: the framework's and skeleton's laravel-cache- prefix"},
		{"11", func(c *Config) bool {
			return c.Cache.Store == "database" && c.Cache.Prefix == "laravel_cache_" && c.DB.Driver == "sqlite" && c.DB.Port == 0 && c.DB.Username == "root"
		}, "database store, laravel_cache_, sqlite, root"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(LoadParams{Environ: []string{"ARTISAN_GO_LARAVEL_VERSION=" + tt.version}})
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg) {
				t.Errorf("got %+v; want %s", *cfg, tt.want)
			}
		})
	}
}

// TestLoadCacheStoreVariableByVersion: Laravel 11 reads CACHE_STORE, 8.x CACHE_DRIVER, never both.
func TestLoadCacheStoreVariableByVersion(t *testing.T) {
	t.Parallel()
	env := []string{"CACHE_DRIVER=redis", "CACHE_STORE=database"}
	for version, want := range map[string]string{"8.83": "redis", "11": "database"} {
		cfg, err := Load(LoadParams{Environ: append(env, "ARTISAN_GO_LARAVEL_VERSION="+version)})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Cache.Store != want {
			t.Errorf("Laravel %s: store %q, want %q", version, cfg.Cache.Store, want)
		}
	}
}

func TestLoadMoreLaravelNames(t *testing.T) {
	t.Parallel()
	cfg, err := Load(LoadParams{Environ: []string{"QUEUE_FAILED_DRIVER=null", "DB_CACHE_TABLE=app_cache", "ARTISAN_GO_LARAVEL_VERSION=11",
		"DB_CACHE_LOCK_TABLE=app_locks", "DB_QUEUE=high,low", "APP_PREVIOUS_KEYS=k1,k2", "REDIS_CACHE_DB=3"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Failed.Driver != "null" || cfg.Tables.Cache != "app_cache" || cfg.Tables.CacheLocks != "app_locks" ||
		strings.Join(cfg.Worker.Queues, "|") != "high|low" || cfg.DefaultQueue() != "high,low" || strings.Join(cfg.App.PreviousKeys, "|") != "k1|k2" || cfg.Cache.Redis.DB != 3 {
		t.Errorf("got %+v", *cfg)
	}
}

func TestDefaultQueue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "DB_QUEUE=emails\n"), Overrides: map[string]any{"worker.queues": "high,emails"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DefaultQueue() != "emails" || strings.Join(cfg.Worker.Queues, ",") != "high,emails" {
		t.Errorf("default queue %q, queues %q", cfg.DefaultQueue(), cfg.Worker.Queues)
	}
	cfg, err = Load(LoadParams{Environ: []string{"DB_QUEUE=emails"}, Overrides: map[string]any{"worker.queues": ""}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Worker.Queues, ",") != "emails" {
		t.Errorf("an empty --queue gave queues %q, want the connection's queue", cfg.Worker.Queues)
	}
	if c := Default(); c.DefaultQueue() != "default" {
		t.Errorf("Default().DefaultQueue() = %q", c.DefaultQueue())
	}
}

func TestLoadDriverDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(LoadParams{Environ: []string{"DB_CONNECTION=pgsql", "QUEUE_DRIVER=database-legacy"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DB.Port != 5432 || cfg.Connection != "database-legacy" {
		t.Errorf("port %d connection %q; want 5432 and the QUEUE_DRIVER value", cfg.DB.Port, cfg.Connection)
	}
	cfg, err = Load(LoadParams{Environ: []string{"DB_CONNECTION=pgsql", "DB_PORT=6432", "QUEUE_CONNECTION=database", "QUEUE_DRIVER=old"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DB.Port != 6432 || cfg.Connection != "database" {
		t.Errorf("port %d connection %q; want 6432 and QUEUE_CONNECTION first", cfg.DB.Port, cfg.Connection)
	}
}

// TestLoadPrefixIndexesDefault gives prefix_indexes the skeleton's value for the driver once a table
// prefix is set: true on servers, false on SQLite, and what a layer sets wins.
func TestLoadPrefixIndexesDefault(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		environ []string
		want    DB
	}{
		{[]string{"DB_CONNECTION=pgsql"}, DB{Prefix: "", PrefixIndexes: false}},
		{[]string{"DB_CONNECTION=pgsql", "ARTISAN_GO_DB_PREFIX=app_"}, DB{Prefix: "app_", PrefixIndexes: true}},
		{[]string{"DB_CONNECTION=mysql", "ARTISAN_GO_DB_PREFIX=app_"}, DB{Prefix: "app_", PrefixIndexes: true}},
		{[]string{"DB_CONNECTION=sqlite", "DB_DATABASE=:memory:", "ARTISAN_GO_DB_PREFIX=app_"}, DB{Prefix: "app_", PrefixIndexes: false}},
		{[]string{"DB_CONNECTION=mysql", "ARTISAN_GO_DB_PREFIX=app_", "ARTISAN_GO_DB_PREFIX_INDEXES=false"}, DB{Prefix: "app_", PrefixIndexes: false}},
	} {
		cfg, err := Load(LoadParams{Environ: tt.environ})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.DB.Prefix != tt.want.Prefix || cfg.DB.PrefixIndexes != tt.want.PrefixIndexes {
			t.Errorf("%q: prefix %q, prefix_indexes %v; want %q, %v", tt.environ, cfg.DB.Prefix, cfg.DB.PrefixIndexes, tt.want.Prefix, tt.want.PrefixIndexes)
		}
	}
}

// TestLoadFileCachePaths puts the file cache store beside the .env file, and reads a path set in
// YAML relative to the YAML file.
func TestLoadFileCachePaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	envFile := writeFile(t, dir, ".env", "CACHE_DRIVER=file\n")
	cfg, err := Load(LoadParams{EnvFile: envFile})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "storage", "framework", "cache", "data"); cfg.Cache.File.Path != want || cfg.Cache.File.LockPath != "" {
		t.Errorf("default: %+v, want path %q", cfg.Cache.File, want)
	}
	sub := filepath.Join(dir, "conf")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	yamlFile := writeFile(t, sub, "c.yaml", "cache:\n  file:\n    path: cache\n    lock_path: /var/locks\n")
	if cfg, err = Load(LoadParams{EnvFile: envFile, ConfigFile: yamlFile}); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(sub, "cache"); cfg.Cache.File.Path != want || cfg.Cache.File.LockPath != "/var/locks" {
		t.Errorf("from YAML: %+v, want path %q", cfg.Cache.File, want)
	}
}

func TestLoadSQLitePaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	envFile := writeFile(t, dir, ".env", "DB_CONNECTION=sqlite\nDB_DATABASE=storage/app.sqlite\n")
	cfg, err := Load(LoadParams{EnvFile: envFile})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "storage", "app.sqlite"); cfg.DB.Database != want {
		t.Errorf(".env relative path: %q, want %q", cfg.DB.Database, want)
	}
	sub := filepath.Join(dir, "conf")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	yamlFile := writeFile(t, sub, "c.yaml", "db:\n  database: q.sqlite\n")
	cfg, err = Load(LoadParams{EnvFile: envFile, ConfigFile: yamlFile})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(sub, "q.sqlite"); cfg.DB.Database != want {
		t.Errorf("YAML relative path: %q, want %q", cfg.DB.Database, want)
	}
	for _, keep := range []string{":memory:", "file:x.db?mode=memory", "/abs/x.sqlite"} {
		cfg, err = Load(LoadParams{EnvFile: envFile, Environ: []string{"DB_DATABASE=" + keep}})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.DB.Database != keep {
			t.Errorf("%q became %q", keep, cfg.DB.Database)
		}
	}
	cfg, err = Load(LoadParams{EnvFile: writeFile(t, dir, "only-driver.env", "DB_CONNECTION=sqlite\n")})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "database", "database.sqlite"); cfg.DB.Database != want {
		t.Errorf("default sqlite path %q, want Laravel's database_path: %q", cfg.DB.Database, want)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		dotenv    string
		yaml      string
		environ   []string
		overrides map[string]any
		want      []string
	}{
		{name: "unknown YAML key", yaml: "worker:\n  concurency: 4\n",
			want: []string{"worker.concurency", "unknown key", `did you mean "concurrency"`}},
		{name: "unknown top-level key", yaml: "conection: database\n",
			want: []string{"conection", "at the top level", `"connection"`}},
		{name: "a key outside its section", yaml: "concurrency: 8\n",
			want: []string{"concurrency", "unknown key", `did you mean worker.concurrency`}},
		{name: "section given a scalar", yaml: "worker: 4\n", want: []string{"worker", "is a section"}},
		{name: "unknown route key", yaml: "routes:\n  - class: A\n    exe: [x]\n",
			want: []string{"routes[0].exe", `did you mean "exec"`}},
		{name: "routes not a list", yaml: "routes: x\n", want: []string{"routes", "want a list of routes"}},
		{name: "models not a list", yaml: "models: x\n", want: []string{"models", "want a list of models"}},
		{name: "model key misspelt", yaml: "models:\n  - class: App\\Models\\Person\n    tabel: people\n", want: []string{"models[0].tabel", `did you mean "table"`}},
		{name: "bad port in .env", dotenv: "DB_PORT=abc\n", want: []string{"db.port", "DB_PORT in ", "whole number"}},
		{name: "bad duration in YAML", yaml: "worker:\n  timeout: soon\n", want: []string{"worker.timeout", "duration"}},
		{name: "bad bool in environment", environ: []string{"ARTISAN_GO_WORKER_ONCE=maybe"},
			want: []string{"worker.once", "ARTISAN_GO_WORKER_ONCE in the environment", "true or false"}},
		{name: "bad backoff list", environ: []string{"ARTISAN_GO_WORKER_BACKOFF=1,x"}, want: []string{"worker.backoff", "comma-separated"}},
		{name: "unknown override", overrides: map[string]any{"worker.concurency": 2}, want: []string{`override "worker.concurency"`}},
		{name: "override of the wrong type", overrides: map[string]any{"worker.tries": []string{"x"}}, want: []string{"worker.tries", "given on the command line"}},
		{name: "version as a YAML number", yaml: "laravel_version: 12.50\n", want: []string{"laravel_version", "quote it"}},
		{name: "YAML syntax", yaml: "worker: [\n", want: []string{"c.yaml"}},
		{name: ".env syntax", dotenv: "A=b c\n", want: []string{".env:1", "whitespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := LoadParams{Environ: tt.environ, Overrides: tt.overrides}
			if tt.dotenv != "" {
				p.EnvFile = writeFile(t, dir, ".env", tt.dotenv)
			}
			if tt.yaml != "" {
				p.ConfigFile = writeFile(t, dir, "c.yaml", tt.yaml)
			}
			_, err := Load(p)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want an error wrapping ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadMissingFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []LoadParams{{EnvFile: filepath.Join(dir, "nope.env")}, {ConfigFile: filepath.Join(dir, "nope.yaml")}} {
		_, err := Load(p)
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Load(%+v) = %v, want an error wrapping os.ErrNotExist", p, err)
		}
	}
}

func TestLoadLaravelNullAndEmpty(t *testing.T) {
	t.Parallel()
	cfg, err := Load(LoadParams{Environ: []string{"REDIS_PASSWORD=null", "DB_PASSWORD=(empty)", "DB_PORT=", "APP_NAME=\"Quoted App\""}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Cache.Redis.Password != "" || cfg.DB.Password != "" || cfg.DB.Port != 3306 || cfg.App.Name != "Quoted App" {
		t.Errorf("got %+v", *cfg)
	}
	if cfg.Cache.Prefix != "quoted_app_cache" {
		t.Errorf("prefix %q, want quoted_app_cache", cfg.Cache.Prefix)
	}
}

func TestLoadNotesUnknownOwnVariables(t *testing.T) {
	t.Parallel()
	cfg, err := Load(LoadParams{Environ: []string{"ARTISAN_GO_WORKER_CONCURENCY=3", "ARTISAN_GO_REQUIRE_ALL=1"}})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings(), "\n")
	if !strings.Contains(w, "ARTISAN_GO_WORKER_CONCURENCY") || !strings.Contains(w, "did you mean ARTISAN_GO_WORKER_CONCURRENCY") {
		t.Errorf("warnings %q do not name the misspelt variable", w)
	}
	if strings.Contains(w, "REQUIRE_ALL") {
		t.Errorf("warnings %q name a known non-configuration variable", w)
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"Laravel":                "laravel",
		"My Shop!":               "my_shop",
		"  Café   Crème-Brûlée ": "cafe_creme_brulee",
		"a.b":                    "ab",
		"a@b":                    "a_at_b",
		"__x__y__":               "x_y",
		"Straße":                 "strasse",
		"":                       "",
	}
	for in, want := range tests {
		if got := slug(in, '_'); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoadNotesUnclosedQuote(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), ".env", "DB_HOST=db\nAPP_NAME=\"Shop\nDB_PORT=3307\n")
	cfg, err := Load(LoadParams{EnvFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DB.Host != "db" || cfg.DB.Port != 3306 || cfg.App.Name != "Laravel" {
		t.Errorf("read %+v; want the lines after the unclosed quote ignored, as Laravel ignores them", cfg.DB)
	}
	if w := strings.Join(cfg.Warnings(), "\n"); !strings.Contains(w, path+":2: a double-quoted value is never closed") {
		t.Errorf("warnings %q do not point at line 2", w)
	}
}

func TestLoadNotesUntransliteratedName(t *testing.T) {
	t.Parallel()
	cfg, err := Load(LoadParams{Environ: []string{"APP_NAME=Привет shop"}})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(cfg.Warnings(), "\n"); !strings.Contains(w, "set CACHE_PREFIX") {
		t.Errorf("warnings %q do not ask for CACHE_PREFIX", w)
	}
	cfg, err = Load(LoadParams{Environ: []string{"APP_NAME=Привет shop", "CACHE_PREFIX=p", "REDIS_PREFIX=r"}})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(cfg.Warnings(), "\n"); strings.Contains(w, "CACHE_PREFIX") {
		t.Errorf("warnings %q although the prefixes are set", w)
	}
}

// TestExampleFile keeps testdata/example.yaml, the documented configuration, loadable, valid and
// complete: it sets every key to its default.
func TestExampleFile(t *testing.T) {
	t.Parallel()
	cfg, err := Load(LoadParams{ConfigFile: "testdata/example.yaml"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	yaml, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		leaf := k.path[strings.LastIndexByte(k.path, '.')+1:]
		if !strings.Contains(string(yaml), leaf+":") {
			t.Errorf("testdata/example.yaml does not document %s", k.path)
		}
	}
	want := Default()
	want.Routes, want.Models, want.App.PreviousKeys, want.RateLimiters = cfg.Routes, cfg.Models, cfg.App.PreviousKeys, cfg.RateLimiters
	want.UniqueVia = cfg.UniqueVia
	want.Worker.RunUnknownMiddleware, want.Worker.DontRetry = cfg.Worker.RunUnknownMiddleware, cfg.Worker.DontRetry
	want.Worker.DeleteWhenMissingModels = cfg.Worker.DeleteWhenMissingModels
	want.Cache.Memcached.Servers = cfg.Cache.Memcached.Servers
	cfg.sources = nil // where keys were set: TestValidateNamesWhereSet
	if !reflect.DeepEqual(*cfg, want) {
		t.Errorf("the example is not the defaults:\ngot  %+v\nwant %+v", *cfg, want)
	}
	if len(cfg.Routes) != 4 || cfg.Routes[0].Timeout != 30*time.Second || cfg.Routes[3].UniqueID != "{reportId}" {
		t.Errorf("routes %+v", cfg.Routes)
	}
	if len(cfg.UniqueVia) != 1 || cfg.UniqueVia[0] != (UniqueVia{Class: `App\Jobs\BuildReport`, Store: "redis"}) {
		t.Errorf("unique_via %+v", cfg.UniqueVia)
	}
	if len(cfg.RateLimiters) != 1 || cfg.RateLimiters[0] != (RateLimit{Limiter: "uploads", Allow: 10, Per: time.Minute, By: "{userId}"}) {
		t.Errorf("rate_limiters %+v", cfg.RateLimiters)
	}
	if len(cfg.Models) != 1 || cfg.Models[0] != (Model{Class: `App\Models\Person`, Table: "people"}) {
		t.Errorf("models %+v", cfg.Models)
	}
}

// TestLoadRedisURL reads REDIS_URL as Laravel's ConfigurationUrlParser does: the parts it gives
// replace REDIS_HOST, REDIS_PORT, REDIS_USERNAME, REDIS_PASSWORD and both connections' databases;
// rediss:// connects over TLS; what it leaves out is kept.
func TestLoadRedisURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	envFile := writeFile(t, dir, ".env", "CACHE_DRIVER=redis\nREDIS_HOST=old\nREDIS_PASSWORD=old\nREDIS_USERNAME=old\n"+
		"REDIS_URL=rediss://app:p%40ss@cache.example.com:6380/3\n")
	cfg, err := Load(LoadParams{EnvFile: envFile})
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Cache.Redis
	if r.Host != "cache.example.com" || r.Port != 6380 || r.Username != "app" || r.Password != "p@ss" || !r.TLS || r.DB != 3 || r.LockDB != 3 {
		t.Errorf("from a full URL: %+v", r)
	}
	envFile = writeFile(t, dir, ".env", "CACHE_DRIVER=redis\nREDIS_PASSWORD=secret\nREDIS_CACHE_DB=5\nREDIS_URL=redis://cache.internal\n")
	if cfg, err = Load(LoadParams{EnvFile: envFile}); err != nil {
		t.Fatal(err)
	}
	if r := cfg.Cache.Redis; r.Host != "cache.internal" || r.Port != 6379 || r.Password != "secret" || r.TLS || r.DB != 5 || r.LockDB != 0 {
		t.Errorf("from a URL with the host alone: %+v", r)
	}
	envFile = writeFile(t, dir, ".env", "CACHE_DRIVER=redis\nREDIS_URL=redis://:p%23w@redis.internal:6380/2?database=4\n")
	if cfg, err = Load(LoadParams{EnvFile: envFile}); err != nil {
		t.Fatal(err)
	}
	if r := cfg.Cache.Redis; r.Host != "redis.internal" || r.Password != "p#w" || r.DB != 4 || r.LockDB != 4 {
		t.Errorf("?database=4 wins over the path, as the query's options are merged last: %+v", r)
	}
	for _, bad := range []string{"ftp://cache.internal", "redis://", "redis://h:99999", "redis://h/db", "redis://h?database=x"} {
		envFile = writeFile(t, dir, ".env", "CACHE_DRIVER=redis\nREDIS_URL="+bad+"\n")
		cfg, err := Load(LoadParams{EnvFile: envFile})
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), "cache.redis.url") || !strings.Contains(err.Error(), "REDIS_URL") {
			t.Errorf("REDIS_URL=%s: %v, want an error naming cache.redis.url and REDIS_URL", bad, err)
		}
	}
	// The URL's password is not repeated in the message.
	envFile = writeFile(t, dir, ".env", "CACHE_DRIVER=redis\nREDIS_URL=ftp://u:hunter2@h\n")
	if cfg, err = Load(LoadParams{EnvFile: envFile}); err == nil {
		err = cfg.Validate()
	}
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a bad REDIS_URL with a password: %v, want an error without the password", err)
	}
}

// TestDatabaseURL merges DATABASE_URL (DB_URL from Laravel 11) over the connection's parts as
// Laravel's ConfigurationUrlParser does.
func TestDatabaseURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		env  string
		want DB
	}{
		{"DB_CONNECTION=mysql\nDB_HOST=127.0.0.1\nDB_PASSWORD=old\nDATABASE_URL=mysql://app:s3cr%23t@db.internal:3307/shop",
			DB{Driver: "mysql", Host: "db.internal", Port: 3307, Database: "shop", Username: "app", Password: "s3cr#t"}},
		{"DB_CONNECTION=mysql\nDATABASE_URL=postgres://app@pg.internal/shop?search_path=queue",
			DB{Driver: "pgsql", Host: "pg.internal", Port: 5432, Database: "shop", Username: "app", Schema: "queue"}},
		{"DB_CONNECTION=mysql\nDB_USERNAME=forge\nDATABASE_URL=mysql://db.internal/shop?unix_socket=%2Frun%2Fmysqld.sock",
			DB{Driver: "mysql", Host: "db.internal", Port: 3306, Database: "shop", Username: "forge", Socket: "/run/mysqld.sock"}},
		{"ARTISAN_GO_LARAVEL_VERSION=11\nDB_URL=sqlite:///database/app.sqlite\nDATABASE_URL=mysql://ignored/x",
			DB{Driver: "sqlite", Host: "127.0.0.1", Database: filepath.Join(dir, "database", "app.sqlite"), Username: "root"}},
		{"DB_CONNECTION=mysql\nDB_PASSWORD=kept\nDATABASE_URL=mysql://app:null@db.internal/shop",
			DB{Driver: "mysql", Host: "db.internal", Port: 3306, Database: "shop", Username: "app", Password: "kept"}},
	} {
		env := filepath.Join(dir, ".env")
		if err := os.WriteFile(env, []byte(tc.env+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(LoadParams{EnvFile: env})
		if err != nil {
			t.Fatal(err)
		}
		got := cfg.DB
		got.URL = ""
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.env, got, tc.want)
		}
	}
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("DATABASE_URL=mysql://app:p@ss@[bad/x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadParams{EnvFile: env})
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "malformed") || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("a malformed url: %v", err)
	}
}

// TestTimezoneAsPHP reads APP_TIMEZONE as PHP does: zone names in any case, and a name that is no zone
// as UTC with a warning (PHP refuses it with a notice and runs in UTC).
func TestTimezoneAsPHP(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(zoneinfoDir, "Europe", "Paris")); err != nil {
		t.Skip("no system zoneinfo here")
	}
	dir := t.TempDir()
	for _, tc := range []struct{ tz, want, warn string }{
		{"utc", "UTC", ""}, {"europe/paris", "Europe/Paris", ""}, {"AMERICA/NEW_YORK", "America/New_York", ""},
		{"Europe/Paris", "Europe/Paris", ""}, {"Mars/Olympus", "UTC", `app.timezone "Mars/Olympus" is not a time zone`},
	} {
		env := filepath.Join(dir, ".env")
		if err := os.WriteFile(env, []byte("APP_TIMEZONE="+tc.tz+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(LoadParams{EnvFile: env})
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil || cfg.App.Timezone != tc.want {
			t.Errorf("APP_TIMEZONE=%s: %v %v, want %s", tc.tz, cfg.App.Timezone, err, tc.want)
			continue
		}
		warned := strings.Contains(strings.Join(cfg.Warnings(), "\n"), tc.warn)
		if tc.warn != "" && !warned {
			t.Errorf("APP_TIMEZONE=%s: warnings %q, want one saying %q", tc.tz, cfg.Warnings(), tc.warn)
		}
	}
}

// TestOutputTimezoneChecked: log.output_timezone is read in any case; a name that is no zone warns and
// leaves the app's zone for queue:work's times.
func TestOutputTimezoneChecked(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(zoneinfoDir, "Europe", "Paris")); err != nil {
		t.Skip("no system zoneinfo here")
	}
	for _, tc := range []struct{ tz, want, warn string }{
		{"europe/paris", "Europe/Paris", ""}, {"Mars/Olympus", "", `log.output_timezone "Mars/Olympus" is not a time zone`},
	} {
		cfg, err := Load(LoadParams{Environ: []string{"ARTISAN_GO_LOG_OUTPUT_TIMEZONE=" + tc.tz}})
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil || cfg.Log.OutputTimezone != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.tz, cfg.Log.OutputTimezone, err, tc.want)
			continue
		}
		if warned := strings.Contains(strings.Join(cfg.Warnings(), "\n"), tc.warn); tc.warn != "" && !warned {
			t.Errorf("%s: warnings %q, want one saying %q", tc.tz, cfg.Warnings(), tc.warn)
		}
	}
}

// TestRetryAfterIsPHPInt reads DB_QUEUE_RETRY_AFTER as the skeleton's (int) env(...) does, and an
// empty one (PHP's 0: every reservation expired at once) stops the worker naming it.
func TestRetryAfterIsPHPInt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for value, want := range map[string]time.Duration{"90.7": 90 * time.Second, "120": 120 * time.Second, "1e3": 1000 * time.Second, " 60s": 60 * time.Second} {
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "DB_QUEUE_RETRY_AFTER="+value+"\n")})
		if err != nil || cfg.Worker.RetryAfter != want {
			t.Errorf("DB_QUEUE_RETRY_AFTER=%q: %v (%v), want %v", value, cfg.Worker.RetryAfter, err, want)
		}
	}
	cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "DB_QUEUE_RETRY_AFTER=\n")})
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "DB_QUEUE_RETRY_AFTER") {
		t.Errorf("an empty DB_QUEUE_RETRY_AFTER: %v, want an error naming it", err)
	}
}

// TestQueueListWithEmptyName: an empty name in --queue is the connection's queue, as PHP's database
// queue pops an empty name as its default (--queue=high,,low works high, the connection's queue, then
// low).
func TestQueueListWithEmptyName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		flag    string
		environ []string
		want    []string
	}{
		{"high,,low", nil, []string{"high", "default", "low"}},
		{"high, ,low", []string{"DB_QUEUE=jobs"}, []string{"high", "jobs", "low"}},
		{",", nil, []string{"default", "default"}},
		{"", []string{"DB_QUEUE=jobs"}, []string{"jobs"}},
		{"a,b", nil, []string{"a", "b"}},
	} {
		cfg, err := Load(LoadParams{Environ: c.environ, Overrides: map[string]any{"worker.queues": c.flag}})
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil || !slices.Equal(cfg.Worker.Queues, c.want) {
			t.Errorf("--queue=%q with %v: %q %v, want %q", c.flag, c.environ, cfg.Worker.Queues, err, c.want)
		}
	}
}

// TestLoadFrameworkVersion takes the Laravel version from the framework installed beside the .env
// file (vendor/laravel/framework) when nothing sets laravel_version, so that an 11.x application's
// DB_URL is read; a version set explicitly wins.
func TestLoadFrameworkVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "vendor", "laravel", "framework", "src", "Illuminate", "Foundation")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	app := "<?php\n\nnamespace Illuminate\\Foundation;\n\nclass Application extends Container\n{\n    /**\n     * The Laravel framework version.\n     *\n     * @var string\n     */\n    const VERSION = '11.30.0';\n}\n"
	if err := os.WriteFile(filepath.Join(src, "Application.php"), []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("DB_CONNECTION=pgsql\nDB_URL=postgres://app@pg.internal/shop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadParams{EnvFile: env})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LaravelVersion != "11.30.0" || cfg.DB.Host != "pg.internal" || cfg.DB.Database != "shop" {
		t.Errorf("version %q, host %q, database %q; want 11.30.0 from the framework and DB_URL read", cfg.LaravelVersion, cfg.DB.Host, cfg.DB.Database)
	}
	cfg, err = Load(LoadParams{EnvFile: env, Environ: []string{"ARTISAN_GO_LARAVEL_VERSION=8.83"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LaravelVersion != "8.83" || cfg.DB.Host != "127.0.0.1" {
		t.Errorf("version %q, host %q; want the version set, and DB_URL unread before 11", cfg.LaravelVersion, cfg.DB.Host)
	}
	// Debian's Laravel 8.83 declares its version the same way.
	if b, err := os.ReadFile("/usr/share/php/Illuminate/Foundation/Application.php"); err == nil {
		if m := frameworkVersionRE.FindSubmatch(b); m == nil || !strings.HasPrefix(string(m[1]), "8.83.") {
			t.Errorf("the installed framework's version: %q", m)
		}
	}
}

// TestLoadPreviousKeysFromLaravel11 reads APP_PREVIOUS_KEYS from Laravel 11 on, as the framework
// does; before, it is left with a note, and ARTISAN_GO_APP_PREVIOUS_KEYS still sets the keys.
func TestLoadPreviousKeysFromLaravel11(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		environ []string
		want    string
		note    bool
	}{
		{[]string{"APP_PREVIOUS_KEYS=k1,k2"}, "", true},
		{[]string{"APP_PREVIOUS_KEYS=k1,k2", "ARTISAN_GO_LARAVEL_VERSION=11.0"}, "k1|k2", false},
		{[]string{"ARTISAN_GO_APP_PREVIOUS_KEYS=k3"}, "k3", false},
	} {
		cfg, err := Load(LoadParams{Environ: tc.environ})
		if err != nil {
			t.Fatal(err)
		}
		noted := strings.Contains(strings.Join(cfg.Warnings(), "\n"), "APP_PREVIOUS_KEYS is read from Laravel 11 on")
		if got := strings.Join(cfg.App.PreviousKeys, "|"); got != tc.want || noted != tc.note {
			t.Errorf("%q: previous keys %q, noted %v; want %q, %v", tc.environ, got, noted, tc.want, tc.note)
		}
	}
}

// TestLoadQueueDatabaseConnection checks DB_QUEUE_CONNECTION and DB_CACHE_CONNECTION without a cached
// configuration: from Laravel 11 a skeleton connection on DB_CONNECTION's database is taken, another
// refused with the fix; before 11 it is noted only.
func TestLoadQueueDatabaseConnection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		environ []string
		err     []string
		note    bool
	}{
		{environ: []string{"DB_CONNECTION=mysql", "DB_QUEUE_CONNECTION=mariadb"}},
		{environ: []string{"DB_CONNECTION=pgsql", "DB_QUEUE_CONNECTION=pgsql"}},
		{environ: []string{"DB_CONNECTION=mysql", "DB_QUEUE_CONNECTION=null"}},
		{environ: []string{"DB_CONNECTION=sqlite", "DB_QUEUE_CONNECTION=pgsql"}, err: []string{"DB_QUEUE_CONNECTION=pgsql", "the jobs", "(sqlite)", "set DB_CONNECTION=pgsql"}},
		{environ: []string{"DB_CONNECTION=mysql", "CACHE_STORE=database", "DB_CACHE_CONNECTION=cache_db"}, err: []string{"DB_CACHE_CONNECTION", "[cache_db]"}},
		{environ: []string{"DB_CONNECTION=mysql", "CACHE_STORE=redis", "DB_CACHE_CONNECTION=cache_db"}},
		{environ: []string{"DB_CONNECTION=mysql", "DB_QUEUE_CONNECTION=queue_db"}, err: []string{"[queue_db]", "php artisan config:cache"}},
		{environ: []string{"ARTISAN_GO_LARAVEL_VERSION=8.83", "DB_CONNECTION=mysql", "DB_QUEUE_CONNECTION=queue_db"}, note: true},
	} {
		environ := tc.environ
		if !strings.HasPrefix(environ[0], "ARTISAN_GO_LARAVEL_VERSION") {
			environ = append([]string{"ARTISAN_GO_LARAVEL_VERSION=11.30", "DB_DATABASE=:memory:"}, environ...)
		}
		cfg, err := Load(LoadParams{Environ: environ})
		if len(tc.err) > 0 {
			if err == nil {
				t.Errorf("%q: loaded, want an error", tc.environ)
			}
			for _, w := range tc.err {
				if err != nil && !strings.Contains(err.Error(), w) {
					t.Errorf("%q: %v, want %q said", tc.environ, err, w)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.environ, err)
			continue
		}
		if noted := strings.Contains(strings.Join(cfg.Warnings(), "\n"), "DB_QUEUE_CONNECTION"); noted != tc.note {
			t.Errorf("%q: noted %v, want %v", tc.environ, noted, tc.note)
		}
	}
}
