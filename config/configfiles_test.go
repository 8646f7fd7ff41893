package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// appWithConfig makes an application directory whose config/ holds the files given by name, and
// returns it.
func appWithConfig(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, "config", name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadAppPHP reads config/app.php as PHP does without a cached configuration: a literal timezone
// or cipher (Laravel 5–10) wins over APP_TIMEZONE / APP_CIPHER, ours (ARTISAN_GO_) over it; an
// env() of another variable reads that variable, and the default of env('APP_TIMEZONE', ...) is
// used when the variable is not set; PHP code it does not evaluate leaves the default.
func TestLoadAppPHP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, appPHP, dotenv string
		environ              []string
		timezone, cipher     string
	}{
		{"literals", "'timezone' => 'Europe/Paris',\n    'cipher' => \"AES-128-CBC\", // the app's", "APP_TIMEZONE=Asia/Tokyo\nAPP_CIPHER=AES-256-GCM\n", nil, "Europe/Paris", "AES-128-CBC"},
		{"ours wins", "'timezone' => 'Europe/Paris',", "", []string{"ARTISAN_GO_APP_TIMEZONE=Asia/Tokyo"}, "Asia/Tokyo", "AES-256-CBC"},
		{"another variable", "'timezone' => env('APP_TZ', 'America/New_York'),", "APP_TIMEZONE=Asia/Tokyo\n", nil, "America/New_York", "AES-256-CBC"},
		{"another variable set", "'timezone' => env('APP_TZ', 'America/New_York'),", "APP_TZ=Asia/Tokyo\n", nil, "Asia/Tokyo", "AES-256-CBC"},
		{"default", "'timezone' => env('APP_TIMEZONE', 'Europe/Berlin'),", "", nil, "Europe/Berlin", "AES-256-CBC"},
		{"variable over default", "'timezone' => env('APP_TIMEZONE', 'Europe/Berlin'),", "", []string{"APP_TIMEZONE=Asia/Tokyo"}, "Asia/Tokyo", "AES-256-CBC"},
		// PHP code: PHP does not read APP_TIMEZONE either (PHP 8.83 wrote failed_at in UTC here).
		{"not a literal", "'timezone' => date_default_timezone_get(),", "APP_TIMEZONE=Asia/Tokyo\n", nil, "UTC", "AES-256-CBC"},
		{"closures around it", "'resolver' => fn () => 'x',\n    'timezone' => 'Asia/Tokyo',\n    'other' => fn ($a): string => $a,", "", nil, "Asia/Tokyo", "AES-256-CBC"},
	} {
		app := "<?php\n\nreturn [\n    /*\n    | the timezone\n    */\n    " + tc.appPHP + "\n    'nested' => ['timezone' => 'UTC'],\n];\n"
		dir := appWithConfig(t, map[string]string{"app.php": app})
		env := writeFile(t, dir, ".env", tc.dotenv)
		cfg, err := Load(LoadParams{EnvFile: env, Environ: tc.environ})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.App.Timezone != tc.timezone || cfg.App.Cipher != tc.cipher {
			t.Errorf("%s: timezone %q cipher %q, want %q %q", tc.name, cfg.App.Timezone, cfg.App.Cipher, tc.timezone, tc.cipher)
		}
	}
}

// TestLoadAppEnvAndKey reads the environment and the key config/app.php writes, which PHP's worker
// takes (queue:clear asks for confirmation in production; the key decrypts jobs) over APP_ENV and
// APP_KEY.
func TestLoadAppEnvAndKey(t *testing.T) {
	t.Parallel()
	app := "<?php\nreturn ['env' => 'staging', 'key' => env('SHOP_KEY', 'base64:'.'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=')];\n"
	dir := appWithConfig(t, map[string]string{"app.php": app})
	cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "APP_ENV=production\nAPP_KEY=base64:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=\n")})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.App.Env != "staging" || cfg.App.Key != "base64:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" {
		t.Errorf("env %q, key %q; want config/app.php's", cfg.App.Env, cfg.App.Key)
	}
}

