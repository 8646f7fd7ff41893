package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/cli"
	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestWelcomeBinary runs this binary's queue:work on a SQLite queue holding a real Laravel 8.83 payload
// of the handled class and one of a class it does not handle: the first is delivered and deleted, the
// second is left untouched for PHP.
func TestWelcomeBinary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "database.sqlite")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.SQLite, Database: db})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{}); err != nil {
		t.Fatal(err)
	}
	q, err := laravel.NewQueue(conn, laravel.QueueParams{Strategy: "delete-retry"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"welcome", "podcast"} {
		if _, err := q.JobPush(ctx, &laravel.JobPushParams{Queue: "default", Payload: fixtures.Laravel883()[name].Payload, Now: 1, AvailableAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nCACHE_DRIVER=database\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	var sent []string
	deliver = func(ctx context.Context, to, locale string) error {
		sent = append(sent, to+" "+locale)
		return nil
	}
	registerHandlers()

	var out, errb bytes.Buffer
	code := cli.Do(ctx, []string{"queue:work", "--env-file", env, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit status %d: %s", code, errb.String())
	}
	if len(sent) != 1 || sent[0] != "ana@example.com en_GB" {
		t.Fatalf("delivered %q, want one welcome mail to ana@example.com in en_GB", sent)
	}
	var left []string
	rows, err := queuetest.DB(conn).Query("select payload from jobs")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		rows.Scan(&p)
		left = append(left, p)
	}
	if len(left) != 1 || !strings.Contains(left[0], `ProcessPodcast`) {
		t.Fatalf("jobs left %d, want only the podcast job for PHP", len(left))
	}
	var failed int
	queuetest.DB(conn).QueryRow("select count(*) from failed_jobs").Scan(&failed)
	if failed != 0 {
		t.Fatalf("%d failed jobs, want none", failed)
	}
}
