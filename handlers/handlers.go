// Package handlers is the registry of job handlers, keyed by PHP class name, and the Job a handler
// receives.
//
// A handler's result decides what happens to the job, as in Laravel: a nil error completes it (raw
// Class@method jobs too), a non-nil error is a job exception that is retried by Laravel's rules
// (tries, backoff, maxExceptions), and a panic is an exception too (the worker recovers it). A handler
// that wants something else says so explicitly on the Job: Release puts it back with a delay, Fail
// fails it at once without retry, Delete removes it without running the success path.
package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/payload"
)

// Handler runs one job.
type Handler interface {
	// Handle runs the job. ctx is cancelled when the job's timeout passes or the worker stops.
	Handle(ctx context.Context, job *Job) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, job *Job) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, job *Job) error { return f(ctx, job) }

// Action is what a handler asked the worker to do with its job, beyond returning.
type Action int

const (
	// ActionNone means the handler asked for nothing: the returned error decides.
	ActionNone Action = iota
	// ActionRelease puts the job back on its queue after a delay, as Laravel's $job->release($delay).
	ActionRelease
	// ActionFail fails the job at once, without retry, as Laravel's $job->fail($e).
	ActionFail
	// ActionDelete removes the job as Laravel's $job->delete() does: when the handler returns nil the
	// job counts as done (the next chain link is dispatched, the batch counts a success, the unique
	// lock is released); when it returns an error, the job is only deleted.
	ActionDelete
)