// TestLoadQueuePHP reads the queue connection's table, queue and retry_after and the failed jobs'
// table from config/queue.php as PHP does: written there (Laravel 5–10: retry_after 90, often raised),
// or through env() (Laravel 11), for the connection QUEUE_CONNECTION names.
func TestLoadQueuePHP(t *testing.T) {
	t.Parallel()
	queuePHP := `<?php
$helper = function () { return ['not' => 'this']; };
return [
    'default' => env('QUEUE_CONNECTION', 'sync'),
    'connections' => [
        'database' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 300],
        'reports' => ['driver' => 'database', 'table' => 'report_jobs', 'queue' => env('REPORTS_QUEUE', 'reports'), 'retry_after' => (int) env('REPORTS_RETRY_AFTER', 900)],
        'redis' => ['driver' => 'redis', 'queue' => 'r', 'retry_after' => 5],
        'computed' => ['driver' => 'database', 'retry_after' => 60 * 10],
        'code' => ['driver' => 'database', 'retry_after' => config('x.y')],
        'nothing' => ['driver' => 'database', 'table' => 'jobs', 'retry_after' => null],
        'missing' => ['driver' => 'database', 'table' => 'my_' . 'jobs', 'cb' => fn () => null, 'also' => function () { return 1; }],
        'octal' => ['driver' => 'database', 'retry_after' => 0454, 'queue' => "a" . 1 . 'b'],
        'parens' => ['driver' => 'database', 'retry_after' => -(-(60 * 5)) % 1000 + 2 ** 3 - 8],
        'heredoc' => ['driver' => 'database', 'retry_after' => 300, 'note' => <<<EOT
            ] }
            EOT, 'table' => 'my_jobs'],
        'spread' => [...$base, 'driver' => 'database', 'retry_after' => 300],
        'unknown_driver' => ['driver' => strtolower('DATABASE'), 'retry_after' => 300],
    ],
    'failed' => ['driver' => env('QUEUE_FAILED_DRIVER', 'database-uuids'), 'database' => env('DB_CONNECTION', 'mysql'), 'table' => 'dead_jobs'],
];
`
	for _, tc := range []struct {
		name, dotenv string
		environ      []string
		retryAfter   time.Duration
		table        string
		queues       []string
	}{
		{"literal", "QUEUE_CONNECTION=database\nDB_QUEUE_RETRY_AFTER=60\n", nil, 300 * time.Second, "jobs", []string{"default"}},
		{"another connection", "QUEUE_CONNECTION=reports\n", []string{"REPORTS_RETRY_AFTER=1200"}, 1200 * time.Second, "report_jobs", []string{"reports"}},
		{"ours wins", "QUEUE_CONNECTION=database\n", []string{"ARTISAN_GO_WORKER_RETRY_AFTER=45"}, 45 * time.Second, "jobs", []string{"default"}},
		{"not a database connection", "QUEUE_CONNECTION=redis\n", nil, 90 * time.Second, "jobs", []string{"default"}},
		{"an expression", "QUEUE_CONNECTION=computed\n", nil, 600 * time.Second, "jobs", []string{"default"}},
		{"code", "QUEUE_CONNECTION=code\nDB_QUEUE_RETRY_AFTER=30\n", nil, 90 * time.Second, "jobs", []string{"default"}},
		{"null", "QUEUE_CONNECTION=nothing\n", nil, 60 * time.Second, "jobs", []string{"default"}},
		{"missing, and closures", "QUEUE_CONNECTION=missing\n", nil, 60 * time.Second, "my_jobs", []string{"default"}},
		{"octal", "QUEUE_CONNECTION=octal\n", nil, 300 * time.Second, "jobs", []string{"a1b"}},
		{"parentheses", "QUEUE_CONNECTION=parens\n", nil, 300 * time.Second, "jobs", []string{"default"}},
		{"heredoc", "QUEUE_CONNECTION=heredoc\n", nil, 300 * time.Second, "my_jobs", []string{"default"}},
		{"spread", "QUEUE_CONNECTION=spread\nDB_QUEUE_RETRY_AFTER=30\n", nil, 90 * time.Second, "jobs", []string{"default"}},
		{"unknown driver", "QUEUE_CONNECTION=unknown_driver\nDB_QUEUE_RETRY_AFTER=30\n", nil, 90 * time.Second, "jobs", []string{"default"}},
		// The file's default is sync: the worker works its database connection, and reads its settings.
		{"no QUEUE_CONNECTION", "", nil, 300 * time.Second, "jobs", []string{"default"}},
	} {
		dir := appWithConfig(t, map[string]string{"queue.php": queuePHP})
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", tc.dotenv), Environ: tc.environ})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if noted := strings.Contains(strings.Join(cfg.Warnings(), "\n"), "retry_after written there is PHP code"); noted != (tc.name == "code" || tc.name == "spread" || tc.name == "unknown driver") {
			t.Errorf("%s: warnings %q", tc.name, cfg.Warnings())
		}
		if differs := strings.Contains(strings.Join(cfg.Warnings(), "\n"), "is not config/queue.php's 5m0s"); differs != (tc.name == "ours wins") {
			t.Errorf("%s: a warning that retry_after differs from the file's: %v; warnings %q", tc.name, differs, cfg.Warnings())
		}
		if cfg.Worker.RetryAfter != tc.retryAfter || cfg.Tables.Jobs != tc.table || !slices.Equal(cfg.Worker.Queues, tc.queues) || cfg.Tables.FailedJobs != "dead_jobs" {
			t.Errorf("%s: retry_after %v, table %q, queues %v, failed table %q; want %v, %q, %v, dead_jobs",
				tc.name, cfg.Worker.RetryAfter, cfg.Tables.Jobs, cfg.Worker.Queues, cfg.Tables.FailedJobs, tc.retryAfter, tc.table, tc.queues)
		}
	}
}

