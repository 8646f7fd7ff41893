package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// TestDoctorAndMigrateCommands runs queue:doctor and queue:migrate-index on a Laravel 5.4 table on
// each dialect, configured by a Laravel .env file: the doctor fails, a dry run changes nothing, the
// migration makes the doctor pass, a second migration has nothing to do.
func TestDoctorAndMigrateCommands(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.Dialect(db.Dialect), DSN: db.DSN})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{LegacyJobsIndex: true}); err != nil {
			t.Fatal(err)
		}
		env := filepath.Join(t.TempDir(), ".env")
		if err := os.WriteFile(env, []byte(strings.Join(append(db.Env(), "QUEUE_CONNECTION=database", "CACHE_DRIVER=database"), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run := func(args ...string) (int, string) {
			var out, errOut bytes.Buffer
			status := Do(ctx, append(args, "--env-file", env), nil, &out, &errOut)
			return status, out.String() + errOut.String()
		}
		if status, out := run("queue:doctor"); status != 1 || !strings.Contains(out, "legacy-index") || !strings.Contains(out, "fix: artisan-go queue:migrate-index") {
			t.Fatalf("doctor on a 5.4 table: status %d\n%s", status, out)
		}
		status, out := run("queue:migrate-index", "--dry-run")
		if status != 0 || strings.Count(out, "-- dry run") != 2 {
			t.Fatalf("dry run: status %d\n%s", status, out)
		}
		if status, _ := run("queue:doctor"); status != 1 {
			t.Fatalf("the dry run fixed the table")
		}
		if status, out := run("queue:migrate-index"); status != 0 || strings.Count(out, ";\n") != 2 {
			t.Fatalf("migrate: status %d\n%s", status, out)
		}
		if status, out := run("queue:doctor"); status != 0 {
			t.Fatalf("doctor after the migration: status %d\n%s", status, out)
		}
		if status, out := run("queue:migrate-index"); status != 0 || !strings.Contains(out, "nothing to do") {
			t.Fatalf("second migration: status %d\n%s", status, out)
		}
		if status, out := run("queue:doctor", "--timeout", "120"); status != 1 || !strings.Contains(out, "retry-after") {
			t.Fatalf("doctor with a timeout above retry_after: status %d\n%s", status, out)
		}
	})
}

// TestDoctorChecksCacheStore reports a cache store queue:work cannot open (an error, with the setting
// named) and one it does not read (a warning), notes the array store each process keeps for itself;
// a store it opens adds nothing.
func TestDoctorChecksCacheStore(t *testing.T) {
	t.Parallel()
	_, env := newSQLiteApp(t, "welcome")
	for i, tc := range []struct {
		env    string
		status int
		want   string
	}{
		{"CACHE_DRIVER=file\nARTISAN_GO_CACHE_FILE_PATH=" + filepath.Join(t.TempDir(), "no", "such", "data"), 1, "ERROR [cache-store] cache.store file:"},
		{"CACHE_DRIVER=dynamodb", 1, "WARNING [cache-store-unread]"},
		{"CACHE_DRIVER=array", 0, "NOTE [cache-store-in-process]"},
		{"CACHE_DRIVER=file\nARTISAN_GO_CACHE_FILE_PATH=" + t.TempDir(), 0, "ok: nothing to fix"},
		{fmt.Sprintf("CACHE_DRIVER=memcached\nARTISAN_GO_CACHE_MEMCACHED_SERVERS=127.0.0.1:%d:100,127.0.0.1:%d:100", testenv.StartMemcached(t), testenv.FreePort(t)), 1, "WARNING [cache-server-down] memcached at 127.0.0.1:"},
		{"CACHE_DRIVER=memcached\nARTISAN_GO_CACHE_MEMCACHED_SERVERS=127.0.0.1:" + strconv.Itoa(testenv.FreePort(t)), 1, "ERROR [cache-store] cache.store memcached:"},
	} {
		file := envWith(t, env, "doctor-"+strconv.Itoa(i)+".env", tc.env)
		var out, errb bytes.Buffer
		status := Do(context.Background(), []string{"queue:doctor", "--env-file", file}, nil, &out, &errb)
		if status != tc.status || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%q: status %d, want %d with %q:\n%s%s", tc.env, status, tc.status, tc.want, out.String(), errb.String())
		}
	}
}

// TestDoctorChecksCacheTable: with the database cache store and no cache table, queue:doctor reports
// what queue:work refuses to start on.
func TestDoctorChecksCacheTable(t *testing.T) {
	t.Parallel()
	db := testenv.SQLite(t)
	ctx := context.Background()
	conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.Dialect(db.Dialect), DSN: db.DSN})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{SkipCache: true}); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(env, []byte(strings.Join(append(db.Env(), "QUEUE_CONNECTION=database", "CACHE_DRIVER=database"), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	status := Do(ctx, []string{"queue:doctor", "--env-file", env}, nil, &out, &errb)
	if status != 1 || !strings.Contains(out.String(), `[missing-table] the table "cache" does not exist`) || !strings.Contains(out.String(), "php artisan cache:table") {
		t.Fatalf("status %d, want 1 with the cache table missing:\n%s%s", status, out.String(), errb.String())
	}
}
