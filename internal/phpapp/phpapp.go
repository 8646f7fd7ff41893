// Package phpapp runs the real Laravel 8.83 application in testdata/laravel against a test database,
// so that tests can check artisan-go against PHP itself: PHP dispatches jobs that Go runs, Go fails jobs
// that PHP lists and retries, PHP and Go workers share one jobs table.
//
// Every App gets its own storage directory, APP_KEY and cache prefix, and the tables a Laravel
// project creates with its own migrations (jobs, failed_jobs, job_batches, cache, cache_locks), plus
// users and interop_log. Every job the application runs records what PHP saw in interop_log, which
// Log reads back.
package phpapp

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// PHPEnv names the environment variable that selects the php binary; by default php is looked up in
// PATH.
const PHPEnv = "ARTISAN_GO_PHP"

// LaravelVersion is the framework version the application is written for.
const LaravelVersion = "8.83"

// MissingMessage is what a test reports when PHP or Laravel cannot be used.
const MissingMessage = "PHP with Laravel 8.83 is not installed: apt-get install php-cli php-mysql php-pgsql php-sqlite3 php-laravel-framework (or run .ci/services)"

// ErrArtisan is wrapped by every error from a failed artisan command.
var ErrArtisan = errors.New("php artisan failed")

// App is one Laravel application bound to one test database.
type App struct {
	t       testing.TB
	db      testenv.Database
	php     string
	base    string // testdata/laravel
	storage string
	envFile string
	env     []string

	openOnce sync.Once
	sqlDB    *sql.DB
	openErr  error
}

// Option changes how New prepares the application.
type Option func(*settings)

type settings struct {
	env       []string
	edit      map[string]func(string) string
	noSchema  bool
	redis     bool
	file      bool
	memcached bool
}

// WithEnv sets extra environment variables ("KEY=value"), which override the defaults New chooses.
func WithEnv(kv ...string) Option {
	return func(s *settings) { s.env = append(s.env, kv...) }
}

// WithRedisCache makes Redis (REDIS_HOST, default 127.0.0.1:6379) the default cache store, so unique
// job locks and the restart signal live there. The test is skipped (or fails under
// ARTISAN_GO_REQUIRE_ALL) when no Redis server answers.
func WithRedisCache() Option {
	return func(s *settings) { s.redis = true }
}

// WithFileCache makes the file store (storage/framework/cache/data, as every skeleton has it) the
// default cache store, and names its directory to artisan-go in the .env file, since the app's storage
// is not beside its .env file here.
func WithFileCache() Option {
	return func(s *settings) { s.file = true }
}

// requireCacheServer skips the test (or fails it under ARTISAN_GO_REQUIRE_ALL) unless PHP loads the
// extension ext and a server answers at the app's <env>_HOST and <env>_PORT.
func requireCacheServer(t testing.TB, p probe, ext, name, env, port, pkg string) {
	t.Helper()
	if !p.modules[ext] {
		testenv.Missing(t, "the PHP extension %s is not loaded: apt-get install php-%s", ext, ext)
	}
	addr := net.JoinHostPort(envOr(env+"_HOST", "127.0.0.1"), envOr(env+"_PORT", port))
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		testenv.Missing(t, "%s is not reachable at %s (%v): apt-get install %s (or run .ci/services)", name, addr, err, pkg)
	}
	c.Close()
}

// WithMemcachedCache makes memcached (MEMCACHED_HOST, default 127.0.0.1:11211) the default cache
// store; the app's own cache prefix keeps its keys apart from other tests'. The test is skipped (or
// fails under ARTISAN_GO_REQUIRE_ALL) when PHP's memcached extension or the server is missing.
func WithMemcachedCache() Option {
	return func(s *settings) { s.memcached = true }
}

// WithConfigFiles runs the test on a copy of the application whose config files (by name, such as
// "cache.php") are what edit makes of them, with its .env file beside them, where artisan-go reads the
// config files from as it does in an application of its own. PHP reads the same files.
func WithConfigFiles(edit map[string]func(string) string) Option {
	return func(s *settings) { s.edit = edit }
}

// WithoutSchema leaves the database empty instead of running interop:schema.
func WithoutSchema() Option {
	return func(s *settings) { s.noSchema = true }
}

type probe struct {
	php     string
	version string
	modules map[string]bool
	err     error
}

var (
	probeOnce   sync.Once
	probeResult probe
)