// TestLoadQueueDefaultPHP takes the queue connection config/queue.php's default names when no
// QUEUE_CONNECTION is set, as PHP's worker does: its name is the one failed_jobs rows and queue:pause
// keys carry.
func TestLoadQueueDefaultPHP(t *testing.T) {
	t.Parallel()
	queue := "<?php\nreturn ['default' => 'database2', 'connections' => ['database2' => ['driver' => 'database', 'table' => 'jobs2', 'queue' => 'q2', 'retry_after' => 120], 'database' => ['driver' => 'database', 'table' => 'jobs']]];\n"
	dir := appWithConfig(t, map[string]string{"queue.php": queue})
	// QUEUE_CONNECTION, which this file does not read, does not count either.
	for _, dotenv := range []string{"", "QUEUE_CONNECTION=database\n", "QUEUE_CONNECTION=sync\n"} {
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", dotenv)})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Connection != "database2" || cfg.Tables.Jobs != "jobs2" || cfg.Worker.RetryAfter != 120*time.Second || !slices.Equal(cfg.Worker.Queues, []string{"q2"}) {
			t.Errorf("%q: connection %q, table %q, retry_after %v, queues %v; want database2's", dotenv, cfg.Connection, cfg.Tables.Jobs, cfg.Worker.RetryAfter, cfg.Worker.Queues)
		}
	}
}

// TestLoadMaintenanceDriver reads config/app.php's maintenance driver and store (Laravel 9+), written
// there, or through APP_MAINTENANCE_DRIVER / APP_MAINTENANCE_STORE (11+).
func TestLoadMaintenanceDriver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		appPHP, dotenv, driver, store string
	}{
		{"'maintenance' => [\n        'driver' => 'cache',\n        // 'store' => 'redis',\n    ],", "", "cache", ""},
		{"'maintenance' => ['driver' => env('APP_MAINTENANCE_DRIVER', 'file'), 'store' => env('APP_MAINTENANCE_STORE', 'database')],", "APP_MAINTENANCE_DRIVER=cache\nAPP_MAINTENANCE_STORE=redis\n", "cache", "redis"},
		{"'name' => 'Laravel',", "", "", ""},
	} {
		dir := appWithConfig(t, map[string]string{"app.php": "<?php\nreturn [\n    " + tc.appPHP + "\n];\n"})
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", tc.dotenv)})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.App.MaintenanceDriver != tc.driver || cfg.App.MaintenanceStore != tc.store {
			t.Errorf("%s: driver %q store %q, want %q %q", tc.appPHP, cfg.App.MaintenanceDriver, cfg.App.MaintenanceStore, tc.driver, tc.store)
		}
	}
}

