package handlers_test

import (
	"context"
	"fmt"
	"time"

	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/payload"
)

// welcomeEmail mirrors the properties of the PHP job App\Jobs\SendWelcomeEmail that the handler uses.
type welcomeEmail struct {
	Email  string   `php:"email"`
	UserID int      `php:"userId"`
	Tags   []string `php:"tags"`
}

// A typed handler registered by PHP class name, and an alias for the class's old name.
func ExampleTyped() {
	r := handlers.NewRegistry()
	r.Register(`App\Jobs\SendWelcomeEmail`, handlers.Typed(
		func(ctx context.Context, job *handlers.Job, cmd *welcomeEmail) error {
			fmt.Println("welcome", cmd.Email, cmd.UserID, cmd.Tags, "attempt", job.Attempts)
			return nil
		}))
	r.Alias(`App\Jobs\WelcomeMail`, `App\Jobs\SendWelcomeEmail`)

	// What the worker does with a claimed row, here a payload written by Laravel 8.83.
	env, err := payload.ParseEnvelope(fixtures.Laravel883()["welcome"].Payload)
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd, err := payload.DecodeCommand(env, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	job := &handlers.Job{ID: 1, Queue: "default", Attempts: 1, Class: env.CommandName, Envelope: env, Command: cmd}
	h, ok := r.Lookup(job.Class)
	if !ok {
		fmt.Println("no handler")
		return
	}
	fmt.Println(h.Handle(context.Background(), job))
	_, ok = r.Lookup(`\App\Jobs\WelcomeMail`)
	fmt.Println("old name found:", ok)
	// Output:
	// welcome ana@example.com 42 [new vip] attempt 1
	// <nil>
	// old name found: true
}

// A handler asks for explicit control flow instead of returning an error.
func ExampleJob_Release() {
	h := handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
		job.Release(30 * time.Second)
		return nil
	})
	job := &handlers.Job{}
	_ = h.Handle(context.Background(), job)
	action, delay, _ := job.Action()
	fmt.Println(action, delay)
	// Output: release 30s
}

// memBatches is a stand-in for the worker's batch store, which reads job_batches.
type memBatches map[string]*handlers.Batch

func (m memBatches) Find(_ context.Context, id string) (*handlers.Batch, error) { return m[id], nil }

func (m memBatches) Cancel(_ context.Context, id string) error {
	now := time.Unix(1_800_000_000, 0)
	m[id].CancelledAt, m[id].FinishedAt = &now, &now
	return nil
}

// A Batchable job's handler returns early once its batch is cancelled, as PHP's handle() does with
// `if ($this->batch()->cancelled()) return;`, and cancels the batch when its row cannot be imported.
func ExampleJob_Batch() {
	h := handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
		b, err := job.Batch(ctx)
		if err != nil {
			return err
		}
		if b != nil && b.Cancelled() {
			fmt.Println("batch cancelled; nothing to do")
			return nil
		}
		fmt.Println("importing; cancelling the batch")
		return job.CancelBatch(ctx)
	})
	store := memBatches{"b1": {ID: "b1", TotalJobs: 2, PendingJobs: 2}}
	for range 2 {
		job := &handlers.Job{Class: `App\Jobs\ImportRow`}
		job.SetBatch("b1", store) // the worker does this for every job of a batch
		if err := h.Handle(context.Background(), job); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// importing; cancelling the batch
	// batch cancelled; nothing to do
}
