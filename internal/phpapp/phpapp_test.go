package phpapp_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// byClass groups interop_log rows by class.
func byClass(entries []phpapp.LogEntry) map[string][]phpapp.LogEntry {
	m := map[string][]phpapp.LogEntry{}
	for _, e := range entries {
		m[e.Class] = append(m[e.Class], e)
	}
	return m
}

func counts(log map[string][]phpapp.LogEntry) map[string]int {
	m := map[string]int{}
	for k, v := range log {
		m[k] = len(v)
	}
	return m
}

// TestEveryKindRunsOnPHP dispatches one job of every kind from PHP, runs them with PHP's own
// `queue:work --stop-when-empty`, and checks what PHP recorded about each.
func TestEveryKindRunsOnPHP(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		app := phpapp.New(t, db)

		queued := map[string]*phpapp.Dispatched{}
		for _, kind := range phpapp.Kinds {
			var opts []phpapp.DispatchOption
			switch kind {
			case "delayed":
				continue // not due within this test
			case "chain", "batch":
				opts = append(opts, phpapp.Count(3))
			case "flaky":
				opts = append(opts, phpapp.Fail(1), phpapp.Tries(3), phpapp.Backoff(0))
			case "retry-until":
				opts = append(opts, phpapp.Seconds(600))
			case "slow":
				opts = append(opts, phpapp.Seconds(0.1))
			case "unique", "unique-until-processing":
				opts = append(opts, phpapp.Key(kind))
			case "guarded":
				opts = append(opts, phpapp.Middleware("overlap"), phpapp.Key(kind), phpapp.Seconds(0))
			}
			queued[kind] = app.MustDispatch(ctx, kind, opts...)
		}
		if again := app.MustDispatch(ctx, "unique", phpapp.Key("unique")); len(again.Jobs) != 0 {
			t.Errorf("second unique dispatch queued %v while the first is pending", again.Jobs)
		}
		if n := len(queued["chain"].Jobs); n != 1 {
			t.Errorf("chain queued %d rows, want only its first step", n)
		}
		if queued["batch"].Batch == "" || len(queued["batch"].Jobs) != 3 {
			t.Errorf("batch dispatch = %+v, want a batch id and 3 jobs", queued["batch"])
		}

		lock := app.UniqueLockKey(`App\Jobs\Unique`, "unique")
		if held, err := app.LockHeld(ctx, lock); err != nil || !held {
			t.Errorf("lock %q held = %v, %v; want held while the job is queued", lock, held, err)
		}

		w := app.StartWorker(ctx, "--stop-when-empty", "--sleep=0")
		if err := w.Wait(); err != nil {
			t.Fatal(err)
		}

		entries, err := app.Log(ctx)
		if err != nil {
			t.Fatal(err)
		}
		log := byClass(entries)
		for _, e := range entries {
			if e.Runner != "php" {
				t.Errorf("row %d runner = %q, want php", e.ID, e.Runner)
			}
		}
		one := func(class string) phpapp.LogEntry {
			t.Helper()
			if len(log[class]) != 1 {
				t.Fatalf("interop_log has %d rows for %s, want 1; rows by class: %v", len(log[class]), class, counts(log))
			}
			return log[class][0]
		}

		plain := one(`App\Jobs\Plain`)
		if plain.UUID != queued["plain"].Jobs[0].UUID || plain.Attempts != 1 || plain.Queue != "default" {
			t.Errorf("plain row = %+v, want uuid %s, attempts 1, queue default", plain, queued["plain"].Jobs[0].UUID)
		}
		want := map[string]any{"name": "plain-1", "count": 1.0, "ratio": 1.5, "enabled": true, "nothing": nil,
			"note": "protected ünïcode", "secret": "private"}
		for k, v := range want {
			if got, ok := plain.Props[k]; !ok || got != v {
				t.Errorf("plain prop %s = %#v, want %#v", k, got, v)
			}
		}

		if secret := one(`App\Jobs\Secret`); secret.Props["password"] != "hunter2" || secret.Props["label"] != "secret-1" {
			t.Errorf("encrypted job props = %v", secret.Props)
		}

		model := one(`App\Jobs\WithModel`)
		user, _ := model.Props["user"].(map[string]any)
		if user == nil || user["key"] != float64(queued["model"].Users[0]) {
			t.Errorf("model job user = %v, want key %d", model.Props["user"], queued["model"].Users[0])
		}

		if flaky := log[`App\Jobs\Flaky`]; len(flaky) != 2 || flaky[0].Attempts != 1 || flaky[1].Attempts != 2 || flaky[0].UUID != flaky[1].UUID {
			t.Errorf("flaky rows = %+v, want attempts 1 then 2 with one uuid", flaky)
		}
		if rel := log[`App\Jobs\Releasing`]; len(rel) != 2 || rel[1].Attempts != 2 {
			t.Errorf("releasing rows = %+v, want two runs", rel)
		}
		one(`App\Jobs\Failing`)
		one(`App\Jobs\Failing@failed`)
		one(`App\Jobs\RetryUntil`)
		one(`App\Jobs\Slow`)
		one(`App\Jobs\Unique`)
		if held, err := app.LockHeld(ctx, lock); err != nil || held {
			t.Errorf("lock %q held = %v, %v; want released after the job ran", lock, held, err)
		}
		one(`App\Jobs\UniqueUntilProcessing`)
		one(`App\Jobs\Guarded`)

		chain := log[`App\Jobs\ChainLink`]
		if len(chain) != 3 {
			t.Fatalf("chain ran %d steps, want 3", len(chain))
		}
		for i, e := range chain {
			if e.Props["step"] != float64(i+1) || e.Props["chainedCount"] != float64(2-i) {
				t.Errorf("chain step %d props = %v", i+1, e.Props)
			}
		}
		if len(log[`App\Jobs\BatchMember`]) != 3 {
			t.Errorf("batch ran %d members, want 3", len(log[`App\Jobs\BatchMember`]))
		}
		for _, cb := range []string{"batch.then", "batch.finally"} {
			if e := one(cb); e.Props["batch"] != queued["batch"].Batch {
				t.Errorf("%s props = %v, want batch %s", cb, e.Props, queued["batch"].Batch)
			}
		}
		if len(log["batch.catch"]) != 0 {
			t.Errorf("batch.catch ran for a batch without failures")
		}
		batch, err := app.FindBatch(ctx, queued["batch"].Batch)
		if err != nil {
			t.Fatal(err)
		}
		if batch == nil || batch.TotalJobs != 3 || batch.PendingJobs != 0 || !batch.Finished {
			t.Errorf("batch = %+v, want 3 jobs, none pending, finished", batch)
		}

		if e := one(`App\Listeners\RecordShipment`); e.Props["orderId"] != 1.0 {
			t.Errorf("listener props = %v", e.Props)
		}
		if e := one(`App\Notifications\Shipped`); e.Props["notifiable"] != float64(queued["notification"].Users[0]) {
			t.Errorf("notification props = %v", e.Props)
		}
		if e := one(`App\Mail\ShippedMail`); e.Props["orderId"] != 1.0 {
			t.Errorf("mail props = %v", e.Props)
		}
		if e := one("Closure"); e.Props["n"] != 1.0 || e.UUID != queued["closure"].Jobs[0].UUID {
			t.Errorf("closure row = %+v", e)
		}
		raw := one(`App\Jobs\RawHandler@handle`)
		if data, _ := raw.Props["data"].(map[string]any); data["path"] != "a/b" || raw.UUID != queued["raw"].Jobs[0].UUID {
			t.Errorf("raw row = %+v", raw)
		}
		typed := one(`App\Jobs\Typed`)
		for k, v := range map[string]any{"at": "2024-01-02T03:04:05.000000+01:00", "immutable": "2024-06-30T23:59:58.123456+02:00",
			"status": `App\Enums\Status:Active`} {
			if typed.Props[k] != v {
				t.Errorf("typed prop %s = %#v, want %#v", k, typed.Props[k], v)
			}
		}
		if _, ok := log[`App\Jobs\Noop`]; ok {
			t.Errorf("noop recorded a row")
		}

		var left int
		if err := app.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM jobs").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Errorf("%d jobs left in the jobs table", left)
		}
	})
}

