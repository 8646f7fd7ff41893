package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

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
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		app := "<?php\n\nreturn [\n    /*\n    | the timezone\n    */\n    " + tc.appPHP + "\n    'nested' => ['timezone' => 'UTC'],\n];\n"
		if err := os.WriteFile(filepath.Join(dir, "config", "app.php"), []byte(app), 0o644); err != nil {
			t.Fatal(err)
		}
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
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config", "queue.php"), []byte(queuePHP), 0o644); err != nil {
			t.Fatal(err)
		}
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
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config", "app.php"), []byte("<?php\nreturn [\n    "+tc.appPHP+"\n];\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(LoadParams{EnvFile: writeFile(t, dir, ".env", tc.dotenv)})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.App.MaintenanceDriver != tc.driver || cfg.App.MaintenanceStore != tc.store {
			t.Errorf("%s: driver %q store %q, want %q %q", tc.appPHP, cfg.App.MaintenanceDriver, cfg.App.MaintenanceStore, tc.driver, tc.store)
		}
	}
}
