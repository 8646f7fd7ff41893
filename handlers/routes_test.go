package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/payload"
)

func TestAddRoutesRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		routes []Route
		want   string
	}{
		{"no class", []Route{{Builtin: "noop"}}, "no class"},
		{"no target", []Route{{Class: "A"}}, "has 0 of exec, http and builtin"},
		{"two targets", []Route{{Class: "A", Builtin: "noop", Exec: []string{"true"}}}, "has 2 of"},
		{"unknown builtin", []Route{{Class: "A", Builtin: "sleep"}}, `unknown builtin "sleep"`},
		{"empty program", []Route{{Class: "A", Exec: []string{""}}}, "empty program"},
		{"bad URL", []Route{{Class: "A", HTTP: "127.0.0.1:80/x"}}, "not an http or https URL"},
		{"twice", []Route{{Class: "A", Builtin: "noop"}, {Class: `\a`, Builtin: "noop"}}, "routed twice"},
		{"already registered", []Route{{Class: `App\Jobs\Go`, Builtin: "noop"}}, "already has a handler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NewRegistry()
			r.Register(`App\Jobs\Go`, noop)
			routes := append([]Route{{Class: "Fine", Builtin: "noop"}}, tt.routes...)
			err := AddRoutes(r, routes)
			if !errors.Is(err, ErrRoute) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AddRoutes = %v, want ErrRoute with %q", err, tt.want)
			}
			if _, ok := r.Lookup("Fine"); ok {
				t.Error("a valid route was registered although another was rejected")
			}
		})
	}
}

func TestBuiltinNoop(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	if err := AddRoutes(r, []Route{{Class: `App\Jobs\Ping`, Builtin: "noop"}}); err != nil {
		t.Fatal(err)
	}
	h, ok := r.Lookup(`App\Jobs\Ping`)
	if !ok {
		t.Fatal("not registered")
	}
	job := fixtureJob(t, "welcome")
	if err := h.Handle(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if a, _, _ := job.Action(); a != ActionNone {
		t.Errorf("action %v", a)
	}
}

// routeHandler registers one route and returns its handler.
func routeHandler(t *testing.T, rt Route) Handler {
	t.Helper()
	r := NewRegistry()
	if err := AddRoutes(r, []Route{rt}); err != nil {
		t.Fatalf("AddRoutes: %v", err)
	}
	h, ok := r.Lookup(rt.Class)
	if !ok {
		t.Fatal("route not registered")
	}
	return h
}

// checkDocument asserts the JSON object a route received for the podcast fixture.
func checkDocument(t *testing.T, body []byte) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("the route got %q: %v", body, err)
	}
	cmd, _ := doc["command"].(map[string]any)
	if cmd == nil || cmd["@class"] != `App\Jobs\ProcessPodcast` {
		t.Errorf("command = %v", doc["command"])
	}
	status, _ := cmd["status"].(map[string]any)
	if status["case"] != "Published" {
		t.Errorf("command.status = %v", cmd["status"])
	}
	want := map[string]any{"id": 7.0, "queue": "default", "connection": "database", "attempts": 1.0,
		"uuid": "4c8dff6e-5291-4679-bab1-e9d89f82d58b", "displayName": `App\Jobs\ProcessPodcast`, "commandName": `App\Jobs\ProcessPodcast`}
	for k, v := range want {
		if doc[k] != v {
			t.Errorf("%s = %v, want %v", k, doc[k], v)
		}
	}
}

func TestExecRouteGetsJSON(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "stdin.json")
	h := routeHandler(t, Route{Class: `App\Jobs\ProcessPodcast`, Exec: []string{"sh", "-c", `cat > "$0"`, out}})
	job := fixtureJob(t, "podcast")
	if err := h.Handle(context.Background(), job); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	body, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkDocument(t, body)
}