// TestFailedJobCommands fails a job under PHP's worker and drives queue:failed, queue:retry and
// queue:forget on it.
func TestFailedJobCommands(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		app := phpapp.New(t, db)
		d := app.MustDispatch(ctx, "failing", phpapp.Count(2), phpapp.OnQueue("critical"))
		if _, err := app.Work(ctx, "--queue=critical"); err != nil {
			t.Fatal(err)
		}
		failed, err := app.FailedJobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(failed) != 2 || failed[0].Connection != "database" || failed[0].Queue != "critical" ||
			!strings.Contains(failed[0].Exception, "failing 1") || failed[0].FailedAt == "" {
			t.Errorf("failed_jobs = %+v", failed)
		}
		out, err := app.Artisan(ctx, "queue:failed")
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range d.Jobs {
			if !strings.Contains(out, j.UUID) {
				t.Errorf("queue:failed does not list %s:\n%s", j.UUID, out)
			}
		}
		if !strings.Contains(out, `App\Jobs\Failing`) || !strings.Contains(out, "critical") {
			t.Errorf("queue:failed output lacks the class or queue:\n%s", out)
		}

		if _, err := app.Artisan(ctx, "queue:retry", d.Jobs[0].UUID); err != nil {
			t.Fatal(err)
		}
		if _, err := app.Artisan(ctx, "queue:forget", d.Jobs[1].UUID); err != nil {
			t.Fatal(err)
		}
		jobs, err := app.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 || jobs[0].UUID() != d.Jobs[0].UUID || jobs[0].Queue != "critical" || jobs[0].Attempts != 0 {
			t.Errorf("after queue:retry, jobs = %+v, want one row on critical with uuid %s and no attempts", jobs, d.Jobs[0].UUID)
		}
		if out, _ := app.Artisan(ctx, "queue:failed"); !strings.Contains(out, "No failed jobs") {
			t.Errorf("after retry and forget, queue:failed still lists:\n%s", out)
		}
	})
}