// TestLoadDatabaseAndCachePHP reads the queue's database connection, the cache store and prefix and
// the log channel from config/database.php, config/cache.php and config/logging.php as PHP does
// without a cached configuration: values written there win over the variables PHP would otherwise
// read (a table prefix, a host), env() defaults count when the variable is unset, Str::slug gives
// the skeleton's prefixes, the queue connection's own database connection is followed, and what the
// reader does not evaluate (storage_path(), a ternary) is read as without the files.
func TestLoadDatabaseAndCachePHP(t *testing.T) {
	t.Parallel()
	databasePHP := `<?php

use Illuminate\Support\Str;

return [
    'default' => env('DB_CONNECTION', 'mysql'),
    'connections' => [
        'sqlite' => [
            'driver' => 'sqlite',
            'database' => env('DB_DATABASE', database_path('database.sqlite')),
            'prefix' => '',
        ],
        'mysql' => [
            'driver' => 'mysql',
            'host' => env('DB_HOST', '10.0.0.5'),
            'port' => env('DB_PORT', '3306'),
            'database' => env('DB_DATABASE', 'shop'),
            'username' => env('DB_USERNAME', 'forge'),
            'prefix' => 'shop_',
            'options' => extension_loaded('pdo_mysql') ? array_filter([
                PDO::MYSQL_ATTR_SSL_CA => env('MYSQL_ATTR_SSL_CA'),
            ]) : [],
        ],
        'reports' => ['driver' => 'pgsql', 'host' => 'reports.internal', 'port' => 6432, 'database' => 'reports', 'search_path' => 'queue'],
    ],
    'redis' => [
        'options' => ['prefix' => env('REDIS_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-database-')],
        'cache' => ['host' => env('REDIS_HOST', '127.0.0.1'), 'port' => env('REDIS_PORT', '6379'), 'database' => env('REDIS_CACHE_DB', '1')],
    ],
];
`
	cachePHP := `<?php

use Illuminate\Support\Str;

return [
    'default' => env('CACHE_STORE', 'redis'),
    'stores' => [
        'database' => ['driver' => 'database', 'table' => 'shop_cache', 'lock_table' => env('DB_CACHE_LOCK_TABLE')],
        'file' => ['driver' => 'file', 'path' => storage_path('framework/cache/data')],
        'redis' => ['driver' => 'redis', 'connection' => env('REDIS_CACHE_CONNECTION', 'cache')],
    ],
    'prefix' => env('CACHE_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-cache-'),
];
`
	queuePHP := `<?php
return [
    'default' => env('QUEUE_CONNECTION', 'database'),
    'connections' => [
        'database' => ['driver' => 'database', 'connection' => env('DB_QUEUE_CONNECTION'), 'table' => 'jobs', 'retry_after' => 90],
        'reports' => ['driver' => 'database', 'connection' => 'reports', 'table' => 'jobs', 'retry_after' => 90],
    ],
];
`
	for _, tc := range []struct {
		name, dotenv string
		environ      []string
		check        func(*Config) string
	}{
		{"written in the files", "APP_NAME='My Shop'\nDB_HOST=db.internal\nDB_PREFIX=other_\nLOG_CHANNEL=stderr\n", nil, func(c *Config) string {
			if c.DB.Driver != "mysql" || c.DB.Host != "db.internal" || c.DB.Port != 3306 || c.DB.Database != "shop" || c.DB.Username != "forge" || c.DB.Prefix != "shop_" {
				return fmt.Sprintf("db %+v", c.DB)
			}
			if c.Cache.Store != "redis" || c.Cache.Prefix != "my-shop-cache-" || c.Cache.Redis.Prefix != "my-shop-database-" || c.Cache.Redis.DB != 1 || c.Tables.Cache != "shop_cache" {
				return fmt.Sprintf("cache %+v, cache table %q", c.Cache, c.Tables.Cache)
			}
			if c.Log.Channel != "stderr" {
				return fmt.Sprintf("log channel %q", c.Log.Channel)
			}
			if slices.ContainsFunc(c.Warnings(), func(w string) bool {
				return strings.Contains(w, "Laravel 12 skeleton") || strings.Contains(w, "PHP code")
			}) {
				return fmt.Sprintf("a note on what the files give: %q", c.Warnings())
			}
			return ""
		}},
		{"variables over env() defaults", "CACHE_STORE=database\nCACHE_PREFIX=mine\n", []string{"DB_HOST=10.1.1.1", "DB_PORT=3307"}, func(c *Config) string {
			if c.DB.Host != "10.1.1.1" || c.DB.Port != 3307 || c.Cache.Store != "database" || c.Cache.Prefix != "mine" || c.Cache.Redis.Prefix != "laravel-database-" {
				return fmt.Sprintf("db %+v cache %+v", c.DB, c.Cache)
			}
			return ""
		}},
		{"the queue connection's database", "QUEUE_CONNECTION=reports\n", nil, func(c *Config) string {
			if c.DB.Driver != "pgsql" || c.DB.Host != "reports.internal" || c.DB.Port != 6432 || c.DB.Database != "reports" || c.DB.Schema != "queue" || c.DB.Prefix != "" {
				return fmt.Sprintf("db %+v", c.DB)
			}
			return ""
		}},
		{"DB_QUEUE_CONNECTION", "DB_QUEUE_CONNECTION=reports\nARTISAN_GO_LARAVEL_VERSION=11.0\n", nil, func(c *Config) string {
			if c.DB.Driver != "pgsql" || c.DB.Host != "reports.internal" || c.DB.Database != "reports" {
				return fmt.Sprintf("db %+v", c.DB)
			}
			return ""
		}},
		{"paths and options", "DB_CONNECTION=sqlite\nMYSQL_ATTR_SSL_CA=/ca.pem\nCACHE_STORE=file\n", nil, func(c *Config) string {
			if c.DB.Driver != "sqlite" || c.DB.Database != filepath.Join(filepath.Dir(c.EnvFile()), "database", "database.sqlite") ||
				c.Cache.File.Path != filepath.Join(filepath.Dir(c.EnvFile()), "storage", "framework", "cache", "data") {
				return fmt.Sprintf("db %+v, file store %+v", c.DB, c.Cache.File)
			}
			if len(c.Warnings()) > 0 {
				return fmt.Sprintf("notes %q", c.Warnings())
			}
			return ""
		}},
		{"null prefix", "CACHE_PREFIX=null\nREDIS_PREFIX=(null)\n", nil, func(c *Config) string {
			if c.Cache.Prefix != "" || c.Cache.Redis.Prefix != "" {
				return fmt.Sprintf("cache prefix %q, Redis prefix %q; want none, as PHP's null", c.Cache.Prefix, c.Cache.Redis.Prefix)
			}
			return ""
		}},
	} {
		dir := appWithConfig(t, map[string]string{"database.php": databasePHP, "cache.php": cachePHP, "queue.php": queuePHP,
			"logging.php": "<?php\nreturn ['default' => env('LOG_CHANNEL', 'stack')];\n"})
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", tc.dotenv), Environ: tc.environ})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if problem := tc.check(cfg); problem != "" {
			t.Errorf("%s: %s", tc.name, problem)
		}
	}

	// Code the reader does not evaluate: named, and CACHE_PREFIX (which PHP does not read then) left out.
	computed := strings.Replace(cachePHP, "'prefix' => env('CACHE_PREFIX',", "'prefix' => strtolower(env('X', 'Shop_')), 'was' => env('CACHE_PREFIX',", 1)
	dir := appWithConfig(t, map[string]string{"database.php": strings.Replace(databasePHP, "'default' => env('DB_CONNECTION', 'mysql')", "'default' => env('DB_CONNECTION') ?: config('database.fallback')", 1), "cache.php": computed})
	cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "CACHE_PREFIX=foo_\nARTISAN_GO_LARAVEL_VERSION=12.30\n")})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(cfg.Warnings(), "\n")
	if cfg.Cache.Prefix == "foo_" || strings.Contains(notes, "Laravel 12 skeleton") || !strings.Contains(notes, "set cache.prefix (ARTISAN_GO_CACHE_PREFIX)") || !strings.Contains(notes, "the default connection written there is PHP code") {
		t.Errorf("a computed cache prefix and default connection: prefix %q, notes %q", cfg.Cache.Prefix, cfg.Warnings())
	}
	// The setting given, the note is moot.
	cfg, err = Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "CACHE_PREFIX=foo_\nARTISAN_GO_CACHE_PREFIX=mine_\n")})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(cfg.Warnings(), "\n"); cfg.Cache.Prefix != "mine_" || strings.Contains(notes, "cache.prefix") {
		t.Errorf("ARTISAN_GO_CACHE_PREFIX given: prefix %q, notes %q", cfg.Cache.Prefix, cfg.Warnings())
	}

	// A connection built by code (array_merge, a spread): named, not half read.
	for _, mysql := range []string{"'mysql' => array_merge($common, ['driver' => 'mysql']),", "'mysql' => ['driver' => 'mysql', 'host' => 'a', ...(env('DB_SSL') ? ['host' => 'b'] : [])],"} {
		src := "<?php\nreturn ['default' => 'mysql', 'connections' => [" + mysql + "]];\n"
		dir := appWithConfig(t, map[string]string{"database.php": src})
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "DB_HOST=envhost\n")})
		if err != nil {
			t.Fatal(err)
		}
		if notes := strings.Join(cfg.Warnings(), "\n"); !strings.Contains(notes, "the database connection [mysql] is built by PHP code") || cfg.DB.Host != "envhost" {
			t.Errorf("%s: host %q, notes %q; want .env's host and the connection named", mysql, cfg.DB.Host, cfg.Warnings())
		}
	}

	// Failed jobs on another database than the queue's: refused, as with a cached configuration.
	failedElsewhere := strings.Replace(queuePHP, "    ],\n];", "    ],\n    'failed' => ['driver' => 'database-uuids', 'database' => 'reports', 'table' => 'failed_jobs'],\n];", 1)
	dir = appWithConfig(t, map[string]string{"database.php": databasePHP, "cache.php": cachePHP, "queue.php": failedElsewhere})
	if _, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "")}); err == nil || !strings.Contains(err.Error(), "queue.failed.database") || strings.Contains(err.Error(), "config:cache") {
		t.Errorf("failed jobs on [reports], the queue on [mysql]: %v; want the two named, without config:cache", err)
	}
}

