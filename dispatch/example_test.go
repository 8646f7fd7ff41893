package dispatch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/artisan-go/artisan-go/dispatch"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// Example queues App\Jobs\Plain for PHP workers inside the caller's transaction, on an embedded
// SQLite database with Laravel's tables.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dispatch")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "database.sqlite")
	os.WriteFile(file, nil, 0o600)
	conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.SQLite, Database: file})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{}); err != nil {
		fmt.Println(err)
		return
	}

	d, err := dispatch.ForConn(conn, dispatch.Params{LaravelVersion: "8.83"})
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd := payload.NewObject(`App\Jobs\Plain`).
		Set("name", "from Go").
		Set("count", int64(3)).
		SetProtected("note", "protected").
		SetPrivate(`App\Jobs\Plain`, "secret", "private")

	// The job joins the transaction: it is queued when the transaction commits, and not at all when
	// it rolls back. Your own *sql.Tx (or *sqlx.Tx) works the same way.
	var job *dispatch.Dispatched
	err = conn.InTx(ctx, func(tx *sqlx.Tx) error {
		job, err = d.Dispatch(ctx, tx, dispatch.Job{Command: cmd, Queue: "emails", Delay: time.Minute, Tries: 3, Backoff: []int{10, 30}})
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	env, _ := payload.ParseEnvelope(job.Payload)
	fmt.Println(job.ID, job.Queue, len(job.UUID))
	fmt.Println(env.DisplayName, *env.MaxTries, *env.Backoff)
	sent, _ := payload.DecodeCommand(env, nil)
	for _, name := range []string{"name", "note", "secret", "queue", "delay"} {
		v, _ := sent.Get(name)
		fmt.Printf("%s=%v ", name, v)
	}
	fmt.Println()
	// Output:
	// 1 emails 36
	// App\Jobs\Plain 3 10,30
	// name=from Go note=protected secret=private queue=emails delay=60
}
