package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/worker"
)

// TestMonologLine renders exception chains as Laravel's handler logs them and compares each line,
// byte for byte, with the one PHP's Monolog (as Laravel's LogManager sets it up) writes for the same
// exceptions: quotes, slashes, backslashes of class names, non-ASCII text, a previous exception.
func TestMonologLine(t *testing.T) {
	t.Parallel()
	php, err := exec.LookPath("php")
	if err != nil {
		testenv.Missing(t, "php is not installed (run .ci/services)")
	}
	if _, err := os.Stat("/usr/share/php/Monolog/autoload.php"); err != nil {
		testenv.Missing(t, "Monolog is not installed: apt-get install php-laravel-framework (or run .ci/services)")
	}
	at := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
	for _, chain := range [][]worker.Throwable{
		{{Class: "RuntimeException", Message: `charge failed: "card" /declined`, File: "/srv/app/handlers.go", Line: 42,
			Trace: []worker.Frame{{File: "/srv/app/handlers.go", Line: 40, Function: "main.(*Charge).Handle"}}}},
		{{Class: `Illuminate\Queue\MaxAttemptsExceededException`, Message: `App\Jobs\Charge has been attempted too many times or run too long. The job may have previously timed out.`, File: "[internal]"}},
		{{Class: "RuntimeException", Message: "outer — déjà vu", File: "/a.go", Line: 3, Trace: []worker.Frame{{File: "/b.go", Line: 9, Function: "main.run"}}},
			{Class: "LogicException", Message: "inner", File: "/c.go", Line: 5}},
	} {
		in, _ := json.Marshal(map[string]any{"env": "production", "date": at.Format("2006-01-02 15:04:05"), "chain": jsonChain(chain)})
		want, err := exec.Command(php, filepath.Join("testdata", "monolog_line.php"), string(in)).Output()
		if err != nil {
			t.Fatalf("php: %v", err)
		}
		if got := monologLine(at, "production", chain); string(got) != string(want) {
			t.Errorf("line for %s:\n got %q\nwant %q", chain[0].Message, got, want)
		}
	}
}

func jsonChain(chain []worker.Throwable) []map[string]any {
	var out []map[string]any
	for _, t := range chain {
		trace := []map[string]any{}
		for _, f := range t.Trace {
			trace = append(trace, map[string]any{"file": f.File, "line": f.Line, "function": f.Function})
		}
		out = append(out, map[string]any{"class": t.Class, "message": t.Message, "file": t.File, "line": t.Line, "trace": trace})
	}
	return out
}

// TestLaravelLogAppendsOnly writes a reported exception to an existing log file after PHP's lines,
// leaves an absent file uncreated, and skips exceptions PHP's worker does not report.
func TestLaravelLogAppendsOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "laravel-{date}.log")
	l := newLaravelLog(path, "local", "UTC", slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.now = func() time.Time { return time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC) }
	file := filepath.Join(dir, "laravel-2026-11-27.log")
	ev := &worker.JobEvent{Err: errBoom{}, Reported: true}
	l.JobFinished(context.Background(), ev)
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("the log file was created (%v)", err)
	}
	if err := os.WriteFile(file, []byte("[2026-11-27 07:59:59] local.INFO: from PHP  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.JobFinished(context.Background(), ev)
	l.JobFinished(context.Background(), &worker.JobEvent{Err: errBoom{}}) // not reported by PHP's worker
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), ".ERROR: boom "); lines != 1 || !strings.HasPrefix(string(b), "[2026-11-27 07:59:59] local.INFO") {
		t.Fatalf("log file:\n%s", b)
	}
}

type errBoom struct{}

func (errBoom) Error() string { return "boom" }

// TestQueueWorkReportsToLaravelLog runs queue:work on a job whose exec route fails, with the
// application's storage/logs/laravel.log beside the .env file (LOG_CHANNEL=single): the failure is
// appended there as PHP's handler writes it, after the line PHP wrote before; with
// log.laravel_file off, nothing is.
func TestQueueWorkReportsToLaravelLog(t *testing.T) {
	t.Parallel()
	for _, off := range []bool{false, true} {
		class := `App\Jobs\ReportedToLog`
		if off {
			class += "Off"
		}
		conn, env := newSQLiteApp(t)
		pushClass(t, conn, class)
		logFile := filepath.Join(filepath.Dir(env), "storage", "logs", "laravel.log")
		if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(logFile, []byte("[2026-11-27 07:59:59] production.INFO: from PHP  \n"), 0o644); err != nil {
			t.Fatal(err)
		}
		lines := "LOG_CHANNEL=single\nAPP_ENV=production"
		if off {
			lines += "\nARTISAN_GO_LOG_LARAVEL_FILE=off"
		}
		envFile := envWith(t, env, "log.env", lines)
		cfg := writeConfig(t, env, "routes:\n  - class: '"+class+"'\n    exec: [\"false\"]\n")
		var out, errb bytes.Buffer
		if code := Do(context.Background(), []string{"queue:work", "--env-file", envFile, "--config", cfg, "--queue", "emails", "--once", "--tries", "1"}, nil, &out, &errb); code != 0 {
			t.Fatalf("exit status %d: %s", code, errb.String())
		}
		b, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(b), "] production.ERROR: ")
		if off && n != 0 || !off && (n != 1 || !strings.Contains(string(b), `{"exception":"[object] (`) || !strings.HasSuffix(string(b), "{main}\n\"} \n")) {
			t.Fatalf("off=%v: laravel.log:\n%s\n%s", off, b, errb.String())
		}
	}
}