// find locates php and checks that it loads Laravel 8.83; the answer is shared by every test.
func find() probe {
	probeOnce.Do(func() {
		php := os.Getenv(PHPEnv)
		if php == "" {
			p, err := exec.LookPath("php")
			if err != nil {
				probeResult.err = errors.New("php is not in PATH")
				return
			}
			php = p
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		script := `foreach (get_loaded_extensions() as $e) echo strtolower($e), "\n";` +
			`$f = is_file($a = '` + appDir() + `/vendor/autoload.php') ? $a : stream_resolve_include_path('Illuminate/autoload.php');` +
			`if (! $f) exit(3); require $f; echo 'laravel=', Illuminate\Foundation\Application::VERSION, "\n";`
		out, err := exec.CommandContext(ctx, php, "-r", script).Output()
		if err != nil {
			probeResult.err = fmt.Errorf("%s cannot load Laravel: %v", php, err)
			return
		}
		probeResult.php = php
		probeResult.modules = map[string]bool{}
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "laravel="); ok {
				probeResult.version = v
			} else if line != "" {
				probeResult.modules[line] = true
			}
		}
		if !strings.HasPrefix(probeResult.version, LaravelVersion+".") {
			probeResult.err = fmt.Errorf("found Laravel %q, want %s.x", probeResult.version, LaravelVersion)
		}
	})
	return probeResult
}

// appDir returns the absolute path of testdata/laravel: next to this source file, or (when the test
// binary was built with -trimpath) above the working directory, which go test sets to the package.
func appDir() string {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			app := filepath.Join(dir, "testdata", "laravel")
			if _, err := os.Stat(filepath.Join(app, "artisan")); err == nil {
				return app
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return filepath.Join("testdata", "laravel")
}

var pdoDriver = map[string]string{"mysql": "pdo_mysql", "mariadb": "pdo_mysql", "pgsql": "pdo_pgsql", "sqlite": "pdo_sqlite"}

// New prepares the application for db: a storage directory under t.TempDir(), an environment (and
// the same settings as a Laravel .env file), and Laravel's tables. It skips the test, naming what to
// install, when PHP or Laravel 8.83 is missing.
func New(t testing.TB, db testenv.Database, opts ...Option) *App {
	t.Helper()
	var s settings
	for _, o := range opts {
		o(&s)
	}
	p := find()
	if p.err != nil {
		testenv.Missing(t, "%s (%v)", MissingMessage, p.err)
	}
	if ext := pdoDriver[db.Dialect]; !p.modules[ext] {
		testenv.Missing(t, "%s (the PHP extension %s is not loaded)", MissingMessage, ext)
	}
	if s.memcached {
		requireCacheServer(t, p, "memcached", "memcached", "MEMCACHED", "11211", "memcached")
	}
	if s.redis {
		requireCacheServer(t, p, "redis", "Redis", "REDIS", "6379", "redis-server")
	}

	dir := t.TempDir()
	a := &App{t: t, db: db, php: p.php, base: appDir(), storage: filepath.Join(dir, "storage")}
	a.envFile = filepath.Join(a.storage, ".env")
	a.env = a.defaultEnv(s)
	// The skeleton's storage directories: storage/framework/cache/data is the file cache store's.
	if err := os.MkdirAll(a.FileCachePath(), 0o755); err != nil {
		t.Fatalf("phpapp: %v", err)
	}
	if s.edit != nil {
		if err := a.copyApp(filepath.Join(dir, "app"), s.edit); err != nil {
			t.Fatalf("phpapp: %v", err)
		}
	}
	if err := os.WriteFile(a.envFile, []byte(dotenv(a.env)), 0o644); err != nil {
		t.Fatalf("phpapp: write .env: %v", err)
	}
	t.Cleanup(func() {
		if a.sqlDB != nil {
			a.sqlDB.Close()
		}
		if t.Failed() {
			if b, err := os.ReadFile(a.LaravelLog()); err == nil && len(b) > 0 {
				t.Logf("phpapp: %s:\n%s", a.LaravelLog(), tail(b, 8000))
			}
		}
	})
	if !s.noSchema {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := a.Artisan(ctx, "interop:schema"); err != nil {
			t.Fatalf("phpapp: create tables: %v", err)
		}
	}
	return a
}

// copyApp copies the application to dir, edits its config files and moves the .env file there.
func (a *App) copyApp(dir string, edit map[string]func(string) string) error {
	if err := os.CopyFS(dir, os.DirFS(a.base)); err != nil {
		return fmt.Errorf("copy the application: %w", err)
	}
	for name, f := range edit {
		path := filepath.Join(dir, "config", name)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(f(string(b))), 0o644); err != nil {
			return err
		}
	}
	a.base, a.envFile = dir, filepath.Join(dir, ".env")
	return nil
}

