package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

// modelID is what SerializesModels writes for a model (an int64 id) or a collection (a list of ids).
func modelID(class string, id payload.Value) *payload.Object {
	return payload.NewObject(modelIdentifierClass).Set("class", class).Set("id", id).
		Set("relations", payload.NewList()).Set("connection", nil)
}

// TestMissingModels checks models before the handler runs, as PHP's unserialize does: a missing model
// fails the job with ModelNotFoundException (or deletes it with deleteWhenMissingModels), a collection
// keeps the models that exist, a configured table is used, and a model whose table does not exist
// leaves the job to PHP instead of failing it.
func TestMissingModels(t *testing.T) {
	t.Parallel()
	// The model tables have fixed names that strategy variants sharing a database would clash on.
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		f.exec(t, "create table people (id integer primary key, name varchar(20))")
		f.exec(t, "insert into people (id, name) values (1, 'ada'), (3, 'lin')")
		var seen []string
		f.reg.Register(`App\Jobs\Greet`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			var cmd struct {
				People payload.ModelIdentifier `php:"people"`
			}
			if err := payload.Bind(j.Command, &cmd); err != nil {
				return err
			}
			seen = append(seen, string(payload.CanonicalJSON(cmd.People.ID)))
			return nil
		}))
		w := f.worker(t, func(c *Config) {
			c.Models = map[string]Model{`App\Models\Client`: {Table: "people"}}
		})
		person := func(id int64) *payload.Object { return modelID(`App\Models\Person`, id) }
		everyone := modelID(`App\Models\Person`, payload.NewList(int64(1), int64(2), int64(3)))

		f.push(t, "default", envelope(t, `App\Jobs\Greet`, "", map[string]payload.Value{"person": person(1), "people": everyone}))
		runOnce(t, w)
		f.wantRows(t, 0, 0)
		if len(seen) != 1 || seen[0] != "[1,3]" {
			t.Errorf("the handler saw the collection %v, want [1,3] (id 2 is gone)", seen)
		}

		f.push(t, "default", envelope(t, `App\Jobs\Greet`, "", map[string]payload.Value{"person": person(2), "people": everyone}))
		runOnce(t, w)
		f.wantRows(t, 0, 1)
		if got := firstLine(f.onlyFailed(t).Exception); !strings.HasPrefix(got, `Illuminate\Database\Eloquent\ModelNotFoundException: No query results for model [App\Models\Person]. in `) {
			t.Errorf("exception %q", got)
		}

		f.push(t, "default", envelope(t, `App\Jobs\Greet`, "", map[string]payload.Value{"person": person(9), "deleteWhenMissingModels": true}))
		runOnce(t, w)
		f.wantRows(t, 0, 1)

		f.push(t, "default", envelope(t, `App\Jobs\Greet`, "", map[string]payload.Value{"client": modelID(`App\Models\Client`, int64(3))}))
		runOnce(t, w)
		f.wantRows(t, 0, 1)

		f.push(t, "default", envelope(t, `App\Jobs\Greet`, "", map[string]payload.Value{"invoice": modelID(`App\Models\Invoice`, int64(1))}))
		runOnce(t, w)
		f.wantRows(t, 1, 1)
		if row := f.onlyRow(t); row.Attempts != 0 || row.ReservedAt != nil {
			t.Errorf("job with an unreadable model table %+v, want it handed back untouched", row)
		}
		if s := w.Stats(); s.Processed != 2 || s.Failed != 1 || s.Deleted != 1 || s.LeftForPHP != 1 {
			t.Errorf("stats %+v, want 2 processed, 1 failed, 1 deleted, 1 left", s)
		}
	})
}

