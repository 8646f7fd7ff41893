package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestQueueWorkUnknownConnection: queue:work refuses a connection the application does not have with
// Laravel's message, instead of working the default queue under that name.
func TestQueueWorkUnknownConnection(t *testing.T) {
	t.Parallel()
	_, env := newSQLiteApp(t, "welcome")
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "nope", "--env-file", env, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "The [nope] queue connection has not been configured.") {
		t.Fatalf("status %d, want 1 with Laravel's message:\n%s", code, errb.String())
	}
}

// TestQueueWorkTooManyArguments: a second positional argument is refused with Symfony's message, as
// PHP's queue:work refuses it, not taken as the connection.
func TestQueueWorkTooManyArguments(t *testing.T) {
	t.Parallel()
	_, env := newSQLiteApp(t, "welcome")
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "database", "extra", "--env-file", env, "--stop-when-empty"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), `Too many arguments to "queue:work" command, expected arguments "connection".`) {
		t.Fatalf("status %d, want 1 with Symfony's message:\n%s", code, errb.String())
	}
}

// TestQueueWorkSkeletonConnection: queue:work refuses a connection of Laravel's skeleton that is not a
// database one (a PHP supervisor's queue:work redis), naming its driver, and leaves the jobs alone;
// queue:failed takes the same .env.
func TestQueueWorkSkeletonConnection(t *testing.T) {
	t.Parallel()
	_, env := newSQLiteApp(t, "welcome")
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "redis", "--env-file", env, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "the [redis] queue connection is Laravel's redis driver") || strings.Contains(errb.String(), "Processed") {
		t.Fatalf("status %d, want 1 naming the redis driver:\n%s", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := Do(context.Background(), []string{"queue:failed", "--env-file", env}, nil, &out, &errb); code != 0 {
		t.Fatalf("queue:failed: status %d\n%s", code, errb.String())
	}
}

// TestMissingSQLiteFile: a DB_DATABASE that names no file stops queue:work and the operations commands
// (queue:doctor too) naming the path, as Laravel's SQLite connector does, and creates nothing there.
func TestMissingSQLiteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "missing.sqlite")
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("DB_CONNECTION=sqlite\nDB_DATABASE="+path+"\nQUEUE_CONNECTION=database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"queue:work", "--stop-when-empty"}, {"queue:failed"}, {"queue:doctor"}} {
		var out, errb bytes.Buffer
		code := Do(context.Background(), append(args, "--env-file", env), nil, &out, &errb)
		if code == 0 || !strings.Contains(out.String()+errb.String(), "SQLite database file \""+path+"\"") {
			t.Errorf("%s: status %d, want a failure naming the missing file:\n%s%s", args[0], code, out.String(), errb.String())
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("%s created %s (%v)", args[0], path, err)
		}
	}
}

// TestMissingSchema: on PostgreSQL a DB_SCHEMA naming no schema hides every table; the message names
// DB_SCHEMA beside the migration that creates the table.
func TestMissingSchema(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	env := filepath.Join(t.TempDir(), ".env")
	lines := fmt.Sprintf("DB_CONNECTION=pgsql\nDB_HOST=%s\nDB_PORT=%d\nDB_DATABASE=%s\nDB_USERNAME=%s\nDB_SCHEMA=no_such_schema\nCACHE_DRIVER=array\n", db.Host, db.Port, db.Name, db.User)
	if err := os.WriteFile(env, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--stop-when-empty"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "check DB_SCHEMA (no_such_schema)") {
		t.Fatalf("status %d, want 1 naming DB_SCHEMA:\n%s", code, errb.String())
	}
}

// TestOptionWithoutValue: an option written without its value before another option takes the empty
// value, as Symfony's parser gives it, instead of the next option as its value: queue:work --name
// --env-file F reads F.
func TestOptionWithoutValue(t *testing.T) {
	t.Parallel()
	_, env := newSQLiteApp(t)
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"queue:work", "--name", "--env-file", env, "--stop-when-empty"}, nil, &out, &errb); code != 0 {
		t.Fatalf("queue:work --name --env-file: status %d\n%s", code, errb.String())
	}
	args := emptyValues(flagSetWith("queue", "range"), []string{"--queue", "--range=1-2", "--range", "3-4", "--queue"})
	if strings.Join(args, " ") != "--queue= --range=1-2 --range 3-4 --queue=" {
		t.Fatalf("emptyValues = %q", args)
	}
}

func flagSetWith(names ...string) *flag.FlagSet {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	for _, n := range names {
		fs.String(n, "", "")
	}
	return fs
}

// TestTimeoutWarningOnce: a --timeout not shorter than retry_after is warned about once at start.
func TestTimeoutWarningOnce(t *testing.T) {
	t.Parallel()
	_, env := newSQLiteApp(t)
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--stop-when-empty", "--timeout=90", "--retry-after=90"}, nil, &out, &errb); code != 0 {
		t.Fatalf("status %d\n%s", code, errb.String())
	}
	if n := strings.Count(errb.String(), "not shorter than retry_after"); n != 1 {
		t.Fatalf("%d warnings about the timeout, want 1:\n%s", n, errb.String())
	}
}

// TestConnectErrorNamesCachedConfig: when the database settings came from the cached configuration,
// a connection that fails says so, since the .env file the user edits is not what was read.
func TestConnectErrorNamesCachedConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(dir, "bootstrap", "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	cached := `<?php return array (
  'database' => array ('default' => 'pgsql', 'connections' => array (
    'pgsql' => array ('driver' => 'pgsql', 'host' => '127.0.0.1', 'port' => 1, 'database' => 'app', 'username' => 'u', 'password' => ''),
  )),
  'queue' => array ('default' => 'database', 'connections' => array (
    'database' => array ('driver' => 'database', 'table' => 'jobs', 'queue' => 'default', 'retry_after' => 90),
  )),
);
`
	if err := os.WriteFile(filepath.Join(cache, "config.php"), []byte(cached), 0o644); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("DB_CONNECTION=sqlite\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--stop-when-empty"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "127.0.0.1:1/app") || !strings.Contains(errb.String(), "read from the cached configuration "+filepath.Join(cache, "config.php")) {
		t.Fatalf("status %d, want 1 naming the server and the cached configuration:\n%s", code, errb.String())
	}
}
