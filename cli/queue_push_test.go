package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

// TestQueuePushPHPRuns pushes a job with `artisan-go queue:push --env-file` and runs it with PHP's
// own queue:work, which must see the properties given on the command line.
func TestQueuePushPHPRuns(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		app := phpapp.New(t, db)
		var out, errb bytes.Buffer
		code := Do(ctx, []string{"queue:push", `App\Jobs\Plain`, "--env-file", app.EnvFile(),
			"--json", `{"tags":{"k":"v/w"},"count":2}`, "--prop", "name=from the command line", "--prop", "count=5",
			"--protected", "note=prot", "--private", `secret="007"`, "--queue", "cli", "--tries", "2", "--backoff", "3,4", "--timeout", "9"},
			nil, &out, &errb)
		if code != 0 {
			t.Fatalf("queue:push exit status %d: %s", code, errb.String())
		}
		m := regexp.MustCompile(`id (\d+), uuid ([0-9a-f-]{36})`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("queue:push printed %q, want the id and uuid", out.String())
		}
		rows, err := app.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("jobs has %d rows, want 1", len(rows))
		}
		env, err := payload.ParseEnvelope([]byte(rows[0].Payload))
		if err != nil {
			t.Fatal(err)
		}
		if *env.MaxTries != 2 || *env.Backoff != "3,4" || *env.Timeout != 9 || env.UUID != m[2] || rows[0].Queue != "cli" {
			t.Errorf("pushed envelope %s", rows[0].Payload)
		}
		if _, err := app.Artisan(ctx, "queue:work", "database", "--queue=cli", "--stop-when-empty"); err != nil {
			t.Fatal(err)
		}
		entries, err := app.Log(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Fatalf("PHP ran %d jobs, want 1: %+v", len(entries), entries)
		}
		e := entries[0]
		if e.UUID != m[2] || e.JobID != m[1] || e.Queue != "cli" {
			t.Errorf("PHP ran %+v, want id %s uuid %s on cli", e, m[1], m[2])
		}
		for k, v := range map[string]any{"name": "from the command line", "count": 5.0, "note": "prot", "secret": "007"} {
			if e.Props[k] != v {
				t.Errorf("PHP saw %s = %#v, want %#v", k, e.Props[k], v)
			}
		}
		if tags, _ := e.Props["tags"].(map[string]any); tags["k"] != "v/w" {
			t.Errorf("PHP saw tags = %#v", e.Props["tags"])
		}
	})
}

func TestQueuePushBadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"queue:push"},
		{"queue:push", "A", "B"},
		{"queue:push", "A", "--prop", "novalue"},
		{"queue:push", "A", "--json", "[1,2]"},
		{"queue:push", "A", "--backoff", "soon"},
	} {
		var out, errb bytes.Buffer
		if code := Do(context.Background(), args, nil, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit status %d, stderr %q; want 2 with a message", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:push", `App\Jobs\Plain`, "--config", "/nonexistent/artisan-go.yaml"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "nonexistent") {
		t.Errorf("missing config: exit status %d, stderr %q", code, errb.String())
	}
	// Names PHP cannot load (a doubled backslash, from shell quoting, made PHP's worker die on a
	// redeclared class) and a property given with two visibilities insert nothing.
	conn, env := newSQLiteApp(t)
	for _, args := range [][]string{
		{`App\\Jobs\\Plain`}, {`App\Jobs\`}, {"Foo Bar"}, {"123Bad"},
		{`App\Jobs\Plain`, "--prop", "name=a", "--protected", "name=b"},
	} {
		out.Reset()
		errb.Reset()
		code := Do(context.Background(), append([]string{"queue:push", "--env-file", env}, args...), nil, &out, &errb)
		if code == 0 || errb.Len() == 0 {
			t.Errorf("%v: exit status %d, stderr %q; want a failure with a message", args, code, errb.String())
		}
	}
	var n int
	if err := queuetest.DB(conn).QueryRow("select count(*) from jobs").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d jobs inserted (%v), want none", n, err)
	}
	if code := Do(context.Background(), []string{"queue:push", "--env-file", env, `\App\Jobs\Ünïcode_1`}, nil, &out, &errb); code != 0 {
		t.Fatalf("a leading backslash and non-ASCII letters: exit %d, %s", code, errb.String())
	}
}

// TestQueuePushConnectionAndOptions pushes only onto a database connection (PHP's dispatch() onto
// sync or redis puts nothing in a jobs table), takes --connection as ->onConnection(), --retry-until
// as retryUntil(), needs APP_KEY only to encrypt, and refuses unique options without --unique.
func TestQueuePushConnectionAndOptions(t *testing.T) {
	t.Parallel()
	conn, env := newSQLiteApp(t)
	data, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env, append(data, "QUEUE_CONNECTION=sync\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	push := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Do(context.Background(), append([]string{"queue:push", `App\Jobs\Plain`, "--env-file", env}, args...), nil, &out, &errb)
		return code, out.String(), errb.String()
	}
	rows := func() []queuetest.Row { return (&queuetest.Setup{Conn: conn}).Rows(t) }
	if code, _, errs := push(); code != 1 || !strings.Contains(errs, "[sync]") || !strings.Contains(errs, "--connection database") || len(rows()) != 0 {
		t.Fatalf("QUEUE_CONNECTION=sync: exit %d, %q, %d rows; want 1, a message naming the connection and --connection, none", code, errs, len(rows()))
	}
	if code, _, errs := push("--connection", "redis"); code != 1 || !strings.Contains(errs, "[redis]") || len(rows()) != 0 {
		t.Fatalf("--connection redis: exit %d, %q, %d rows", code, errs, len(rows()))
	}
	for _, args := range [][]string{{"--unique-id", "7"}, {"--unique-for", "60"}, {"--retry-until", "-5"}} {
		if code, _, errs := push(append(args, "--connection", "database")...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, %q; want 2 with a message", args, code, errs)
		}
	}
	if code, _, errs := push("--connection", "database", "--encrypt"); code != 1 || !strings.Contains(errs, "APP_KEY") || len(rows()) != 0 {
		t.Fatalf("--encrypt without APP_KEY: exit %d, %q, %d rows", code, errs, len(rows()))
	}
	before := time.Now().Unix()
	if code, _, errs := push("--connection", "database", "--retry-until", "300"); code != 0 {
		t.Fatalf("--connection database: exit %d, %s", code, errs)
	}
	r := rows()
	if len(r) != 1 {
		t.Fatalf("%d rows, want 1", len(r))
	}
	envl, err := payload.ParseEnvelope([]byte(r[0].Payload))
	if err != nil {
		t.Fatal(err)
	}
	if envl.RetryUntil == nil || *envl.RetryUntil < before+300 || *envl.RetryUntil > time.Now().Unix()+300 {
		t.Errorf("--retry-until 300: retryUntil %v, want now + 300", envl.RetryUntil)
	}
	if cmd, err := payload.DecodeCommand(envl, nil); err != nil {
		t.Fatal(err)
	} else if v, _ := cmd.Get("connection"); v != "database" {
		t.Errorf("--connection database: the command's connection is %#v, want \"database\" as ->onConnection() sets it", v)
	}
	if code, _, errs := push("--connection", "database", "--unique"); code != 0 || !strings.Contains(errs, "--unique-id") {
		t.Errorf("--unique without an id: exit %d, %q; want 0 and a note on --unique-id", code, errs)
	}
}