// TestFrameworkConfigPrefixes derives the cache and Redis prefixes of an application whose config
// directory lacks cache.php or database.php from the framework's own copy of the file (underscores
// until 13.0), with no note; without a config directory at all the 12.20+ skeleton's are guessed, with
// a note.
func TestFrameworkConfigPrefixes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, version string
		files         map[string]string // nil: no config directory
		cache, redis  string
		note          bool
	}{
		{"12.x, no cache.php or database.php", "12.50", map[string]string{}, "my_shop_cache_", "my_shop_database_", false},
		{"13.x, no cache.php or database.php", "13.0", map[string]string{}, "my-shop-cache-", "my-shop-database-", false},
		{"12.x, no config directory", "12.50", nil, "my-shop-cache-", "my-shop-database-", true},
		{"12.x, files without the prefixes", "12.50", map[string]string{
			"cache.php":    "<?php\nreturn ['default' => env('CACHE_STORE', 'database')];\n",
			"database.php": "<?php\nreturn ['default' => env('DB_CONNECTION', 'sqlite')];\n",
		}, "my_shop_cache_", "my_shop_database_", false},
	} {
		dir := t.TempDir()
		if tc.files != nil {
			dir = appWithConfig(t, tc.files)
		}
		env := writeFile(t, dir, ".env", "APP_NAME=\"My Shop\"\nARTISAN_GO_LARAVEL_VERSION="+tc.version+"\n")
		cfg, err := Load(LoadParams{EnvFile: env})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		note := strings.Contains(strings.Join(cfg.Warnings(), "\n"), "June 2025")
		if cfg.Cache.Prefix != tc.cache || cfg.Cache.Redis.Prefix != tc.redis || note != tc.note {
			t.Errorf("%s: prefixes %q and %q, note %v; want %q, %q, %v", tc.name, cfg.Cache.Prefix, cfg.Cache.Redis.Prefix, note, tc.cache, tc.redis, tc.note)
		}
	}
}

