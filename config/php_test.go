package config

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// phpDotenv is a PHP script that reads a JSON list of .env contents on standard input and loads each
// with phpdotenv into an array-backed repository, printing a JSON list of {"vars": ...} or
// {"error": ...}.
const phpDotenv = `
$out = [];
foreach (json_decode(stream_get_contents(STDIN), true) as $content) {
    $dir = sys_get_temp_dir() . '/dotenv-' . bin2hex(random_bytes(8));
    mkdir($dir);
    file_put_contents("$dir/.env", $content);
    try {
        $vars = Dotenv\Dotenv::createArrayBacked($dir)->load();
        $out[] = ['vars' => (object) array_filter($vars, fn ($v) => $v !== null)];
    } catch (Throwable $e) {
        $out[] = ['error' => $e->getMessage()];
    }
    unlink("$dir/.env");
    rmdir($dir);
}
echo json_encode($out);
`

// runPHP runs a PHP script with Laravel's autoloader on the include path, the JSON of input on its
// standard input, and returns what it prints. It reports PHP as missing (false) when it cannot run.
func runPHP(t *testing.T, script string, input any) ([]byte, bool) {
	t.Helper()
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("php", "-d", "include_path=.:/usr/share/php", "-r", "require 'Illuminate/autoload.php';"+script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		testenv.Missing(t, "PHP with Laravel is not usable (%v: %s): apt-get install php-cli php-laravel-framework", err, stderr.String())
		return nil, false
	}
	return out, true
}

// TestSlugAgreesWithPHP compares slug with Laravel's Str::slug on application names.
func TestSlugAgreesWithPHP(t *testing.T) {
	t.Parallel()
	names := []string{"Laravel", "My Shop!", "  Café   Crème-Brûlée ", "a.b", "a@b", "__x__y__", "Straße",
		"Ünïcødé Tëst", "Søren Łukasz", "日本 app", "x-y_z", "A & B", "Ørsted 2.0 (beta)", "", "--",
		"Shop™", "Shop—Store", "Ağrı", "€uro Shop", "½ Price", "ĦŦĸ", "Магазин", "Αθήνα", "a\u00a0b", "Dvořák Þórr"}
	// Every letter of the Latin blocks with accents, alone between two others.
	for _, block := range [][2]rune{{0xC0, 0x24F}, {0x1E00, 0x1EFF}} {
		for r := block[0]; r <= block[1]; r++ {
			names = append(names, "a"+string(r)+"b")
		}
	}
	out, ok := runPHP(t, `
$out = [];
foreach (json_decode(stream_get_contents(STDIN), true) as $n) {
    $out[] = [Illuminate\Support\Str::slug($n, '_'), Illuminate\Support\Str::slug($n)];
}
echo json_encode($out);`, names)
	if !ok {
		return
	}
	var want [][2]string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(names) {
		t.Fatalf("PHP printed %q (%v)", out, err)
	}
	// A slug said to be exact is PHP's; one that is not is noted to the user where it is used.
	for i, n := range names {
		under, exact := slugExact(n, '_')
		hyphen, _ := slugExact(n, '-')
		if got := [2]string{under, hyphen}; got != want[i] && exact {
			t.Errorf("slug(%q) = %q, said to be exact; Str::slug gives %q", n, got, want[i])
		}
	}
}