// TestModelsOnAnotherConnection leaves models of other connections unchecked: the worker reaches
// one database, and PHP loads such a model from its own.
func TestModelsOnAnotherConnection(t *testing.T) {
	t.Parallel()
	// The model tables have fixed names that strategy variants sharing a database would clash on.
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		f.reg.Register(`App\Jobs\Greet`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
		w := f.worker(t, func(c *Config) {
			c.DBConnection = "mysql"
			c.Models = map[string]Model{`App\Models\Archived`: {Connection: "archive"}}
		})
		reports := modelID(`App\Models\Report`, int64(1)).Set("connection", "reports")
		f.push(t, "default", envelope(t, `App\Jobs\Greet`, "", map[string]payload.Value{"report": reports}))
		f.push(t, "default", envelope(t, `App\Jobs\Greet`, "", map[string]payload.Value{"old": modelID(`App\Models\Archived`, int64(1))}))
		runOnce(t, w)
		runOnce(t, w)
		f.wantRows(t, 0, 0)
		if s := w.Stats(); s.Processed != 2 {
			t.Errorf("stats %+v, want both jobs run: their models live on other connections", s)
		}
	})
}

// TestMissingModelReleasesContextLock releases, from Laravel 11.39, the unique lock the payload's
// context names when a job fails for a missing model; 8.x keeps it (its failed() path throws first).
func TestMissingModelReleasesContextLock(t *testing.T) {
	t.Parallel()
	// The model tables have fixed names that strategy variants sharing a database would clash on.
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		f.exec(t, "create table people (id integer primary key)")
		f.reg.Register(jobClass, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
		const key = `laravel_unique_job:App\Jobs\Work:42`
		ctxKey := `"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:8:\"database\";","laravel_unique_job_key":"s:` +
			itoa(int64(len(key))) + `:\"` + strings.ReplaceAll(key, `\`, `\\`) + `\";"}}`
		for _, tc := range []struct {
			version string
			kept    int
		}{{"8.83", 1}, {"11.40", 0}} {
			f.insertLock(t, "laravel_cache"+key)
			f.push(t, "default", envelope(t, jobClass, ctxKey, map[string]payload.Value{"person": modelID(`App\Models\Person`, int64(5))}))
			runOnce(t, f.worker(t, func(c *Config) { c.LaravelVersion = tc.version }))
			if n := f.lockCount(t, "laravel_cache"+key); n != tc.kept {
				t.Errorf("Laravel %s: %d locks left after a missing model, want %d", tc.version, n, tc.kept)
			}
			f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().CacheLocks))
		}
		f.wantRows(t, 0, 2)
	})
}

// wrapperEnvelope is a payload of one of Laravel's wrappers (a queued listener, mailable or
// notification): commandName the wrapper, displayName the class it runs.
func wrapperEnvelope(t testing.TB, cmd *payload.Object, displayName string) []byte {
	t.Helper()
	ser, err := payload.Serialize(cmd)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"uuid": testUUID(), "displayName": displayName, "job": `Illuminate\Queue\CallQueuedHandler@call`,
		"data": map[string]any{"commandName": cmd.Class, "command": string(ser)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMissingModelsInWrappers checks the models of the objects a wrapper holds, as PHP's unserialize
// restores them in the event's, the mailable's and the notification's own __unserialize: a queued
// listener whose event's model is gone fails unrun, a notification goes to the notifiables that
// exist, and a mailable's deleteWhenMissingModels deletes it before 12.0 (PHP reads the displayed
// class) but not from 12.0 (the command's class, SendQueuedMailable, has none).
func TestMissingModelsInWrappers(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		f.exec(t, "create table people (id integer primary key, name varchar(20))")
		f.exec(t, "insert into people (id, name) values (1, 'ada')")
		ran := map[string][]string{}
		for _, class := range []string{`App\Listeners\RecordShipment`, `App\Mail\ShippedMail`, `App\Notifications\Shipped`} {
			f.reg.Register(class, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
				n, _ := j.Command.Get("notifiables")
				ids := ""
				if id, ok := n.(*payload.Object); ok {
					v, _ := id.Get("id")
					ids = string(payload.CanonicalJSON(v))
				}
				ran[class] = append(ran[class], ids)
				return nil
			}))
		}
		person := func(id int64) *payload.Object { return modelID(`App\Models\Person`, id) }
		listener := func(id int64) []byte {
			event := payload.NewObject(`App\Events\OrderShipped`).Set("user", person(id))
			return wrapperEnvelope(t, payload.NewObject(`Illuminate\Events\CallQueuedListener`).Set("class", `App\Listeners\RecordShipment`).
				Set("method", "handle").Set("data", payload.NewList(event)), `App\Listeners\RecordShipment`)
		}
		mail := func(id int64, deleteWhenMissing bool) []byte {
			m := payload.NewObject(`App\Mail\ShippedMail`).Set("user", person(id))
			if deleteWhenMissing {
				m.Set("deleteWhenMissingModels", true)
			}
			return wrapperEnvelope(t, payload.NewObject(`Illuminate\Mail\SendQueuedMailable`).Set("mailable", m).Set("tries", nil), `App\Mail\ShippedMail`)
		}
		w := f.worker(t, nil)

		f.push(t, "default", listener(2))
		runOnce(t, w)
		f.wantRows(t, 0, 1)
		if got := firstLine(f.onlyFailed(t).Exception); !strings.HasPrefix(got, `Illuminate\Database\Eloquent\ModelNotFoundException: No query results for model [App\Models\Person].`) {
			t.Errorf("listener: exception %q", got)
		}
		f.push(t, "default", listener(1))
		runOnce(t, w)
		f.wantRows(t, 0, 1)

		f.push(t, "default", mail(2, true))
		runOnce(t, w)
		f.wantRows(t, 0, 1)

		notification := payload.NewObject(`Illuminate\Notifications\SendQueuedNotifications`).
			Set("notifiables", modelID(`App\Models\Person`, payload.NewList(int64(1), int64(2)))).
			Set("notification", payload.NewObject(`App\Notifications\Shipped`).Set("message", "shipped")).Set("channels", payload.NewList("mail"))
		f.push(t, "default", wrapperEnvelope(t, notification, `App\Notifications\Shipped`))
		runOnce(t, w)
		f.wantRows(t, 0, 1)

		if got := len(ran[`App\Listeners\RecordShipment`]); got != 1 {
			t.Errorf("the listener ran %d times, want once (its event's model exists once)", got)
		}
		if got := ran[`App\Mail\ShippedMail`]; len(got) != 0 {
			t.Errorf("the mailable whose model is gone ran %d times", len(got))
		}
		if got := ran[`App\Notifications\Shipped`]; len(got) != 1 || got[0] != "[1]" {
			t.Errorf("the notification ran for %v, want once for [1] (person 2 is gone)", got)
		}

		w12 := f.worker(t, func(c *Config) { c.LaravelVersion = "12.0" })
		f.push(t, "default", mail(2, true))
		runOnce(t, w12)
		f.wantRows(t, 0, 2)

		// A listener's own $deleteWhenMissingModels is named in the configuration: it deletes the job
		// before 12.0, and from 12.0 PHP no longer reads the listener's class.
		listed := func(c *Config) {
			c.DeleteWhenMissingModels = map[string]bool{`App\Listeners\RecordShipment`: true}
		}
		f.push(t, "default", listener(2))
		runOnce(t, f.worker(t, listed))
		f.wantRows(t, 0, 2)
		f.push(t, "default", listener(2))
		runOnce(t, f.worker(t, func(c *Config) { listed(c); c.LaravelVersion = "12.0" }))
		f.wantRows(t, 0, 3)
		if got := len(ran[`App\Listeners\RecordShipment`]); got != 1 {
			t.Errorf("the listener ran %d times, want once", got)
		}
	})
}

// TestDeleteWhenMissingModelsByVersion decides deleteWhenMissingModels where each version of PHP does:
// up to 12.x from the class (the displayed one before 12.0, the command's from 12.0), whose default
// Laravel 9.4+ leaves out of the payload, so the configuration names it; from 13.0 from the payload's
// key alone.
func TestDeleteWhenMissingModelsByVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	f.exec(t, "create table people (id integer primary key)")
	f.reg.Register(`App\Jobs\Greet`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error {
		t.Error("a job whose model is gone ran")
		return nil
	}))
	gone := map[string]payload.Value{"person": modelID(`App\Models\Person`, int64(9))}
	withProperty := map[string]payload.Value{"person": modelID(`App\Models\Person`, int64(9)), "deleteWhenMissingModels": true}
	renamed := func(b []byte) []byte { // a class whose displayName() names it otherwise
		return bytes.Replace(b, []byte(`"displayName":"App\\Jobs\\Greet"`), []byte(`"displayName":"Greeting"`), 1)
	}
	listed := map[string]bool{`App\Jobs\Greet`: true}
	for _, tc := range []struct {
		name    string
		version string
		listed  bool
		job     []byte
		deleted bool
	}{
		{"8.x serializes the property", "8.83", false, envelope(t, `App\Jobs\Greet`, "", withProperty), true},
		{"9.4+ leaves the default out", "9.52", false, envelope(t, `App\Jobs\Greet`, "", gone), false},
		{"9.4+ with the class named", "9.52", true, envelope(t, `App\Jobs\Greet`, "", gone), true},
		// On 9.4+ a property in the payload is one the job changed from the class's default, which PHP reads.
		{"9.4+ property set by the job", "9.52", false, envelope(t, `App\Jobs\Greet`, "", withProperty), false},
		{"before 12 PHP reads the displayed class", "11.40", true, renamed(envelope(t, `App\Jobs\Greet`, "", gone)), false},
		{"8.x property of a renamed class", "8.83", false, renamed(envelope(t, `App\Jobs\Greet`, "", withProperty)), false},
		{"12.x reads the command's class", "12.50", true, renamed(envelope(t, `App\Jobs\Greet`, "", gone)), true},
		{"13.x without the payload key", "13.0", true, envelope(t, `App\Jobs\Greet`, "", withProperty), false},
		{"13.x with the payload key", "13.0", false, envelope(t, `App\Jobs\Greet`, `"deleteWhenMissingModels":true`, gone), true},
	} {
		f.push(t, "default", tc.job)
		runOnce(t, f.worker(t, func(c *Config) {
			c.LaravelVersion = tc.version
			if tc.listed {
				c.DeleteWhenMissingModels = listed
			}
		}))
		failed := f.FailedRows(t)
		if got := len(failed) == 0; got != tc.deleted {
			t.Errorf("%s: deleted %v, want %v", tc.name, got, tc.deleted)
		}
		f.wantRows(t, 0, len(failed))
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().FailedJobs))
	}
}

// TestRetryPayloadMissingModels: queue:retry unserializes the command from Laravel 8.21, and a single
// model that is gone stops it with ModelNotFoundException, as PHP's SerializesModels throws; a
// collection missing some of its models is retried, and before 8.21 nothing is looked up.
func TestRetryPayloadMissingModels(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	f.exec(t, "create table people (id integer primary key, name varchar(20))")
	f.exec(t, "insert into people (id, name) values (1, 'ada'), (3, 'lin')")
	build := func(props map[string]payload.Value) []byte {
		cmd := payload.NewObject(`App\Jobs\Greet`)
		for k, v := range props {
			cmd.Set(k, v)
		}
		p, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", Command: cmd})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	person := func(id int64) *payload.Object { return modelID(`App\Models\Person`, id) }
	retry := func(p []byte, version string) error {
		_, _, err := RetryPayload(context.Background(), RetryParams{Payload: p, LaravelVersion: version, Models: f.Conn})
		return err
	}
	if err := retry(build(map[string]payload.Value{"person": person(1), "people": modelID(`App\Models\Person`, payload.NewList(int64(1), int64(2)))}), "8.83"); err != nil {
		t.Errorf("models there, a collection missing one: %v", err)
	}
	err := retry(build(map[string]payload.Value{"person": person(2)}), "8.83")
	if !errors.Is(err, ErrModelNotFound) || !strings.Contains(err.Error(), "No query results for model [App\\Models\\Person].") {
		t.Errorf("a missing model: %v, want ErrModelNotFound with PHP's message", err)
	}
	if err := retry(build(map[string]payload.Value{"person": person(2)}), "8.20"); err != nil {
		t.Errorf("a missing model before 8.21: %v, want no lookup", err)
	}
	var table *ModelTableError
	if err := retry(build(map[string]payload.Value{"invoice": modelID(`App\Models\Invoice`, int64(1))}), "8.83"); !errors.As(err, &table) {
		t.Errorf("a model without a table: %v, want a ModelTableError", err)
	}
}
