package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestFailedJobsWithoutUUID: a failed_jobs table made before Laravel 8 (no uuid column) under the
// database-uuids driver, Laravel 8's default: the commands that find a job by id stop naming the
// mismatch and its fix instead of a raw SQL error, queue:doctor warns, and with the database driver
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
	for _, args := range [][]string{{"queue:forget", "1"}, {"queue:retry", "1"}} {
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