// TestParseDotenvAgreesWithPHP runs every .env case through Laravel's own parser, phpdotenv, and
// checks that this package reads the same variables, and rejects what it rejects. The real environment
// is empty on both sides.
func TestParseDotenvAgreesWithPHP(t *testing.T) {
	t.Parallel()
	var contents []string
	for _, c := range dotenvCases {
		contents = append(contents, c.content)
	}
	for _, c := range dotenvErrorCases {
		contents = append(contents, c.content)
	}
	out, ok := runPHP(t, phpDotenv, contents)
	if !ok {
		return
	}
	var results []struct {
		Vars  map[string]string `json:"vars"`
		Error *string           `json:"error"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(contents) {
		t.Fatalf("PHP printed %q (%v)", out, err)
	}
	for i, content := range contents {
		got, _, goErr := parseDotenv(".env", content, nil)
		php := results[i]
		switch {
		case php.Error != nil && goErr == nil:
			t.Errorf("%q: phpdotenv rejects it (%s), this package reads %q", content, *php.Error, got)
		case php.Error == nil && goErr != nil:
			t.Errorf("%q: phpdotenv reads %q, this package rejects it: %v", content, php.Vars, goErr)
		case php.Error == nil && !reflect.DeepEqual(got, php.Vars) && (len(got) != 0 || len(php.Vars) != 0):
			t.Errorf("%q: phpdotenv reads %q, this package %q", content, php.Vars, got)
		}
	}
}

// TestDatabaseURLAgreesWithPHP reads connection urls as Laravel's ConfigurationUrlParser merges them
// into a connection's configuration.
func TestDatabaseURLAgreesWithPHP(t *testing.T) {
	t.Parallel()
	urls := []string{
		"mysql://app:s3cr%23t@db.internal:3307/shop",
		"postgres://app@pg.internal/shop?search_path=queue",
		"postgresql://u:p%40ss%2Fw@h:6432/d?schema=s",
		"mysql2://root@127.0.0.1/forge?unix_socket=%2Frun%2Fmysqld.sock",
		"sqlite:///database/app.sqlite",
		"sqlite:////var/db/app.sqlite",
		"mysql://app:null@db.internal/shop",
		"mysql://app:true@db.internal/",
		"mariadb://app:x@db.internal:3306/a%20b",
		"mysql://app:p+s@db.internal/shop",
		"postgres://app@pg.internal/shop?sslmode=verify-full&sslrootcert=%2Fetc%2Fssl%2Fca.pem&sslcert=null",
		"pgsql://app@pg.internal/shop?sslmode=require&sslkey=k.pem",
	}
	const script = `
$out = [];
foreach (json_decode(stream_get_contents(STDIN), true) as $url) {
    $c = (new Illuminate\Support\ConfigurationUrlParser)->parseConfiguration(['url' => $url]);
    $s = fn ($k) => array_key_exists($k, $c) && $c[$k] !== null ? (string) $c[$k] : null;
    $out[] = ['driver' => $s('driver'), 'host' => $s('host'), 'port' => $s('port'), 'database' => $s('database'),
        'username' => $s('username'), 'password' => $s('password'), 'socket' => $s('unix_socket'),
        'schema' => $s('search_path') ?? $s('schema'), 'sslmode' => $s('sslmode'), 'sslrootcert' => $s('sslrootcert'),
        'sslcert' => $s('sslcert'), 'sslkey' => $s('sslkey')];
}
echo json_encode($out);
`
	out, ok := runPHP(t, script, urls)
	if !ok {
		return
	}
	var php []map[string]*string
	if err := json.Unmarshal(out, &php); err != nil || len(php) != len(urls) {
		t.Fatalf("PHP printed %s (%v)", out, err)
	}
	for i, raw := range urls {
		u, err := parseDatabaseURL(raw)
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		var port *string
		if u.port != nil {
			p := strconv.Itoa(*u.port)
			port = &p
		}
		got := map[string]*string{"driver": u.driver, "host": u.host, "port": port, "database": u.database,
			"username": u.username, "password": u.password, "socket": u.socket, "schema": u.schema,
			"sslmode": u.sslmode, "sslrootcert": u.sslrootcert, "sslcert": u.sslcert, "sslkey": u.sslkey}
		for k, want := range php[i] {
			if (want == nil) != (got[k] == nil) || want != nil && *want != *got[k] {
				t.Errorf("%s: %s is %v, PHP %v", raw, k, deref(got[k]), deref(want))
			}
		}
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// TestConfigCache reads a configuration that PHP's var_export wrote, as `php artisan config:cache`
// writes bootstrap/cache/config.php, instead of .env's Laravel variables (ARTISAN_GO_ names still
// count): the queue connection, its database connection, the app, the cache store, memcached's
// servers, quotes and backslashes in strings, objects and enum cases among the values.
func TestConfigCache(t *testing.T) {
	t.Parallel()
	const script = `
enum Mode: string { case Fast = 'fast'; }
class Thing { public $x = 1; }
$config = [
  'app' => ['name' => "O'Brien \\ Sons", 'env' => 'production', 'key' => 'base64:' . base64_encode(str_repeat('k', 32)), 'cipher' => 'AES-256-CBC',
    'timezone' => 'Europe/Paris', 'providers' => ['Illuminate\\Auth\\AuthServiceProvider'], 'mode' => Mode::Fast, 'thing' => new Thing, 'empty' => new stdClass],
  'database' => ['default' => 'mysql', 'connections' => [
    'mysql' => ['driver' => 'mysql', 'url' => null, 'host' => 'db.cached', 'port' => '3307', 'database' => 'shop', 'username' => 'app', 'password' => "p'w\\d\n", 'unix_socket' => ''],
    'queue_db' => ['driver' => 'pgsql', 'host' => 'pg.cached', 'port' => 5433, 'database' => 'jobs', 'username' => 'q', 'password' => null, 'search_path' => 'queue', 'prefix' => 'app_',
      'sslmode' => 'verify-full', 'sslrootcert' => 'certs/ca.pem', 'sslcert' => '/etc/ssl/client.crt', 'sslkey' => null],
  ], 'redis' => ['client' => 'phpredis', 'options' => ['prefix' => 'shop_database_'], 'default' => ['host' => '127.0.0.1', 'database' => '0'],
    'cache' => ['host' => 'redis.cached', 'password' => null, 'port' => 6380, 'database' => '5']]],
  'queue' => ['default' => 'database', 'connections' => [
    'database' => ['driver' => 'database', 'table' => 'queued', 'queue' => 'high', 'retry_after' => 120, 'connection' => 'queue_db', 'after_commit' => false],
  ], 'failed' => ['driver' => null, 'table' => 'failures'], 'output_timezone' => 'america/new_york'],
  'cache' => ['default' => 'redis', 'prefix' => 'shop_cache', 'stores' => ['redis' => ['driver' => 'redis', 'connection' => 'cache'],
    'memcached' => ['driver' => 'memcached', 'servers' => [['host' => 'mc1', 'port' => 11211, 'weight' => 100], ['host' => 'mc2', 'port' => 11212, 'weight' => 50]]]]],
  'logging' => ['default' => 'daily'],
  'ratio' => 1.5, 'big' => 1.0E+25, 'inf' => INF,
];
echo '<?php return '.var_export($config, true).';'.PHP_EOL;
`
	out, ok := runPHP(t, script, nil)
	if !ok {
		return
	}
	env := cachedApp(t, out, "DB_HOST=from-dotenv\nDB_PASSWORD=dotenv\nQUEUE_CONNECTION=database\nCACHE_DRIVER=file\nARTISAN_GO_WORKER_CONCURRENCY=7\n")
	dir := filepath.Dir(env)
	cfg, err := Load(LoadParams{EnvFile: env, Environ: []string{"DB_DATABASE=from-env", "ARTISAN_GO_APP_ENV=staging"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"db": cfg.DB, "jobs": cfg.Tables.Jobs, "failed_table": cfg.Tables.FailedJobs, "queues": cfg.Worker.Queues,
		"retry_after": cfg.Worker.RetryAfter, "failed": cfg.Failed.Driver, "name": cfg.App.Name, "env": cfg.App.Env,
		"tz": cfg.App.Timezone, "store": cfg.Cache.Store, "prefix": cfg.Cache.Prefix, "redis_host": cfg.Cache.Redis.Host,
		"redis_port": cfg.Cache.Redis.Port, "redis_db": cfg.Cache.Redis.DB, "redis_prefix": cfg.Cache.Redis.Prefix,
		"servers": cfg.Cache.Memcached.Servers, "channel": cfg.Log.Channel, "concurrency": cfg.Worker.Concurrency,
		"output_tz": cfg.Log.OutputTimezone,
	}
	want := map[string]any{
		"db": DB{Driver: "pgsql", Host: "pg.cached", Port: 5433, Database: "jobs", Username: "q", Schema: "queue", Prefix: "app_", PrefixIndexes: true,
			SSLMode: "verify-full", SSLRootCert: filepath.Join(dir, "certs", "ca.pem"), SSLCert: "/etc/ssl/client.crt"},
		"jobs": "queued", "failed_table": "failures", "queues": []string{"high"}, "retry_after": 120 * time.Second,
		"failed": "null", "name": `O'Brien \ Sons`, "env": "staging", "tz": "Europe/Paris", "store": "redis",
		"prefix": "shop_cache", "redis_host": "redis.cached", "redis_port": 6380, "redis_db": 5, "redis_prefix": "shop_database_",
		"servers": []string{"mc1:11211:100", "mc2:11212:50"}, "channel": "daily", "concurrency": 7,
		"output_tz": "America/New_York",
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s: %#v, want %#v (from the cached configuration)", k, got[k], w)
		}
	}
	if want := filepath.Join(dir, "bootstrap", "cache", "config.php"); cfg.CachedConfig() != want {
		t.Errorf("CachedConfig() = %q, want %q", cfg.CachedConfig(), want)
	}
	if v, err := parsePHPExport(string(out)); err != nil {
		t.Fatal(err)
	} else if pw, _ := v.(*phpArray).get("database", "connections", "mysql", "password"); pw != "p'w\\d\n" {
		t.Errorf("a string with a quote, a backslash and a line break: %q", pw)
	}
}