func (a *App) defaultEnv(s settings) []string {
	env := []string{
		"APP_NAME=Laravel",
		"APP_ENV=testing",
		"APP_DEBUG=false",
		"APP_KEY=base64:" + randomKey(),
		"APP_TIMEZONE=UTC",
		"APP_STORAGE=" + a.storage,
		"QUEUE_CONNECTION=database",
		"CACHE_DRIVER=database",
		"CACHE_PREFIX=" + testenv.Name("cache"),
		"MAIL_MAILER=array",
		"LOG_CHANNEL=single",
	}
	if s.redis {
		// A prefix of its own keeps the keys that have no cache prefix (the Redis facade's) apart
		// from other tests'.
		env = append(env, "CACHE_DRIVER=redis", "REDIS_PREFIX="+testenv.Name("redis")+"_")
	}
	if s.file {
		env = append(env, "CACHE_DRIVER=file", "ARTISAN_GO_CACHE_FILE_PATH="+a.FileCachePath())
	}
	if s.memcached {
		env = append(env, "CACHE_DRIVER=memcached")
	}
	env = append(env, a.db.Env()...)
	env = append(env, s.env...)
	return dedupe(env)
}

// dedupe keeps the last value of each variable, in the order of first appearance.
func dedupe(env []string) []string {
	idx := map[string]int{}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

var bareValue = regexp.MustCompile(`^[A-Za-z0-9_./:+=@,-]*$`)

// dotenv renders variables in the .env syntax Laravel (vlucas/phpdotenv) reads.
func dotenv(env []string) string {
	var b strings.Builder
	b.WriteString("# Written by internal/phpapp: the settings of one test's Laravel application.\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !bareValue.MatchString(v) {
			v = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "\n", `\n`).Replace(v) + `"`
		}
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	return b.String()
}

func randomKey() string {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(k[:])
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Env returns the application's settings as "KEY=value" strings: the database (DB_*), APP_KEY,
// QUEUE_CONNECTION, CACHE_DRIVER, CACHE_PREFIX and the rest. A Go worker given these (or EnvFile)
// talks to the same tables with the same key.
func (a *App) Env() []string { return append([]string(nil), a.env...) }

// Getenv returns one of the application's settings, or "" when it is not set.
func (a *App) Getenv(key string) string {
	for _, kv := range a.env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v
		}
	}
	return ""
}

// EnvFile returns the path of the Laravel .env file holding the same settings as Env, for
// `artisan-go --env-file`.
func (a *App) EnvFile() string { return a.envFile }

// PHP returns the path of the php binary the application runs with.
func (a *App) PHP() string { return a.php }

// Dir returns the directory of the Laravel application (testdata/laravel).
func (a *App) Dir() string { return a.base }

// StoragePath returns the application's storage directory, private to this App.
func (a *App) StoragePath() string { return a.storage }

// FileCachePath returns the directory of the application's file cache store.
func (a *App) FileCachePath() string { return filepath.Join(a.storage, "framework", "cache", "data") }

// LaravelLog returns the path of Laravel's log file, where exceptions from jobs are reported.
func (a *App) LaravelLog() string { return filepath.Join(a.storage, "logs", "laravel.log") }

// Database returns the test database the application uses.
func (a *App) Database() testenv.Database { return a.db }

func (a *App) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, a.php, append([]string{filepath.Join(a.base, "artisan")}, args...)...)
	cmd.Dir = a.base
	cmd.Env = append(os.Environ(), a.env...)
	return cmd
}

// Artisan runs `php artisan args...` to completion and returns its standard output. A non-zero exit
// is an error wrapping ErrArtisan that includes the standard error and output.
func (a *App) Artisan(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := a.command(ctx, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &ArtisanError{Args: args, Err: err, Stdout: stdout.String(), Stderr: stderr.String()}
	}
	return stdout.String(), nil
}

// MustArtisan is Artisan that fails the test when the command fails.
func (a *App) MustArtisan(ctx context.Context, args ...string) string {
	a.t.Helper()
	out, err := a.Artisan(ctx, args...)
	if err != nil {
		a.t.Fatalf("phpapp: %v", err)
	}
	return out
}

// Work runs PHP's worker until the queue is empty (`queue:work database --stop-when-empty args...`) and
// returns what it printed.
func (a *App) Work(ctx context.Context, args ...string) (string, error) {
	return a.Artisan(ctx, append([]string{"queue:work", "database", "--stop-when-empty"}, args...)...)
}

// ArtisanError describes a failed artisan command.
type ArtisanError struct {
	Args           []string
	Err            error
	Stdout, Stderr string
}

// Error includes the command, how it ended and what it printed.
func (e *ArtisanError) Error() string {
	return fmt.Sprintf("php artisan %s: %v\nstderr: %s\nstdout: %s", strings.Join(e.Args, " "), e.Err,
		strings.TrimSpace(e.Stderr), strings.TrimSpace(string(tail([]byte(e.Stdout), 4000))))
}

// Unwrap returns ErrArtisan and the process error.
func (e *ArtisanError) Unwrap() []error { return []error{ErrArtisan, e.Err} }