// TestFrameworkConfigMerge reads what Laravel 11+ takes from the framework's own config files where
// the application's lack a key, and what PHP takes where a file's array leaves a key out: a
// maintenance array without a store (Laravel 10's layout) uses the default cache store whatever
// APP_MAINTENANCE_STORE says, no maintenance array the framework's 'database'; a database cache store
// without lock_table CacheManager's cache_locks, whatever DB_CACHE_LOCK_TABLE says.
func TestFrameworkConfigMerge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string
		store string // app.maintenance_store
		locks string // tables.cache_locks
	}{
		{"Laravel 10's app.php and cache.php", map[string]string{
			"app.php":   "<?php\nreturn ['name' => 'Shop', 'maintenance' => ['driver' => 'cache']];\n",
			"cache.php": "<?php\nreturn ['default' => 'database', 'stores' => ['database' => ['driver' => 'database', 'table' => 'cache']]];\n",
		}, "", "cache_locks"},
		{"no app.php or cache.php", map[string]string{}, "file", "mylocks"},
		{"the 11 skeleton's", map[string]string{
			"app.php":   "<?php\nreturn ['maintenance' => ['driver' => env('APP_MAINTENANCE_DRIVER', 'file'), 'store' => env('APP_MAINTENANCE_STORE', 'database')]];\n",
			"cache.php": "<?php\nreturn ['stores' => ['database' => ['driver' => 'database', 'lock_table' => env('DB_CACHE_LOCK_TABLE')]]];\n",
		}, "file", "mylocks"},
	} {
		dir := appWithConfig(t, tc.files)
		env := writeFile(t, dir, ".env", "ARTISAN_GO_LARAVEL_VERSION=11\nAPP_MAINTENANCE_STORE=file\nDB_CACHE_LOCK_TABLE=mylocks\n")
		cfg, err := Load(LoadParams{EnvFile: env})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.App.MaintenanceStore != tc.store || cfg.Tables.CacheLocks != tc.locks {
			t.Errorf("%s: maintenance store %q, lock table %q; want %q, %q", tc.name, cfg.App.MaintenanceStore, cfg.Tables.CacheLocks, tc.store, tc.locks)
		}
	}
	// Without APP_MAINTENANCE_STORE, 11+ takes the framework's default.
	dir := appWithConfig(t, map[string]string{})
	env := writeFile(t, dir, ".env", "ARTISAN_GO_LARAVEL_VERSION=12\n")
	cfg, err := Load(LoadParams{EnvFile: env})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.App.MaintenanceStore != "database" {
		t.Errorf("12 without app.php: maintenance store %q, want database", cfg.App.MaintenanceStore)
	}
}

