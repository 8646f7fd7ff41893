package handlers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/payload"
)

// fixtureJob builds the Job a worker would hand over for a Laravel 8.83 fixture.
func fixtureJob(t testing.TB, name string) *Job {
	t.Helper()
	f, ok := fixtures.Laravel883()[name]
	if !ok {
		t.Fatalf("no fixture %q", name)
	}
	env, err := payload.ParseEnvelope(f.Payload)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	job := &Job{ID: 7, UUID: env.UUID, Connection: "database", Queue: "default", Attempts: 1, Envelope: env}
	if env.IsRaw() {
		job.Class, job.Method = env.RawTarget()
		job.Data = env.Data
		return job
	}
	var kr *payload.Keyring
	if env.CommandEncrypted() {
		if kr, err = payload.NewKeyring(fixtures.AppKey, nil, "AES-256-CBC"); err != nil {
			t.Fatal(err)
		}
	}
	if job.Command, err = payload.DecodeCommand(env, kr); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	job.Class = env.CommandName
	return job
}

func mustPanic(t *testing.T, what string, fn func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	fn()
}

var noop = HandlerFunc(func(context.Context, *Job) error { return nil })

func TestRegistryPanics(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	r.Register(`App\Jobs\A`, noop)
	r.Alias(`App\Jobs\Old`, `App\Jobs\A`)
	var nilFunc HandlerFunc
	var nilHandler Handler
	mustPanic(t, "nil handler", func() { r.Register(`App\Jobs\B`, nilHandler) })
	mustPanic(t, "nil HandlerFunc", func() { r.Register(`App\Jobs\B`, nilFunc) })
	mustPanic(t, "empty class", func() { r.Register(" ", noop) })
	mustPanic(t, "duplicate", func() { r.Register(`App\Jobs\A`, noop) })
	mustPanic(t, "duplicate with a leading backslash and other case", func() { r.Register(`\app\jobs\a`, noop) })
	mustPanic(t, "class already an alias", func() { r.Register(`App\Jobs\Old`, noop) })
	mustPanic(t, "alias twice", func() { r.Alias(`App\Jobs\Old`, `App\Jobs\C`) })
	mustPanic(t, "alias of a registered class", func() { r.Alias(`App\Jobs\A`, `App\Jobs\C`) })
	mustPanic(t, "alias to itself", func() { r.Alias(`X`, `\x`) })
	mustPanic(t, "empty alias", func() { r.Alias("", `X`) })
	if got := r.Classes(); len(got) != 1 || got[0] != `App\Jobs\A` {
		t.Errorf("Classes() = %q after the panics", got)
	}
}

func TestRegistryLookup(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	var ran []string
	mk := func(name string) Handler {
		return HandlerFunc(func(context.Context, *Job) error { ran = append(ran, name); return nil })
	}
	r.Alias(`App\Jobs\Legacy`, `App\Jobs\Renamed`) // before the class is registered
	r.Alias(`App\Jobs\Ancient`, `App\Jobs\Legacy`) // a chain of renames
	r.Register(`\App\Jobs\Renamed`, mk("renamed"))
	r.Register(`App\Jobs\Other`, mk("other"))
	r.Alias(`Loop\A`, `Loop\B`)
	r.Alias(`Loop\B`, `Loop\A`)
	for _, class := range []string{`App\Jobs\Renamed`, `app\jobs\renamed`, `\App\Jobs\Legacy`, `App\Jobs\Ancient`, `App\Jobs\Other`} {
		h, ok := r.Lookup(class)
		if !ok {
			t.Errorf("Lookup(%q) found nothing", class)
			continue
		}
		_ = h.Handle(context.Background(), &Job{})
	}
	if want := "renamed renamed renamed renamed other"; strings.Join(ran, " ") != want {
		t.Errorf("ran %q, want %q", ran, want)
	}
	for _, class := range []string{`App\Jobs\Missing`, `Loop\A`, ""} {
		if _, ok := r.Lookup(class); ok {
			t.Errorf("Lookup(%q) found a handler", class)
		}
	}
	if got := strings.Join(r.Classes(), ","); got != `App\Jobs\Other,App\Jobs\Renamed` {
		t.Errorf("Classes() = %q", got)
	}
}

func TestDefaultRegistry(t *testing.T) {
	Register(`Tests\DefaultRegistry\Job`, noop)
	Alias(`Tests\DefaultRegistry\Old`, `Tests\DefaultRegistry\Job`)
	if _, ok := Default().Lookup(`Tests\DefaultRegistry\Old`); !ok {
		t.Error("the default registry does not resolve its alias")
	}
}

func TestJobActions(t *testing.T) {
	t.Parallel()
	j := &Job{}
	if a, d, err := j.Action(); a != ActionNone || d != 0 || err != nil {
		t.Errorf("fresh job: %v %v %v", a, d, err)
	}
	j.Release(-time.Second)
	if a, d, _ := j.Action(); a != ActionRelease || d != 0 {
		t.Errorf("negative release: %v %v", a, d)
	}
	j.Release(5 * time.Second)
	if a, d, _ := j.Action(); a != ActionRelease || d != 5*time.Second {
		t.Errorf("release: %v %v", a, d)
	}
	boom := errors.New("boom")
	j.Fail(boom)
	if a, d, err := j.Action(); a != ActionFail || d != 0 || err != boom {
		t.Errorf("fail: %v %v %v", a, d, err)
	}
	j.Fail(nil)
	if a, _, err := j.Action(); a != ActionFail || err != nil {
		t.Errorf("Fail(nil): %v %v", a, err)
	}
	j.Delete()
	if a, _, err := j.Action(); a != ActionDelete || err != nil {
		t.Errorf("delete: %v %v", a, err)
	}
	for a, want := range map[Action]string{ActionNone: "none", ActionRelease: "release", ActionFail: "fail", ActionDelete: "delete", 9: "Action(9)"} {
		if a.String() != want {
			t.Errorf("%d.String() = %q", int(a), a.String())
		}
	}
}

