package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// leastPrivilegeApp creates the queue tables in db and a user that may select, insert and update the
// jobs table but not delete from it, and returns a .env that connects as that user. With sequences
// false (PostgreSQL), the user may also delete but not take ids from the tables' sequences.
func leastPrivilegeApp(t *testing.T, db testenv.Database, sequences bool) string {
	t.Helper()
	ctx := context.Background()
	admin, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.Dialect(db.Dialect), DSN: db.DSN})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := laravel.CreateSchema(ctx, admin, laravel.SchemaParams{}); err != nil {
		t.Fatal(err)
	}
	user := testenv.Name("lp")
	var grants, drop []string
	switch db.Dialect {
	case "mysql":
		grants = []string{
			"create user '" + user + "'@'%' identified by 'pw'",
			"grant select, insert, update on `" + db.Name + "`.`jobs` to '" + user + "'@'%'",
			"grant select, insert on `" + db.Name + "`.`failed_jobs` to '" + user + "'@'%'",
		}
		drop = []string{"drop user if exists '" + user + "'@'%'"}
	case "pgsql":
		grants = []string{
			"create role " + user + " login password 'pw'",
			"grant usage on schema " + db.Schema + " to " + user,
			"grant select, insert, update on " + db.Schema + ".jobs to " + user,
			"grant select, insert on " + db.Schema + ".failed_jobs to " + user,
			"grant usage on all sequences in schema " + db.Schema + " to " + user,
		}
		if !sequences {
			grants[2] = "grant select, insert, update, delete on " + db.Schema + ".jobs to " + user
			grants = grants[:4]
		}
		drop = []string{"drop owned by " + user, "drop role if exists " + user}
	}
	sqlDB := db.Open(t)
	t.Cleanup(func() {
		for _, q := range drop {
			_, _ = sqlDB.Exec(q)
		}
	})
	for _, q := range grants {
		if _, err := sqlDB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	lines := []string{"DB_CONNECTION=" + db.Dialect, "DB_HOST=" + db.Host, "DB_PORT=" + strconv.Itoa(db.Port),
		"DB_DATABASE=" + db.Name, "DB_USERNAME=" + user, "DB_PASSWORD=pw", "CACHE_DRIVER=array"}
	if db.Schema != "" {
		lines = append(lines, "DB_SCHEMA="+db.Schema)
	}
	env := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(env, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return env
}

// TestMissingGrant: a worker whose user may not delete jobs stops at start naming the grant, instead
// of running every job and completing none; queue:doctor reports it.
func TestMissingGrant(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		make func(testing.TB) testenv.Database
	}{{"mysql", testenv.MySQL}, {"pgsql", testenv.Postgres}} {
		t.Run(d.name, func(t *testing.T) {
			db := d.make(t)
			env := leastPrivilegeApp(t, db, true)
			ctx := context.Background()
			var out, errb bytes.Buffer
			code := Do(ctx, []string{"queue:work", "--env-file", env, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
			if code != 1 || !strings.Contains(errb.String(), "lacks DELETE on jobs") {
				t.Fatalf("queue:work: status %d, want 1 naming DELETE on jobs:\n%s", code, errb.String())
			}
			// The fix names the account the server matched: 'user'@'%' on MariaDB, the role on PostgreSQL.
			if grantee := map[string]string{"mysql": `'@'%'`, "pgsql": `"`}[d.name]; !strings.Contains(errb.String(), "TO ") ||
				strings.Contains(errb.String(), "<the worker's user>") || !strings.Contains(errb.String()[strings.Index(errb.String(), "TO "):], grantee) {
				t.Fatalf("queue:work: the GRANT names no user:\n%s", errb.String())
			}
			out.Reset()
			errb.Reset()
			code = Do(ctx, []string{"queue:doctor", "--env-file", env}, nil, &out, &errb)
			if code != 1 || !strings.Contains(out.String(), "[missing-grant] the database user lacks DELETE on jobs: jobs would run but never complete") {
				t.Fatalf("queue:doctor: status %d, want 1 with a missing-grant finding:\n%s%s", code, out.String(), errb.String())
			}
			// The operations commands name the grant a refused statement needs (here DELETE on
			// failed_jobs, which the worker does not need).
			failed := "failed_jobs"
			if db.Schema != "" {
				failed = db.Schema + "." + failed
			}
			if _, err := db.Open(t).Exec("insert into " + failed + " (uuid, connection, queue, payload, exception, failed_at) values ('u-1', 'database', 'default', '{}', 'E', '2026-01-01 00:00:00')"); err != nil {
				t.Fatal(err)
			}
			out.Reset()
			errb.Reset()
			code = Do(ctx, []string{"queue:flush", "--env-file", env}, nil, &out, &errb)
			if code != 1 || !strings.Contains(errb.String(), "run: GRANT ") || !strings.Contains(errb.String(), "DELETE ON "+failed+" TO ") {
				t.Fatalf("queue:flush: status %d, want 1 with the GRANT of DELETE on failed_jobs:\n%s%s", code, out.String(), errb.String())
			}
		})
	}
}

// TestMissingSequenceGrant: on PostgreSQL a user that may insert into jobs and failed_jobs but not
// take ids from their sequences would run jobs whose releases and failures the server refuses: the
// worker stops at start naming both sequences.
func TestMissingSequenceGrant(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	env := leastPrivilegeApp(t, db, false)
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	for _, want := range []string{"USAGE on SEQUENCE " + db.Schema + ".jobs_id_seq", "USAGE on SEQUENCE " + db.Schema + ".failed_jobs_id_seq", "GRANT USAGE ON SEQUENCE " + db.Schema + ".jobs_id_seq TO"} {
		if code != 1 || !strings.Contains(errb.String(), want) {
			t.Fatalf("queue:work: status %d, want 1 with %q:\n%s", code, want, errb.String())
		}
	}
}

// TestMissingFailedTable: a missing failed_jobs table stops the worker at start with the command that
// creates it, not at the first failure.
func TestMissingFailedTable(t *testing.T) {
	t.Parallel()
	conn, env := newSQLiteApp(t, "welcome")
	if _, err := queuetest.DB(conn).Exec("drop table failed_jobs"); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "php artisan queue:failed-table") {
		t.Fatalf("status %d, want 1 naming queue:failed-table:\n%s", code, errb.String())
	}
}

// TestSchemaWithoutUsage: on PostgreSQL a user with every grant on the tables but no USAGE on the
// schema DB_SCHEMA names sees no table there (PostgreSQL leaves the schema out of its search_path): the
// worker stops at start naming the grant, not a migration.
func TestSchemaWithoutUsage(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	env := leastPrivilegeApp(t, db, true)
	b, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "DB_USERNAME="); ok {
			user = v
		}
	}
	if _, err := db.Open(t).Exec("revoke usage on schema " + db.Schema + " from " + user); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "--env-file", env, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if want := "GRANT USAGE ON SCHEMA " + db.Schema + " TO "; code != 1 || !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), "queue:table") {
		t.Fatalf("queue:work: status %d, want 1 with %q and no migration:\n%s", code, want, errb.String())
	}
}