func TestExecRouteRawJob(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "stdin.json")
	h := routeHandler(t, Route{Class: `App\Handlers\Legacy`, Exec: []string{"sh", "-c", `cat > "$0"`, out}})
	if err := h.Handle(context.Background(), fixtureJob(t, "raw")); err != nil {
		t.Fatal(err)
	}
	body, _ := os.ReadFile(out)
	var doc struct {
		Command *json.RawMessage `json:"command"`
		Job     string           `json:"job"`
		Data    struct {
			Order int `json:"order"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Command != nil || doc.Job != `App\Handlers\Legacy@fire` || doc.Data.Order != 991 {
		t.Errorf("raw job document %s", body)
	}
}

func TestExecRouteFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		code   int
		want   string
	}{
		{"stderr is the message", `cat >/dev/null; printf '  order 991 has no items\n\n' >&2; exit 3`, 3, "order 991 has no items"},
		{"no stderr", `exit 1`, 1, "sh: exit status 1"},
		{"stdout is not the message", `echo progress; echo broken >&2; exit 2`, 2, "broken"},
		{"class named", `printf 'php-exception: App\\Exceptions\\UpstreamDown\nupstream returned 503\n' >&2; exit 4`, 4, "upstream returned 503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := routeHandler(t, Route{Class: "X", Exec: []string{"sh", "-c", tt.script}})
			job := fixtureJob(t, "welcome")
			err := h.Handle(context.Background(), job)
			var ee *ExecError
			if !errors.As(err, &ee) || ee.ExitCode != tt.code || ee.Killed {
				t.Fatalf("Handle = %#v, want exit %d", err, tt.code)
			}
			if err.Error() != tt.want {
				t.Errorf("message %q, want %q", err.Error(), tt.want)
			}
			if want := map[bool]string{true: `App\Exceptions\UpstreamDown`}[tt.name == "class named"]; ee.PHPClass() != want {
				t.Errorf("PHP class %q, want %q", ee.PHPClass(), want)
			}
			if a, _, _ := job.Action(); a != ActionNone {
				t.Errorf("action %v: a failing command is an exception, not a failure", a)
			}
		})
	}
}

func TestExecRouteBoundsStderr(t *testing.T) {
	t.Parallel()
	h := routeHandler(t, Route{Class: "X", Exec: []string{"sh", "-c", `echo FIRST >&2; head -c 200000 /dev/zero | tr '\0' x >&2; echo LAST >&2; exit 1`}})
	err := h.Handle(context.Background(), fixtureJob(t, "welcome"))
	var ee *ExecError
	if !errors.As(err, &ee) {
		t.Fatalf("Handle = %v", err)
	}
	if len(ee.Stderr) > maxMessage+100 || !strings.HasPrefix(ee.Stderr, "FIRST") || !strings.HasSuffix(ee.Stderr, "LAST") || !strings.Contains(ee.Stderr, "bytes cut") {
		t.Errorf("stderr kept %d bytes: %.60q … %.60q", len(ee.Stderr), ee.Stderr, ee.Stderr[max(0, len(ee.Stderr)-60):])
	}
}

func TestExecRouteKilled(t *testing.T) {
	t.Parallel()
	// The shell starts a child and waits: killing only the shell would leave the sleep holding stderr.
	script := `echo started >&2; sleep 60 & wait`
	t.Run("route timeout", func(t *testing.T) {
		t.Parallel()
		h := routeHandler(t, Route{Class: "X", Exec: []string{"sh", "-c", script}, Timeout: 300 * time.Millisecond})
		err := h.Handle(context.Background(), fixtureJob(t, "welcome"))
		var ee *ExecError
		if !errors.As(err, &ee) || !ee.Killed || !strings.Contains(err.Error(), "killed after its timeout") {
			t.Fatalf("Handle = %v, want a killed ExecError", err)
		}
		if !strings.Contains(ee.Stderr, "started") {
			t.Errorf("stderr %q lost", ee.Stderr)
		}
	})
	t.Run("job context", func(t *testing.T) {
		t.Parallel()
		h := routeHandler(t, Route{Class: "X", Exec: []string{"sh", "-c", script}})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := h.Handle(ctx, fixtureJob(t, "welcome"))
		var ee *ExecError
		if !errors.As(err, &ee) || !ee.Killed {
			t.Fatalf("Handle = %v, want a killed ExecError", err)
		}
		// Not a speed target: a generous bound that only fails if the process group survived.
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("Handle returned after %v: the command was not killed", d)
		}
	})
}

func TestExecRouteMissingProgram(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-program")
	// Found when the routes are registered, at start.
	err := AddRoutes(NewRegistry(), []Route{{Class: "X", Exec: []string{missing}}})
	if !errors.Is(err, ErrRoute) || !strings.Contains(err.Error(), "no-such-program") {
		t.Errorf("AddRoutes = %v, want a route error naming the program", err)
	}
	// A program removed after the start is a start error of the job.
	h := &ExecHandler{Argv: []string{missing}}
	err = h.Handle(context.Background(), fixtureJob(t, "welcome"))
	var ee *ExecError
	if err == nil || errors.As(err, &ee) || !strings.Contains(err.Error(), "no-such-program") {
		t.Errorf("Handle = %v, want a start error naming the program", err)
	}
}

// TestExecRouteBackgroundChildKilled: a command that exits 0 leaving a program running in the
// background does not leave it behind: the process group is killed when the command exits.
func TestExecRouteBackgroundChildKilled(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := routeHandler(t, Route{Class: "X", Exec: []string{"/bin/sh", "-c", "sleep 300 >/dev/null 2>&1 </dev/null & echo $! > " + pidFile}})
	if err := h.Handle(context.Background(), fixtureJob(t, "welcome")); err != nil {
		t.Fatalf("Handle = %v", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	// A sleep left alone would run for 300 s.
	if state := waitKilled(strings.TrimSpace(string(b))); state != "" {
		t.Fatalf("background child %s still runs (state %s)", b, state)
	}
}

// waitKilled waits up to 10 s for the process pid to be killed: gone, or a zombie waiting for its
// parent to reap it, once the signal is delivered. It returns "" then, else the state it still has.
func waitKilled(pid string) string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		f := strings.Fields(string(stat))
		if err != nil || len(f) > 2 && f[2] == "Z" {
			return ""
		}
		if time.Now().After(deadline) {
			return f[2]
		}
		time.Sleep(10 * time.Millisecond) // polling the kernel's view of the process
	}
}

// endpoint is a real HTTP server on loopback whose paths answer as their names say.
func endpoint(t *testing.T) (*httptest.Server, chan []byte) {
	t.Helper()
	bodies := make(chan []byte, 10)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /ok", func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
			return
		}
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /unprocessable", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "  order 991 is cancelled  ", http.StatusUnprocessableEntity)
	})
	mux.HandleFunc("POST /busy", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	mux.HandleFunc("POST /moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok", http.StatusFound)
	})
	mux.HandleFunc("POST /named", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(`{"exception": "App\\Exceptions\\UpstreamDown", "message": "upstream returned 503"}`))
	})
	mux.HandleFunc("POST /down", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database unavailable", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("POST /slow", func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hanging up, which cancels r.Context().
		_, _ = io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, bodies
}

func TestHTTPRoute(t *testing.T) {
	t.Parallel()
	srv, bodies := endpoint(t)
	tests := []struct {
		path    string
		timeout time.Duration
		status  int    // the HTTPError's status, 0 for none
		action  Action // what the handler asked for
		err     string // part of the returned error, "" for nil
	}{
		{"/ok", 0, 0, ActionNone, ""},
		{"/unprocessable", 0, 422, ActionFail, ""},
		{"/busy", 0, 429, ActionNone, "429 Too Many Requests: slow down"},
		{"/moved", 0, 302, ActionNone, "302 Found"},
		{"/down", 0, 503, ActionNone, "503 Service Unavailable: database unavailable"},
		{"/named", 0, 502, ActionNone, "upstream returned 503"},
		{"/slow", 200 * time.Millisecond, 0, ActionNone, "deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			h := routeHandler(t, Route{Class: `App\Jobs\ProcessPodcast`, HTTP: srv.URL + tt.path, Timeout: tt.timeout})
			job := fixtureJob(t, "podcast")
			err := h.Handle(context.Background(), job)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Handle = %v, want %q", err, tt.err)
			}
			action, _, failure := job.Action()
			if action != tt.action {
				t.Errorf("action %v, want %v", action, tt.action)
			}
			var he *HTTPError
			switch {
			case tt.status == 0:
			case errors.As(err, &he) || errors.As(failure, &he):
				if he.Status != tt.status {
					t.Errorf("status %d, want %d", he.Status, tt.status)
				}
			default:
				t.Errorf("no HTTPError in %v / %v", err, failure)
			}
			if tt.path == "/unprocessable" && failure.Error() != "POST "+srv.URL+"/unprocessable: 422 Unprocessable Entity: order 991 is cancelled" {
				t.Errorf("failure %q", failure)
			}
			if tt.path == "/named" && err.Error() != "upstream returned 503" {
				t.Errorf("error %q, want the message the endpoint named alone", err)
			}
			if want := map[bool]string{true: `App\Exceptions\UpstreamDown`}[tt.path == "/named"]; he != nil && he.PHPClass() != want {
				t.Errorf("PHP class %q, want %q", he.PHPClass(), want)
			}
			if tt.path == "/ok" {
				checkDocument(t, <-bodies)
			}
		})
	}
}

func TestHTTPRouteUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	h := routeHandler(t, Route{Class: "X", HTTP: url + "/jobs"})
	job := fixtureJob(t, "welcome")
	if err := h.Handle(context.Background(), job); err == nil || !strings.Contains(err.Error(), "http route") {
		t.Errorf("Handle = %v, want a network error", err)
	}
	if a, _, _ := job.Action(); a != ActionNone {
		t.Errorf("action %v: a network error is retried", a)
	}
}

// TestRoutesMirrorConfig keeps handlers.Route convertible from config.Route, and the builtins config
// accepts the ones this package has.
func TestRoutesMirrorConfig(t *testing.T) {
	t.Parallel()
	rt := Route(config.Route{Class: "X", Exec: []string{"true"}, Timeout: time.Second})
	if rt.Class != "X" || rt.Timeout != time.Second {
		t.Errorf("converted %+v", rt)
	}
	for _, b := range config.Builtins {
		if _, ok := builtins[b]; !ok {
			t.Errorf("config accepts builtin %q that handlers lacks", b)
		}
	}
	if len(builtins) != len(config.Builtins) {
		t.Errorf("handlers has %d builtins, config accepts %d", len(builtins), len(config.Builtins))
	}
}

func TestRouteUniqueID(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	err := AddRoutes(r, []Route{
		{Class: `App\Jobs\BuildReport`, Builtin: "noop", UniqueID: "{tenant}-{reportId}", UniqueUntilProcessing: true},
		{Class: `App\Jobs\Plain`, Builtin: "noop", UniqueUntilProcessing: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := r.Lookup(`App\Jobs\BuildReport`)
	u, ok := h.(interface {
		UniqueID(*Job) string
		UniqueUntilProcessing() bool
	})
	if !ok {
		t.Fatalf("route handler %T does not compute unique ids", h)
	}
	job := &Job{Command: payload.NewObject(`App\Jobs\BuildReport`).Set("tenant", "acme").Set("reportId", int64(42))}
	if got := u.UniqueID(job); got != "acme-42" || !u.UniqueUntilProcessing() {
		t.Errorf("UniqueID = %q (until processing %v), want acme-42 (true)", got, u.UniqueUntilProcessing())
	}
	h, _ = r.Lookup(`App\Jobs\Plain`)
	if _, computes := h.(interface{ UniqueID(*Job) string }); computes {
		t.Errorf("a route without unique_id computes ids, hiding a uniqueId property")
	}
	for _, tmpl := range []string{"{reportId", "reportId}", "{}", "{report id}", "a}{b"} {
		if err := AddRoutes(NewRegistry(), []Route{{Class: "X", Builtin: "noop", UniqueID: tmpl}}); !errors.Is(err, ErrRoute) {
			t.Errorf("unique_id %q: err %v, want ErrRoute", tmpl, err)
		}
	}
}