// TestFailedWithoutDriver reads a queue.failed array without a driver key (Laravel 5.8's layout) as
// QueueServiceProvider does: the database provider when it has a table, else the Null provider; from
// the config files and from a cached configuration.
func TestFailedWithoutDriver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ failed, want string }{
		{"['database' => env('DB_CONNECTION', 'mysql'), 'table' => 'failed_jobs']", "database"},
		{"['database' => 'mysql']", "null"},
	} {
		queue := "<?php\nreturn ['default' => 'database', 'connections' => ['database' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90]],\n    'failed' => " + tc.failed + "];\n"
		dir := appWithConfig(t, map[string]string{"queue.php": queue})
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "ARTISAN_GO_LARAVEL_VERSION=8.83\n")})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Failed.Driver != tc.want {
			t.Errorf("config/queue.php failed %s: driver %q, want %q", tc.failed, cfg.Failed.Driver, tc.want)
		}
		cached := "<?php return array (\n  'database' => array ('default' => 'mysql', 'connections' => array ('mysql' => array ('driver' => 'mysql', 'host' => 'db', 'port' => '3306', 'database' => 'app', 'username' => 'u', 'password' => '', 'prefix' => ''))),\n  'queue' => array ('default' => 'database', 'connections' => array ('database' => array ('driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90)),\n    'failed' => " +
			strings.NewReplacer("[", "array (", "]", ")", "env('DB_CONNECTION', 'mysql')", "'mysql'").Replace(tc.failed) + "),\n);\n"
		cfg, err = Load(LoadParams{EnvFile: cachedApp(t, []byte(cached), "ARTISAN_GO_LARAVEL_VERSION=8.83\n")})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Failed.Driver != tc.want {
			t.Errorf("cached failed %s: driver %q, want %q", tc.failed, cfg.Failed.Driver, tc.want)
		}
	}
}

