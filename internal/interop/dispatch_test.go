package interop

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/dispatch"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

// TestGoDispatchPHPRuns queues jobs from Go and runs them with PHP's own queue:work: PHP sees the
// properties of every visibility, the queue, the tries and backoff, a decrypted encrypted job, and
// nothing of a dispatch whose transaction rolled back.
func TestGoDispatchPHPRuns(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		d := s.dispatcher(t)

		plain := payload.NewObject(`App\Jobs\Plain`).
			Set("name", "from go / ünï").Set("count", int64(7)).Set("ratio", 2.5).Set("enabled", false).Set("nothing", nil).
			Set("tags", payload.NewList("x", int64(2))).
			SetProtected("note", "protected from go").
			SetPrivate(`App\Jobs\Plain`, "secret", "private from go")
		p, err := d.Dispatch(ctx, queuetest.DB(s.conn), dispatch.Job{Command: plain, Queue: "interop", Tries: 4, Backoff: []int{1, 2}, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		secret := payload.NewObject(`App\Jobs\Secret`).Set("label", "sealed").SetPrivate(`App\Jobs\Secret`, "password", "swordfish")
		enc, err := d.Dispatch(ctx, queuetest.DB(s.conn), dispatch.Job{Command: secret, Queue: "interop", Encrypt: true})
		if err != nil {
			t.Fatal(err)
		}
		if env, _ := payload.ParseEnvelope(enc.Payload); !env.CommandEncrypted() {
			t.Errorf("encrypted dispatch wrote a plain command: %s", enc.Payload)
		}
		// A plain *sql.DB works as well as the connection's sqlx handle.
		delayed, err := d.Dispatch(ctx, s.app.DB(), dispatch.Job{Command: payload.NewObject(`App\Jobs\Plain`).Set("name", "later"), Queue: "interop", Delay: time.Hour})
		if err != nil {
			t.Fatal(err)
		}

		tx, err := queuetest.DB(s.conn).BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Dispatch(ctx, tx, dispatch.Job{Command: payload.NewObject(`App\Jobs\Plain`).Set("name", "rolled back"), Queue: "interop"}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if rows := s.jobs(t, ctx); len(rows) != 3 {
			t.Fatalf("jobs has %d rows after 3 dispatches and a rolled-back one, want 3", len(rows))
		}

		s.phpDrain(t, ctx, "--queue=interop")

		log := byClass(s.log(t, ctx))
		if len(log[`App\Jobs\Plain`]) != 1 || len(log[`App\Jobs\Secret`]) != 1 {
			t.Fatalf("PHP ran %v, want one Plain and one Secret (the delayed job waits)", log)
		}
		e := log[`App\Jobs\Plain`][0]
		if e.Runner != "php" || e.UUID != p.UUID || e.Queue != "interop" || e.Attempts != 1 {
			t.Errorf("PHP ran Plain as %+v, want uuid %s on interop", e, p.UUID)
		}
		want := map[string]any{"name": "from go / ünï", "count": 7.0, "ratio": 2.5, "enabled": false, "nothing": nil,
			"note": "protected from go", "secret": "private from go", "queue": "interop", "delay": nil}
		for k, v := range want {
			if got, ok := e.Props[k]; !ok || got != v {
				t.Errorf("PHP saw Plain.%s = %#v, want %#v", k, got, v)
			}
		}
		if tags, _ := e.Props["tags"].([]any); len(tags) != 2 || tags[0] != "x" || tags[1] != 2.0 {
			t.Errorf("PHP saw Plain.tags = %#v", e.Props["tags"])
		}
		if e := log[`App\Jobs\Secret`][0]; e.Props["label"] != "sealed" || e.Props["password"] != "swordfish" || e.UUID != enc.UUID {
			t.Errorf("PHP saw Secret as %+v", e)
		}

		rows := s.jobs(t, ctx)
		if len(rows) != 1 || rows[0].UUID() != delayed.UUID || rows[0].AvailableAt != delayed.AvailableAt.Unix() || rows[0].Attempts != 0 {
			t.Fatalf("after PHP's worker, jobs = %+v, want only the delayed job, untouched", rows)
		}
		if got := rows[0].AvailableAt - rows[0].CreatedAt; got != 3600 {
			t.Errorf("delayed job available %d s after creation, want 3600", got)
		}
		if len(s.failed(t, ctx)) != 0 {
			t.Errorf("failed_jobs is not empty")
		}
	})
}

// TestGoDispatchMatchesPHP dispatches the same job from PHP and from Go and compares the payloads:
// the same keys in the same order and the same command, apart from the uuid.
func TestGoDispatchMatchesPHP(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	s := newSide(t, testenv.SQLite(t))
	php := s.app.MustDispatch(ctx, "plain")
	cmd := payload.NewObject(`App\Jobs\Plain`).Set("name", "plain-1").Set("count", int64(1)).Set("ratio", 1.5).
		Set("enabled", true).Set("nothing", nil).
		Set("tags", payload.NewList().Set("a", int64(1)).Set("b", payload.NewList(true, nil, "x/y"))).
		SetProtected("note", "protected ünïcode").SetPrivate(`App\Jobs\Plain`, "secret", "private")
	goJob, err := s.dispatcher(t).Dispatch(ctx, queuetest.DB(s.conn), dispatch.Job{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	rows := s.jobs(t, ctx)
	if len(rows) != 2 || rows[0].UUID() != php.Jobs[0].UUID {
		t.Fatalf("jobs = %+v", rows)
	}
	phpPayload := []byte(rows[0].Payload)
	goPayload := []byte(rows[1].Payload)
	if len(phpPayload) != len(goPayload) {
		t.Errorf("payload lengths differ: PHP %d, Go %d\nphp: %s\ngo:  %s", len(phpPayload), len(goPayload), phpPayload, goPayload)
	}
	if want := strings.Replace(string(phpPayload), php.Jobs[0].UUID, goJob.UUID, 1); want != string(goPayload) {
		t.Errorf("Go's payload differs from PHP's beyond the uuid\nphp: %s\ngo:  %s", phpPayload, goPayload)
	}
}

// TestGoDispatchReadsJobProperties dispatches a job whose public properties set its tries, backoff,
// maxExceptions, timeout, queue and delay, from PHP and then from Go with the same object and nothing
// else said: the Go row and payload take them as PHP's dispatch() does.
func TestGoDispatchReadsJobProperties(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	s := newSide(t, testenv.SQLite(t))
	php := s.app.MustDispatch(ctx, "flaky", phpapp.Tries(4), phpapp.Backoff(5, 10), phpapp.MaxExceptions(2),
		phpapp.Timeout(30*time.Second), phpapp.OnQueue("emails"), phpapp.Delay(40*time.Second))
	rows := s.jobs(t, ctx)
	if len(rows) != 1 || rows[0].UUID() != php.Jobs[0].UUID {
		t.Fatalf("jobs = %+v", rows)
	}
	env, err := payload.ParseEnvelope([]byte(rows[0].Payload))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := payload.DecodeCommand(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	goJob, err := s.dispatcher(t).Dispatch(ctx, queuetest.DB(s.conn), dispatch.Job{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	rows = s.jobs(t, ctx)
	if len(rows) != 2 || rows[1].Queue != rows[0].Queue || rows[1].AvailableAt-rows[1].CreatedAt != rows[0].AvailableAt-rows[0].CreatedAt {
		t.Fatalf("Go's row %+v, PHP's %+v: want the same queue and delay", rows[1], rows[0])
	}
	keys := func(p string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for _, k := range []string{"maxTries", "maxExceptions", "backoff", "timeout", "failOnTimeout", "retryUntil"} {
			out[k] = m[k]
		}
		return out
	}
	if want, got := keys(rows[0].Payload), keys(rows[1].Payload); !reflect.DeepEqual(want, got) {
		t.Fatalf("Go's envelope %v, PHP's %v (uuid %s)", got, want, goJob.UUID)
	}
}