// String returns the action's name.
func (a Action) String() string {
	switch a {
	case ActionNone:
		return "none"
	case ActionRelease:
		return "release"
	case ActionFail:
		return "fail"
	case ActionDelete:
		return "delete"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Job is the job a handler runs: the row's identity, the decoded payload and the handler's requests.
type Job struct {
	// ID is the row's id in the jobs table.
	ID int64
	// UUID is the payload's uuid (Laravel 7+; "" before).
	UUID string
	// Connection is the queue connection name the worker serves.
	Connection string
	// Queue is the queue the job was claimed from.
	Queue string
	// Attempts counts this run: 1 the first time (Laravel increments it when the job is reserved).
	Attempts int
	// Class is the job's class: data.commandName, or the class of a raw Class@method job.
	Class string
	// Method is the method of a raw job ("fire" when the job string has no @); "" for object jobs.
	Method string
	// Envelope is the parsed payload.
	Envelope *payload.Envelope
	// Command is the unserialized command of an object job; nil for raw jobs.
	Command *payload.Object
	// Data is the `data` value of a raw job as raw JSON (possibly `""`); nil for object jobs.
	Data json.RawMessage

	batchID string  // the batch's id, "" when the job is in no batch
	batches Batches // where the batch is read (batch.go)

	mu     sync.Mutex
	action Action
	delay  time.Duration
	err    error
}

// Release asks for the job to be put back on its queue, available again after delay (negative counts
// as 0), once the handler returns. The attempt still counts. The last of Release, Fail and Delete
// called wins.
func (j *Job) Release(delay time.Duration) {
	j.set(ActionRelease, max(delay, 0), nil)
}

// Fail asks for the job to be failed now, without retry: the worker runs Laravel's failure path and
// records err in failed_jobs. err may be nil, as PHP's $job->fail() allows; the worker then records
// what PHP records for it. The last of Release, Fail and Delete called wins.
func (j *Job) Fail(err error) {
	j.set(ActionFail, 0, err)
}

// Delete asks for the job to be deleted. As in Laravel, a deleted job whose handler returns nil is
// done: its chain continues, its batch counts it, its unique lock is released. The last of Release,
// Fail and Delete called wins.
func (j *Job) Delete() {
	j.set(ActionDelete, 0, nil)
}

func (j *Job) set(a Action, delay time.Duration, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.action, j.delay, j.err = a, delay, err
}

// Action returns what the handler asked for: the action, the release delay (ActionRelease) and the
// failure (ActionFail). The worker reads it after Handle returns. As in Laravel, an error returned by
// Handle still counts as an exception when the handler also asked for an action, but the job is not
// released a second time.
func (j *Job) Action() (Action, time.Duration, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.action, j.delay, j.err
}

// Typed returns a Handler that binds the job's command into a new T with payload.Bind (`php:"name"`
// tags) and calls fn with it. For a raw Class@method job the data value is decoded into T as JSON
// instead (an empty data value leaves T zero). A command that does not bind fails the job without
// retry, since every attempt would bind the same way; the payload is kept in failed_jobs.
func Typed[T any](fn func(ctx context.Context, job *Job, cmd *T) error) Handler {
	return typed[T]{fn}
}

// typed is the Handler Typed returns.
type typed[T any] struct {
	fn func(ctx context.Context, job *Job, cmd *T) error
}

func (h typed[T]) Handle(ctx context.Context, job *Job) error {
	if job == nil {
		return errors.New("handlers: Handle called with a nil *Job")
	}
	cmd := new(T)
	var err error
	switch {
	case job.Command != nil:
		err = payload.Bind(job.Command, cmd)
	case len(job.Data) > 0 && string(job.Data) != `""` && string(job.Data) != "null":
		err = json.Unmarshal(job.Data, cmd)
	}
	if err != nil {
		job.Fail(fmt.Errorf("bind %s into %T: %w", job.Class, cmd, err))
		return nil
	}
	return h.fn(ctx, job, cmd)
}

// Target returns the function the handler calls, where the worker places a returned error that carries
// no location of its own.
func (h typed[T]) Target() any { return h.fn }

// Registry maps PHP class names to handlers. Names are matched as PHP matches class names: without a
// leading backslash and ignoring case. It is safe for concurrent use; registering is meant for
// program start, and fails fast (panics) on programming errors, as database/sql.Register does.
type Registry struct {
	mu       sync.RWMutex
	handlers map[string]entry  // by folded class name
	aliases  map[string]string // folded alias → class as registered
}

type entry struct {
	class   string
	handler Handler
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{handlers: map[string]entry{}, aliases: map[string]string{}}
}

// Clone returns a registry with the same handlers and aliases, which can be added to without changing
// r: a worker adds its configured routes to a clone of Default.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c := NewRegistry()
	maps.Copy(c.handlers, r.handlers)
	maps.Copy(c.aliases, r.aliases)
	return c
}

// fold normalizes a PHP class name for matching.
func fold(class string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(class), `\`))
}

// Register adds the handler for a class. It panics if the class is empty, the handler is nil, or the
// class is already registered or is an alias.
func (r *Registry) Register(class string, h Handler) {
	if isNil(h) {
		panic("handlers: Register handler is nil for " + class)
	}
	k := fold(class)
	if k == "" {
		panic("handlers: Register class name is empty")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, dup := r.handlers[k]; dup {
		panic("handlers: Register called twice for " + e.class)
	}
	if _, dup := r.aliases[k]; dup {
		panic("handlers: Register class " + class + " is already an alias")
	}
	r.handlers[k] = entry{class: strings.TrimPrefix(strings.TrimSpace(class), `\`), handler: h}
}

// Alias makes a renamed class run the handler of class: jobs serialized under the old name (still in
// the table when the class was renamed) find the new handler. class need not be registered yet. It
// panics if either name is empty, or alias is already registered or aliased.
func (r *Registry) Alias(alias, class string) {
	a, c := fold(alias), fold(class)
	if a == "" || c == "" {
		panic("handlers: Alias needs two class names")
	}
	if a == c {
		panic("handlers: Alias of " + alias + " to itself")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.handlers[a]; dup {
		panic("handlers: Alias " + alias + " is already registered as a class")
	}
	if _, dup := r.aliases[a]; dup {
		panic("handlers: Alias called twice for " + alias)
	}
	r.aliases[a] = c
}

// maxAliasHops bounds alias chains (old → older name → class), so that a cycle cannot loop.
const maxAliasHops = 8

// Lookup returns the handler for a class, following aliases.
func (r *Registry) Lookup(class string) (Handler, bool) {
	k := fold(class)
	r.mu.RLock()
	defer r.mu.RUnlock()
	for range maxAliasHops {
		if e, ok := r.handlers[k]; ok {
			return e.handler, true
		}
		next, ok := r.aliases[k]
		if !ok {
			return nil, false
		}
		k = next
	}
	return nil, false
}

// Classes returns the registered class names (not aliases), sorted, for logs and listings.
func (r *Registry) Classes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.handlers))
	for _, e := range r.handlers {
		out = append(out, e.class)
	}
	sort.Strings(out)
	return out
}

func isNil(h Handler) bool {
	if h == nil {
		return true
	}
	v := reflect.ValueOf(h)
	switch v.Kind() {
	case reflect.Func, reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Chan:
		return v.IsNil()
	}
	return false
}

var defaultRegistry = NewRegistry()

// Default returns the package-level registry that Register and Alias fill, which the stock binary
// serves.
func Default() *Registry { return defaultRegistry }

// Register adds a handler to the default registry; see Registry.Register.
func Register(class string, h Handler) { defaultRegistry.Register(class, h) }

// Alias adds an alias to the default registry; see Registry.Alias.
func Alias(alias, class string) { defaultRegistry.Alias(alias, class) }