type podcastCommand struct {
	User      payload.ModelIdentifier `php:"user"`
	Users     payload.ModelIdentifier `php:"users"`
	PublishAt time.Time               `php:"publishAt"`
	Status    string                  `php:"status"`
	Queue     *string                 `php:"queue"`
}

func TestTypedBindsFixture(t *testing.T) {
	t.Parallel()
	job := fixtureJob(t, "podcast")
	var got *podcastCommand
	h := Typed(func(_ context.Context, j *Job, cmd *podcastCommand) error {
		if j != job {
			t.Error("handler got another job")
		}
		got = cmd
		return nil
	})
	if err := h.Handle(context.Background(), job); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if got == nil {
		t.Fatal("handler not called")
	}
	if got.User.Class != `App\Models\User` || got.User.ID != int64(1) || got.User.IsCollection() {
		t.Errorf("user = %+v", got.User)
	}
	if ids := got.Users.IDs(); len(ids) != 2 || ids[0] != int64(1) || ids[1] != int64(2) {
		t.Errorf("users = %+v", got.Users)
	}
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 24, 18, 30, 0, 0, prague); !got.PublishAt.Equal(want) {
		t.Errorf("publishAt = %v, want %v", got.PublishAt, want)
	}
	if got.Status != "Published" || got.Queue != nil {
		t.Errorf("status %q queue %v", got.Status, got.Queue)
	}
	if a, _, _ := job.Action(); a != ActionNone {
		t.Errorf("action %v", a)
	}
}

func TestTypedEncryptedFixture(t *testing.T) {
	t.Parallel()
	job := fixtureJob(t, "secret")
	var props map[string]any
	h := Typed(func(_ context.Context, _ *Job, cmd *map[string]any) error { props = *cmd; return nil })
	if err := h.Handle(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if len(props) == 0 {
		t.Error("no properties bound from the decrypted command")
	}
}

func TestTypedRawJob(t *testing.T) {
	t.Parallel()
	job := fixtureJob(t, "raw")
	if job.Class != `App\Handlers\Legacy` || job.Method != "fire" {
		t.Fatalf("class %q method %q", job.Class, job.Method)
	}
	type legacy struct {
		Order int      `json:"order"`
		Items []string `json:"items"`
	}
	var got legacy
	h := Typed(func(_ context.Context, _ *Job, cmd *legacy) error { got = *cmd; return nil })
	if err := h.Handle(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if got.Order != 991 || strings.Join(got.Items, ",") != "x,y" {
		t.Errorf("bound %+v", got)
	}
	empty := &Job{Class: "X", Method: "fire", Data: []byte(`""`)}
	called := false
	if err := Typed(func(_ context.Context, _ *Job, cmd *legacy) error { called = cmd.Order == 0; return nil }).Handle(context.Background(), empty); err != nil || !called {
		t.Errorf("empty data: err %v, called with zero value %v", err, called)
	}
}

// TestTypedBindFailureFails: a command that cannot bind fails the job without retry and without
// calling the handler.
func TestTypedBindFailureFails(t *testing.T) {
	t.Parallel()
	job := fixtureJob(t, "podcast")
	type wrong struct {
		Status int `php:"status"`
	}
	called := false
	err := Typed(func(context.Context, *Job, *wrong) error { called = true; return nil }).Handle(context.Background(), job)
	if err != nil || called {
		t.Fatalf("err %v, called %v", err, called)
	}
	a, _, ferr := job.Action()
	if a != ActionFail || !errors.Is(ferr, payload.ErrBind) || !strings.Contains(ferr.Error(), `App\Jobs\ProcessPodcast`) {
		t.Errorf("action %v, error %v", a, ferr)
	}
}

// TestBatchWithoutStore: a job in no batch has none; one built by hand without the worker's store
// says so rather than reading as outside a batch.
func TestBatchWithoutStore(t *testing.T) {
	ctx := context.Background()
	j := &Job{}
	if b, err := j.Batch(ctx); b != nil || err != nil || j.CancelBatch(ctx) != nil {
		t.Fatalf("a job in no batch: %v, %v", b, err)
	}
	j.SetBatch("b1", nil)
	if _, err := j.Batch(ctx); !errors.Is(err, ErrNoBatches) {
		t.Fatalf("Batch without a store: %v", err)
	}
	if err := j.CancelBatch(ctx); !errors.Is(err, ErrNoBatches) {
		t.Fatalf("CancelBatch without a store: %v", err)
	}
}

// TestRegistryClone adds to a clone without changing the registry it came from.
func TestRegistryClone(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	r.Register(`App\Jobs\A`, HandlerFunc(func(context.Context, *Job) error { return nil }))
	r.Alias(`App\Jobs\OldA`, `App\Jobs\A`)
	c := r.Clone()
	c.Register(`App\Jobs\B`, HandlerFunc(func(context.Context, *Job) error { return nil }))
	if _, ok := c.Lookup(`app\jobs\olda`); !ok {
		t.Error("the clone lost the alias")
	}
	if _, ok := r.Lookup(`App\Jobs\B`); ok {
		t.Error("registering on the clone changed the original")
	}
	if got := c.Classes(); len(got) != 2 {
		t.Errorf("clone classes %v, want A and B", got)
	}
}

func TestTypedNilJob(t *testing.T) {
	h := Typed(func(ctx context.Context, job *Job, cmd *struct{}) error { return nil })
	if err := h.Handle(context.Background(), nil); err == nil {
		t.Error("Handle(ctx, nil) returned no error")
	}
}
