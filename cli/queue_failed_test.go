package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestFailedJobsWithoutUUID: a failed_jobs table made before Laravel 8 (no uuid column) under the
// database-uuids driver, Laravel 8's default: the commands that find a job by id, and queue:failed
// (whose rows would have no id; PHP's stops on the missing uuid), stop naming the mismatch and its fix
// instead of a raw SQL error, queue:doctor warns, and with the database driver
// the same job is forgotten by its numeric id.
func TestFailedJobsWithoutUUID(t *testing.T) {
	t.Parallel()
	conn, env := newSQLiteApp(t)
	db := queuetest.DB(conn)
	for _, q := range []string{
		"drop table failed_jobs",
		"create table failed_jobs (id integer primary key autoincrement, connection text not null, queue text not null, payload text not null, exception text not null, failed_at datetime not null default current_timestamp)",
		"insert into failed_jobs (connection, queue, payload, exception) values ('database', 'default', '{}', 'E')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	run := func(env string, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Do(context.Background(), append(args, "--env-file", env), nil, &out, &errb)
		return code, out.String() + errb.String()
	}
	for _, args := range [][]string{{"queue:forget", "1"}, {"queue:retry", "1"}, {"queue:failed"}} {
		if code, out := run(env, args...); code != 1 || !strings.Contains(out, "failed_jobs has no uuid column") || !strings.Contains(out, "QUEUE_FAILED_DRIVER=database") {
			t.Errorf("%s: status %d, want 1 naming the missing uuid column and the fix:\n%s", args[0], code, out)
		}
	}
	if code, out := run(env, "queue:doctor"); code != 1 || !strings.Contains(out, "[failed-jobs-uuid]") {
		t.Errorf("queue:doctor: status %d, want a failed-jobs-uuid finding:\n%s", code, out)
	}
	legacy := envWith(t, env, "legacy.env", "QUEUE_FAILED_DRIVER=database")
	if code, out := run(legacy, "queue:forget", "1"); code != 0 {
		t.Fatalf("queue:forget with the database driver: status %d\n%s", code, out)
	}
	var n int
	if err := db.Get(&n, "select count(*) from failed_jobs"); err != nil || n != 0 {
		t.Fatalf("failed jobs left: %d, %v", n, err)
	}
}

// TestRetryFailedJobsWithNullUUID: a failed_jobs table of Laravel 7 or older given a nullable uuid
// column, as Laravel 8's upgrade guide adds it, keeps its old rows' uuids NULL: queue:retry all and
// --queue retry them too (PHP prints their id as []), instead of stopping on the NULL.
func TestRetryFailedJobsWithNullUUID(t *testing.T) {
	t.Parallel()
	conn, env := newSQLiteApp(t)
	db := queuetest.DB(conn)
	raw := `{"displayName":"App\\Jobs\\Raw","job":"App\\Jobs\\Raw@handle","maxTries":null,"timeout":null,"data":""}`
	for _, q := range []string{
		"drop table failed_jobs",
		"create table failed_jobs (id integer primary key autoincrement, uuid varchar(255) null unique, connection text not null, queue text not null, payload text not null, exception text not null, failed_at datetime not null default current_timestamp)",
		"insert into failed_jobs (uuid, connection, queue, payload, exception) values (null, 'database', 'default', '" + raw + "', 'E')",
		"insert into failed_jobs (uuid, connection, queue, payload, exception) values (null, 'database', 'other', '" + raw + "', 'E')",
		"insert into failed_jobs (uuid, connection, queue, payload, exception) values ('9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d', 'database', 'default', '" + raw + "', 'E')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, args := range [][]string{{"queue:retry", "--queue=other"}, {"queue:retry", "all"}} {
		var out, errb bytes.Buffer
		code := Do(context.Background(), append(args, "--env-file", env), nil, &out, &errb)
		if code != 0 || !strings.Contains(out.String(), "The failed job [] has been pushed back onto the queue!") {
			t.Errorf("%v: status %d\n%s%s", args, code, out.String(), errb.String())
		}
	}
	var jobs, failed int
	if err := db.Get(&jobs, "select count(*) from jobs"); err != nil || jobs != 3 {
		t.Errorf("jobs queued: %d, %v; want 3", jobs, err)
	}
	if err := db.Get(&failed, "select count(*) from failed_jobs"); err != nil || failed != 0 {
		t.Errorf("failed jobs left: %d, %v; want none", failed, err)
	}
}
