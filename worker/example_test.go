package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/worker"
)

// A program that runs one Laravel job class in Go: register a handler by the PHP class name, open the
// database the Laravel app uses, and run the worker.
func ExampleWorker_RunOnce() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "database.sqlite")
	os.WriteFile(path, nil, 0o600) // Laravel's database/database.sqlite

	conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.SQLite, Database: path})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	laravel.CreateSchema(ctx, conn, laravel.SchemaParams{}) // what `php artisan migrate` made
	queue, _ := laravel.NewQueue(conn, laravel.QueueParams{})
	now := time.Now().Unix()
	queue.JobPush(ctx, &laravel.JobPushParams{Queue: "default", Payload: fixtures.Laravel883()["welcome"].Payload, Now: now, AvailableAt: now})

	type welcome struct {
		Email string `php:"email"`
	}
	reg := handlers.NewRegistry()
	reg.Register(`App\Jobs\SendWelcomeEmail`, handlers.Typed(func(ctx context.Context, job *handlers.Job, cmd *welcome) error {
		fmt.Println("welcome", cmd.Email, "attempt", job.Attempts)
		return nil
	}))

	w, err := worker.New(worker.Params{Queue: queue, Conn: conn, Registry: reg, Config: worker.Defaults()})
	if err != nil {
		fmt.Println(err)
		return
	}
	found, err := w.RunOnce(ctx)
	fmt.Println(found, err, w.Stats().Processed)
	// Output:
	// welcome ana@example.com attempt 1
	// true <nil> 1
}

// The lock key Laravel 13 gives a WithoutOverlapping("acct-9") job whose displayName() is "Sync
// account": the display name enters it as its xxh128, as PHP's hash('xxh128', ...) writes it.
func ExampleXXH128() {
	fmt.Println("laravel-queue-overlap:" + worker.XXH128("Sync account") + ":acct-9")
	// Output: laravel-queue-overlap:8806b19904308ddfc24baf6535c7be8e:acct-9
}
