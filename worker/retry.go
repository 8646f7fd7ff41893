package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/payload"
)

// RetryUntiler is implemented by handlers of jobs whose PHP class has a retryUntil() method, which Go
// cannot call: `artisan-go queue:retry` calls RetryUntil instead to refresh the payload's retryUntil,
// as RetryCommand calls the PHP method. A zero time writes null, as a method returning null does.
type RetryUntiler interface {
	RetryUntil(job *handlers.Job) time.Time
}

// ErrCommandUnreadable is wrapped by RetryPayload's error when the job's command does not unserialize
// or decrypt: PHP's queue:retry throws there, and stops, leaving that job and the ones after it failed.
var ErrCommandUnreadable = errors.New("the command cannot be read")

// ErrModelNotFound is wrapped by RetryPayload's error when a model the job holds is gone: PHP's
// queue:retry unserializes the command (from 8.21), its SerializesModels throws Eloquent's
// ModelNotFoundException, and the command stops there as for an unreadable command.
var ErrModelNotFound = errors.New("a model of the job is gone")

// RetryParams is a failed job to put back on its queue.
type RetryParams struct {
	// Payload is the failed_jobs row's payload.
	Payload []byte
	// Connection and Queue are the failed row's, given to a RetryUntiler.
	Connection, Queue string
	// Registry finds the RetryUntiler for the job's class; nil finds none.
	Registry *handlers.Registry
	// Keyring decrypts ShouldBeEncrypted commands; nil when APP_KEY is not set.
	Keyring *payload.Keyring
	// LaravelVersion is the configured version; retryUntil is refreshed from 8.21 on, as
	// RetryCommand does. Empty means the newest.
	LaravelVersion string
	// Models looks up the models the command holds when it is unserialized (from 8.21); nil leaves
	// them unchecked. ModelTables and DBConnection are the worker's Config.Models and
	// Config.DBConnection: models on another connection are not checked.
	Models       ModelFinder
	ModelTables  map[string]Model
	DBConnection string
}

// RetryPayload returns the payload `php artisan queue:retry` would push for a failed job: attempts
// reset and the JSON written again with json_encode's default flags (payload.RetryPayload), and
// (from Laravel 8.21) retryUntil refreshed from the handler's RetryUntiler. The command must decode (decrypt) as PHP's
// refreshRetryUntil needs it to, else the error says why and nothing should be pushed. note is not
// empty when the payload has a retryUntil that PHP would recompute with the class's retryUntil()
// method and no Go handler can: the old value is kept, and note says so and how to fix it.
func RetryPayload(ctx context.Context, p RetryParams) (out []byte, note string, err error) {
	env, err := payload.ParseEnvelope(p.Payload)
	if err != nil {
		return nil, "", fmt.Errorf("unable to extract job payload: %w", err)
	}
	if v, err := payload.ParseVersion(p.LaravelVersion); env.IsRaw() || err == nil && !v.AtLeast(8, 21) {
		out, err := payload.RetryPayload(p.Payload, nil)
		return out, "", err
	}
	cmd, err := payload.DecodeCommand(env, p.Keyring)
	if err != nil {
		return nil, "", fmt.Errorf("unable to extract job payload: %w: %w", ErrCommandUnreadable, err)
	}
	if p.Models != nil {
		// A model of a collection that is gone is left out, as Eloquent's restoreCollection does;
		// only a single model throws.
		missing, err := newModelCheck(p.Models, p.ModelTables, p.DBConnection, nil).object(ctx, cmd)
		if err != nil {
			return nil, "", err
		}
		if missing != nil {
			return nil, "", fmt.Errorf("%w: %s", ErrModelNotFound, missing.Message)
		}
	}
	var until *payload.RetryUntil
	var h handlers.Handler
	if p.Registry != nil {
		h, _ = p.Registry.Lookup(cmd.Class)
	}
	if ru, ok := h.(RetryUntiler); ok {
		until = &payload.RetryUntil{}
		job := &handlers.Job{UUID: env.UUID, Connection: p.Connection, Queue: p.Queue, Class: cmd.Class, Envelope: env, Command: cmd}
		if t := ru.RetryUntil(job); !t.IsZero() {
			u := t.Unix()
			until.Unix = &u
		}
	} else if _, prop := cmd.Get("retryUntil"); env.RetryUntil != nil && !prop {
		note = fmt.Sprintf("retryUntil kept at %s: %s computes it in its retryUntil() method, which PHP's queue:retry calls; "+
			"implement worker.RetryUntiler on its Go handler to refresh it, or retry it with php artisan queue:retry",
			time.Unix(*env.RetryUntil, 0).UTC().Format(time.RFC3339), cmd.Class)
	}
	out, err = payload.RetryPayload(p.Payload, until)
	return out, note, err
}