// cachedApp writes an application directory with the cached configuration cached and a .env file of
// dotenv, and returns the .env file's path.
func cachedApp(t *testing.T, cached []byte, dotenv string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bootstrap", "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bootstrap", "cache", "config.php"), cached, 0o644); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	return env
}

// TestConfigCacheConnections loads cached configurations (written by PHP's var_export) whose queue
// connection, failed jobs, batches or cache store sit on other database connections: the worker
// refuses those it cannot follow, naming them, and takes the others.
func TestConfigCacheConnections(t *testing.T) {
	t.Parallel()
	const base = `
$db = ['driver' => 'mysql', 'host' => 'db', 'port' => '3306', 'database' => 'app', 'username' => 'u', 'password' => '', 'unix_socket' => '', 'prefix' => '',
  'options' => array_filter([PDO::MYSQL_ATTR_SSL_CA => 'certs/ca.pem'])];
$config = [
  'database' => ['default' => 'mysql', 'connections' => [
    'mysql' => $db,
    'same' => $db,
    'queue_db' => array_merge($db, ['database' => 'queues']),
    'pg' => ['driver' => 'pgsql', 'host' => 'pg', 'port' => 5432, 'database' => 'app', 'username' => 'u', 'password' => '', 'schema' => ['app', 'public']],
    'split' => array_merge($db, ['read' => ['host' => ['replica1', 'replica2']], 'write' => ['host' => ['primary1', 'primary2'], 'username' => 'writer'], 'host' => null]),
  ]],
  'queue' => ['default' => 'database', 'connections' => [
    'database' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90, 'connection' => null],
    'jobsdb' => ['driver' => 'database', 'table' => 'queue_jobs', 'queue' => 'emails', 'retry_after' => 45, 'connection' => 'queue_db'],
    'alike' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90, 'connection' => 'same'],
    'pgq' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90, 'connection' => 'pg'],
    'splitq' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90, 'connection' => 'split'],
    'lost' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90, 'connection' => 'nosuchdb'],
    'main' => ['driver' => 'redis', 'connection' => 'default', 'queue' => 'default', 'retry_after' => 90],
  ], 'failed' => ['driver' => 'database-uuids', 'database' => 'mysql', 'table' => 'failed_jobs'],
     'batching' => ['database' => 'mysql', 'table' => 'job_batches']],
  'cache' => ['default' => 'file', 'stores' => ['database' => ['driver' => 'database', 'table' => 'cache', 'connection' => null]]],
];
$input = json_decode(stream_get_contents(STDIN), true);
$config['queue']['default'] = $input['connection'];
foreach ($input['set'] as $path => $value) {
  data_set($config, $path, $value);
}
echo '<?php return '.var_export($config, true).';'.PHP_EOL;
`
	tests := []struct {
		name       string
		connection string
		set        map[string]any
		wantErr    []string // Load's error, or CheckWorkable's when workable is false
		workable   bool
		check      func(t *testing.T, c *Config)
	}{
		{name: "all on one connection", connection: "database", workable: true,
			check: func(t *testing.T, c *Config) {
				if !filepath.IsAbs(c.DB.SSLCA) || !strings.HasSuffix(c.DB.SSLCA, filepath.Join("certs", "ca.pem")) {
					t.Errorf("db.ssl_ca %q, want PDO::MYSQL_ATTR_SSL_CA's certs/ca.pem beside the .env file", c.DB.SSLCA)
				}
				// The operations commands read each connection's driver from the cached configuration:
				// a skeleton name it does not have is not configured.
				for name, want := range map[string]string{"database": "database", "main": "redis", "jobsdb": "database", "sync": "", "nope": ""} {
					if d, known := c.QueueDriver(name); d != want || known != (want != "") {
						t.Errorf("QueueDriver(%q) = %q, %v; want %q", name, d, known, want)
					}
				}
			}},
		{name: "failed jobs on another database", connection: "jobsdb",
			wantErr: []string{"queue.failed.database", "[mysql]", "[queue_db]", "config:cache"}},
		{name: "failed jobs not in a database", connection: "jobsdb", workable: true,
			set: map[string]any{"queue.failed.driver": "null", "queue.batching.database": "queue_db"}},
		{name: "batches on another database", connection: "jobsdb",
			set: map[string]any{"queue.failed.database": "queue_db"}, wantErr: []string{"queue.batching.database", "[mysql]"}},
		{name: "database cache store on the default connection", connection: "jobsdb",
			set:     map[string]any{"queue.failed.database": "queue_db", "queue.batching.database": "queue_db", "cache.default": "database"},
			wantErr: []string{"cache.stores.database.connection", "[mysql]", "[queue_db]"}},
		{name: "a connection configured alike", connection: "alike", workable: true,
			set: map[string]any{"queue.failed.database": "same", "cache.default": "database"}},
		{name: "the mariadb connection of the same server", connection: "alike", workable: true,
			set: map[string]any{"database.connections.same.driver": "mariadb", "cache.default": "database"}},
		{name: "a read/write split connection", connection: "splitq", workable: true,
			set: map[string]any{"queue.failed.database": "split", "queue.batching.database": "split"},
			check: func(t *testing.T, c *Config) {
				if c.DB.Host != "primary1" || c.DB.Username != "writer" || c.DB.Database != "app" {
					t.Errorf("host %q user %q database %q, want the write connection's primary1, writer, app", c.DB.Host, c.DB.Username, c.DB.Database)
				}
			}},
		{name: "an undefined database connection", connection: "lost",
			wantErr: []string{"[nosuchdb]", "Database connection [nosuchdb] not configured."}},
		{name: "a default connection of another driver", connection: "main",
			wantErr: []string{"[main]", "redis driver", "not the database driver"}},
		{name: "a null default connection (QUEUE_CONNECTION=null when cached)", connection: "database", set: map[string]any{"queue.default": nil},
			wantErr: []string{"[null]", "null driver"}},
		{name: "schemas as a list", connection: "pgq", workable: true,
			set: map[string]any{"queue.failed.database": "pg", "queue.batching.database": "pg"},
			check: func(t *testing.T, c *Config) {
				if c.DB.Schema != "app,public" {
					t.Errorf("db.schema %q, want app,public", c.DB.Schema)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set := tt.set
			if set == nil {
				set = map[string]any{}
			}
			out, ok := runPHP(t, base, map[string]any{"connection": tt.connection, "set": set})
			if !ok {
				return
			}
			cfg, err := Load(LoadParams{EnvFile: cachedApp(t, out, "APP_NAME=x\n")})
			if err == nil {
				if err = cfg.Validate(); err != nil {
					t.Fatalf("Validate: %v", err)
				}
				err = cfg.CheckWorkable()
			}
			if tt.workable {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tt.check != nil {
					tt.check(t, cfg)
				}
				return
			}
			if err == nil {
				t.Fatalf("taken, want an error with %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