// TestCachedMaintenanceWithoutStore reads a cached configuration whose maintenance array has no store
// (Laravel 10's layout, cached on 11+) as the default cache store, not the framework's 'database'.
func TestCachedMaintenanceWithoutStore(t *testing.T) {
	t.Parallel()
	cached := "<?php return array (\n  'app' => array ('name' => 'Shop', 'maintenance' => array ('driver' => 'cache')),\n);\n"
	cfg, err := Load(LoadParams{EnvFile: cachedApp(t, []byte(cached), "ARTISAN_GO_LARAVEL_VERSION=11\nAPP_MAINTENANCE_STORE=file\n")})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.App.MaintenanceDriver != "cache" || cfg.App.MaintenanceStore != "" {
		t.Errorf("maintenance driver %q, store %q; want cache and the default store", cfg.App.MaintenanceDriver, cfg.App.MaintenanceStore)
	}
}

// TestLoadInteropAppRedis reads the interop application's config/database.php, whose Redis array is
// an array_merge() of a conditional (a Redis Cluster's nodes when REDIS_CLUSTER_NODES is set): the
// branch PHP takes is evaluated, so REDIS_PREFIX counts as it does for PHP, and no note is given.
func TestLoadInteropAppRedis(t *testing.T) {
	t.Parallel()
	app, err := filepath.Abs(filepath.Join("..", "testdata", "laravel"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadParams{AppDir: app, Environ: []string{"CACHE_DRIVER=redis", "REDIS_PREFIX=p2_", "REDIS_CACHE_DB=3"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Cache.Redis.Prefix != "p2_" || cfg.Cache.Redis.DB != 3 {
		t.Errorf("Redis prefix %q, database %d; want p2_ and 3 from the environment", cfg.Cache.Redis.Prefix, cfg.Cache.Redis.DB)
	}
	if slices.ContainsFunc(cfg.Warnings(), func(w string) bool { return strings.Contains(w, "redis") }) {
		t.Errorf("a note on the Redis settings: %q", cfg.Warnings())
	}
}

// TestQueueConnectionsOfQueuePHP: the queue connections config/queue.php lists are the application's,
// as PHP reads them: another name has not been configured (from Laravel 11 the framework's own are
// merged in), a connection's driver is the file's, and null is always the Null queue.
func TestQueueConnectionsOfQueuePHP(t *testing.T) {
	t.Parallel()
	queuePHP := `<?php
return [
    'default' => env('QUEUE_CONNECTION', 'database'),
    'connections' => [
        'sync' => ['driver' => 'database', 'table' => 'jobs', 'retry_after' => 90],
        'database' => ['driver' => 'database', 'table' => 'jobs', 'retry_after' => 90],
        'later' => ['driver' => env('LATER_DRIVER', 'redis')],
    ],
];
`
	dir := appWithConfig(t, map[string]string{"queue.php": queuePHP})
	for _, tc := range []struct {
		version, name, driver string
		known                 bool
	}{
		{"8.83", "database", "database", true}, {"8.83", "sync", "database", true}, {"8.83", "later", "redis", true},
		{"8.83", "redis", "", false}, {"8.83", "sqs", "", false}, {"8.83", "null", "null", true},
		{"11", "redis", "redis", true}, {"11", "sqs", "sqs", true}, {"11", "sync", "database", true}, {"11", "nope", "", false},
	} {
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env."+tc.version, "ARTISAN_GO_LARAVEL_VERSION="+tc.version+"\n")})
		if err != nil {
			t.Fatal(err)
		}
		if d, known := cfg.QueueDriver(tc.name); d != tc.driver || known != tc.known {
			t.Errorf("%s: QueueDriver(%s) = %q, %v; want %q, %v", tc.version, tc.name, d, known, tc.driver, tc.known)
		}
	}
	cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "QUEUE_CONNECTION=sync\n")})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckWorkable(); err != nil {
		t.Errorf("a sync connection config/queue.php makes a database one: %v", err)
	}
	for conn, want := range map[string]string{"redis": "The [redis] queue connection has not been configured.", "later": "has the redis driver in " + filepath.Join(dir, "config", "queue.php")} {
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", "QUEUE_CONNECTION="+conn+"\n")})
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil {
			err = cfg.CheckWorkable()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("QUEUE_CONNECTION=%s: %v, want %q", conn, err, want)
		}
	}
}