// TestEnvFile checks that the .env file holds exactly Env, as Laravel's own .env parser reads it.
func TestEnvFile(t *testing.T) {
	t.Parallel()
	odd := `Interop "quoted" $HOME ${APP_ENV} back\slash # not a comment`
	app := phpapp.New(t, testenv.SQLite(t), phpapp.WithoutSchema(), phpapp.WithEnv("APP_NAME="+odd))
	script := `require 'Illuminate/autoload.php'; echo json_encode(Dotenv\Dotenv::createArrayBacked($argv[1])->load());`
	out, err := exec.Command(app.PHP(), "-r", script, filepath.Dir(app.EnvFile())).Output()
	if err != nil {
		t.Fatalf("php reading %s: %v", app.EnvFile(), err)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	want := map[string]string{}
	for _, kv := range app.Env() {
		k, v, _ := strings.Cut(kv, "=")
		want[k] = v
	}
	if want["APP_NAME"] != odd {
		t.Fatalf("Env APP_NAME = %q, want %q", want["APP_NAME"], odd)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("phpdotenv reads %s = %q from the .env file, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the .env file has %d variables, Env %d", len(got), len(want))
	}
	if out, err := app.Artisan(testContext(t), "env"); err != nil || !strings.Contains(out, "testing") {
		t.Errorf("artisan env = %q, %v; want testing", out, err)
	}
}

// TestRedisUniqueLock keeps a unique job's lock in Redis and checks PHP releases it.
func TestRedisUniqueLock(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	app := phpapp.New(t, testenv.SQLite(t), phpapp.WithRedisCache())
	if d := app.MustDispatch(ctx, "unique", phpapp.Key("r")); len(d.Jobs) != 1 {
		t.Fatalf("first unique dispatch queued %d jobs", len(d.Jobs))
	}
	if d := app.MustDispatch(ctx, "unique", phpapp.Key("r")); len(d.Jobs) != 0 {
		t.Fatalf("second unique dispatch queued %d jobs while the lock is held in Redis", len(d.Jobs))
	}
	if _, err := app.Work(ctx); err != nil {
		t.Fatal(err)
	}
	if d := app.MustDispatch(ctx, "unique", phpapp.Key("r")); len(d.Jobs) != 1 {
		t.Fatalf("after the job ran, a new unique dispatch queued %d jobs; the lock was not released", len(d.Jobs))
	}
}
