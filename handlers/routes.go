package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/payload"
)

// Route binds a job class to a handler outside Go code, as the stock binary's YAML routes do. It has
// the fields of config.Route, so a config.Route converts to it directly. Exactly one of Exec, HTTP and
// Builtin is set.
type Route struct {
	// Class is the PHP job class.
	Class string
	// Exec is the argv of a command run once per job, with the job as one JSON object on its standard
	// input. No shell is involved.
	Exec []string
	// HTTP is a URL the job is POSTed to as JSON.
	HTTP string
	// Builtin names a handler compiled in: "noop", which completes the job at once.
	Builtin string
	// Timeout bounds one run of the route, within the job's own timeout; 0 leaves only the job's.
	Timeout time.Duration
	// UniqueID computes the uniqueId of a ShouldBeUnique class whose uniqueId() is a PHP method, from
	// the command's properties: "{reportId}", "{tenant}-{reportId}". The worker needs it to release the
	// unique lock PHP took at dispatch. Empty: the id comes from the payload or a uniqueId property.
	UniqueID string
	// UniqueUntilProcessing marks a ShouldBeUniqueUntilProcessing class: its lock is released as the
	// job starts.
	UniqueUntilProcessing bool
}

// uniqueRoute is a route's handler with the unique-id template of its class.
type uniqueRoute struct {
	Handler
	parts           []string // literal text at even indexes, property names at odd ones
	untilProcessing bool
}

// UniqueID expands the template with the command's properties, cast to strings as PHP casts them.
func (u uniqueRoute) UniqueID(job *Job) string {
	var b strings.Builder
	for i, p := range u.parts {
		if i%2 == 0 {
			b.WriteString(p)
			continue
		}
		v, _ := job.Command.Get(p)
		b.WriteString(payload.StringCast(v))
	}
	return b.String()
}

// UniqueUntilProcessing reports whether the lock goes as the job starts.
func (u uniqueRoute) UniqueUntilProcessing() bool { return u.untilProcessing }

// untilProcessingRoute is the handler of a ShouldBeUniqueUntilProcessing route whose unique id comes
// from the payload or a uniqueId property.
type untilProcessingRoute struct{ Handler }

// UniqueUntilProcessing reports that the lock goes as the job starts.
func (untilProcessingRoute) UniqueUntilProcessing() bool { return true }

// parseUniqueID splits a unique-id template into literal text and {property} names.
func parseUniqueID(tmpl string) ([]string, error) {
	var parts []string
	rest := tmpl
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return nil, fmt.Errorf("unique_id %q has a } without {", tmpl)
			}
			return append(parts, rest), nil
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unique_id %q has a { without }", tmpl)
		}
		name := rest[open+1 : open+end]
		if !propertyName.MatchString(name) {
			return nil, fmt.Errorf("unique_id %q: {%s} is not a property name", tmpl, name)
		}
		if strings.IndexByte(rest[:open], '}') >= 0 {
			return nil, fmt.Errorf("unique_id %q has a } without {", tmpl)
		}
		parts = append(parts, rest[:open], name)
		rest = rest[open+end+1:]
	}
}

// propertyName matches a PHP property name.
var propertyName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ErrRoute is wrapped by the errors AddRoutes returns for a route it cannot add.
var ErrRoute = errors.New("invalid route")

// builtins are the handlers a route's builtin may name.
var builtins = map[string]Handler{
	"noop": HandlerFunc(func(context.Context, *Job) error { return nil }),
}

// AddRoutes registers a handler for each route on r. Nothing is registered when a route is invalid
// (no class, not exactly one of exec/http/builtin, an unknown builtin, a URL that is not http(s), a
// class registered already or twice): the problems are returned joined, each wrapping ErrRoute.
func AddRoutes(r *Registry, routes []Route) error {
	var errs []error
	hs := make([]Handler, len(routes))
	seen := map[string]bool{}
	for i, rt := range routes {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("route %d (%s): %w: %s", i, rt.Class, ErrRoute, fmt.Sprintf(format, args...)))
		}
		k := fold(rt.Class)
		switch _, registered := r.Lookup(rt.Class); {
		case k == "":
			bad("no class")
		case seen[k]:
			bad("the class is routed twice")
		case registered:
			bad("the class already has a handler")
		}
		seen[k] = true
		n := 0
		for _, set := range []bool{len(rt.Exec) > 0, rt.HTTP != "", rt.Builtin != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			bad("has %d of exec, http and builtin; give exactly one", n)
			continue
		}
		switch {
		case len(rt.Exec) > 0:
			if rt.Exec[0] == "" {
				bad("exec has an empty program name")
				continue
			}
			if _, err := exec.LookPath(rt.Exec[0]); err != nil {
				// Found now rather than when the first job of the class runs.
				bad("exec program %q cannot be run (%v); install it, or give its absolute path", rt.Exec[0], err)
				continue
			}
			hs[i] = &ExecHandler{Argv: rt.Exec, Timeout: rt.Timeout}
		case rt.HTTP != "":
			u, err := url.Parse(rt.HTTP)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad("%q is not an http or https URL", rt.HTTP)
				continue
			}
			hs[i] = &HTTPHandler{URL: rt.HTTP, Timeout: rt.Timeout}
		default:
			h, ok := builtins[rt.Builtin]
			if !ok {
				bad("unknown builtin %q; the builtins are: noop", rt.Builtin)
				continue
			}
			hs[i] = h
		}
	}
	for i, rt := range routes {
		switch {
		case hs[i] == nil:
		case rt.UniqueID != "":
			parts, err := parseUniqueID(rt.UniqueID)
			if err != nil {
				errs = append(errs, fmt.Errorf("route %d (%s): %w: %w", i, rt.Class, ErrRoute, err))
				continue
			}
			hs[i] = uniqueRoute{Handler: hs[i], parts: parts, untilProcessing: rt.UniqueUntilProcessing}
		case rt.UniqueUntilProcessing:
			hs[i] = untilProcessingRoute{hs[i]}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for i, rt := range routes {
		r.Register(rt.Class, hs[i])
	}
	return nil
}

// Document returns the JSON object that exec and HTTP routes receive: payload.Document's object (the
// canonical command, or null for raw jobs, and the envelope's keys; raw jobs get "data") plus the row's
// "id", "queue", "connection" and "attempts".
func Document(job *Job) ([]byte, error) {
	var cmd payload.Value
	if job.Command != nil {
		cmd = job.Command
	}
	doc := payload.Document(job.Envelope, cmd)
	doc["id"] = job.ID
	doc["queue"] = job.Queue
	doc["connection"] = job.Connection
	doc["attempts"] = job.Attempts
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode job document: %w", err)
	}
	return b, nil
}

// prepare encodes the job's Document and bounds ctx by a route's timeout (0 adds none).
func prepare(ctx context.Context, job *Job, timeout time.Duration) (context.Context, context.CancelFunc, []byte, error) {
	doc, err := Document(job)
	if err != nil {
		return ctx, func() {}, nil, err
	}
	if timeout <= 0 {
		return ctx, func() {}, doc, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, cancel, doc, nil
}

// maxMessage bounds the stderr text or response body kept as an exception message.
const maxMessage = 4096

// message trims what a boundedBuffer kept and makes it valid UTF-8 (a cut may split a character).
func message(b *boundedBuffer) string {
	return strings.ToValidUTF8(string(bytes.TrimSpace(b.Bytes())), "\uFFFD")
}

// boundedBuffer keeps the first and the last maxMessage/2 bytes written to it: the start of an error
// report and its end, where the error usually is.
type boundedBuffer struct {
	head, tail []byte
	n          int
}

// Write keeps what fits and never fails.
func (b *boundedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.n += n
	if room := maxMessage/2 - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - maxMessage/2; over > 0 {
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

// Bytes returns what was kept, marking how many bytes were left out in the middle.
func (b *boundedBuffer) Bytes() []byte {
	cut := b.n - len(b.head) - len(b.tail)
	if cut == 0 {
		return append(append([]byte(nil), b.head...), b.tail...)
	}
	return fmt.Appendf(nil, "%s\n… %d bytes cut …\n%s", b.head, cut, b.tail)
}

// ExecError is the exception of an exec route whose command exited non-zero or was killed. Its message
// is the command's standard error, trimmed and bounded, as a PHP exception's message would be.
type ExecError struct {
	Program  string // argv[0]
	ExitCode int    // -1 when the command was killed by a signal
	Stderr   string // trimmed, at most about 4 KiB: the start and the end
	Killed   bool   // the job's or the route's timeout passed and the command was killed
	// Class is the PHP exception class the command named on the first line of its standard error
	// ("php-exception: App\Exceptions\UpstreamDown"); that line is not part of Stderr.
	Class string
}

// PHPClass returns the class the command named, or "" for the worker's default.
func (e *ExecError) PHPClass() string { return e.Class }

// execClassLine is the prefix of the first standard error line by which an exec route names the PHP
// class its failure is recorded under.
const execClassLine = "php-exception:"

// phpClassPattern matches a PHP class name, namespaced or not.
var phpClassPattern = regexp.MustCompile(`^\\?[A-Za-z_][A-Za-z0-9_]*(\\[A-Za-z_][A-Za-z0-9_]*)*$`)

// splitClassLine takes a leading "php-exception: Class" line off an exec route's standard error.
func splitClassLine(stderr string) (class, rest string) {
	first, rest, _ := strings.Cut(stderr, "\n")
	name, ok := strings.CutPrefix(first, execClassLine)
	name = strings.TrimSpace(name)
	if !ok || !phpClassPattern.MatchString(name) {
		return "", stderr
	}
	return strings.TrimPrefix(name, `\`), strings.TrimSpace(rest)
}

// Error implements error.
func (e *ExecError) Error() string {
	var what string
	switch {
	case e.Killed:
		what = fmt.Sprintf("%s: killed after its timeout", e.Program)
	case e.ExitCode < 0:
		what = fmt.Sprintf("%s: killed by a signal", e.Program)
	default:
		what = fmt.Sprintf("%s: exit status %d", e.Program, e.ExitCode)
	}
	if e.Stderr == "" || e.Killed {
		if e.Stderr != "" {
			return what + ": " + e.Stderr
		}
		return what
	}
	// The message is the standard error, as the README promises: it is what PHP's failed() hooks and
	// a chain's catch callbacks read from getMessage(); the exit status is in ExitCode.
	return e.Stderr
}

// ExecHandler runs a command for each job: the job's Document on standard input, exit status 0 for
// done, anything else an exception whose message is the standard error. Standard output is discarded,
// so diagnostics belong on standard error. The command, and the process group it starts, are killed
// when the job's context is cancelled (the job's timeout, or the worker stopping) or Timeout passes.
type ExecHandler struct {
	// Argv is the program and its arguments.
	Argv []string
	// Timeout bounds one run; 0 leaves only the job's timeout.
	Timeout time.Duration
}

// execWaitDelay is how long Run waits for the command's output pipes to close after it exits or is
// killed, in case a grandchild still holds them.
const execWaitDelay = 2 * time.Second

// Handle runs the command for one job.
func (h *ExecHandler) Handle(ctx context.Context, job *Job) error {
	ctx, cancel, doc, err := prepare(ctx, job, h.Timeout)
	if err != nil {
		return err
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Argv[0], h.Argv[1:]...)
	cmd.Stdin = bytes.NewReader(doc)
	cmd.Stdout = io.Discard
	var stderr boundedBuffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = execWaitDelay
	killGroup(cmd)
	err = cmd.Run()
	killLeftovers(cmd)
	if err == nil || errors.Is(err, exec.ErrWaitDelay) {
		// ErrWaitDelay: the command exited 0 but something it started still holds its output.
		return nil
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if ctx.Err() != nil {
			return &ExecError{Program: h.Argv[0], ExitCode: -1, Stderr: message(&stderr), Killed: true}
		}
		return fmt.Errorf("exec %s: %w", h.Argv[0], err)
	}
	class, text := splitClassLine(message(&stderr))
	return &ExecError{
		Program:  h.Argv[0],
		ExitCode: ee.ExitCode(),
		Stderr:   text,
		Killed:   ctx.Err() != nil,
		Class:    class,
	}
}

// HTTPError is the result of an HTTP route that did not answer 2xx.
type HTTPError struct {
	URL    string
	Status int    // the response's status code
	Body   string // the response body, trimmed, at most about 4 KiB
	// Class is the PHP exception class named by a JSON answer {"exception": "...", "message": "..."};
	// Body is then the message.
	Class string
}

// PHPClass returns the class the endpoint named, or "" for the worker's default.
func (e *HTTPError) PHPClass() string { return e.Class }

// namedException reads a JSON answer that names a PHP exception class and its message.
func namedException(body string) (class, msg string, ok bool) {
	var v struct {
		Exception string `json:"exception"`
		Message   string `json:"message"`
	}
	if json.Unmarshal([]byte(body), &v) != nil || !phpClassPattern.MatchString(v.Exception) {
		return "", "", false
	}
	return strings.TrimPrefix(v.Exception, `\`), v.Message, true
}

// Error implements error: the endpoint's message alone when it named its exception class, as a PHP
// exception's message is, else the request, the status and the body.
func (e *HTTPError) Error() string {
	if e.Class != "" {
		return e.Body
	}
	s := fmt.Sprintf("POST %s: %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// HTTPHandler POSTs each job's Document as JSON to URL. A 2xx answer completes the job. A 4xx answer
// fails it without retry (the endpoint refused this job; sending it again would not change that),
// except 408 and 429, which ask for a later try. Those, 5xx and 3xx answers, network errors and
// timeouts are exceptions, retried by Laravel's rules.
type HTTPHandler struct {
	// URL is the endpoint.
	URL string
	// Timeout bounds one request; 0 leaves only the job's timeout.
	Timeout time.Duration
	// Client sends the request; nil uses a client that does not follow redirects.
	Client *http.Client
}

// noRedirects is the default HTTP route client. A redirect is answered as an exception rather than
// followed: following it would turn the POST into a GET elsewhere (a login page, say) whose 200 would
// complete a job that never ran.
var noRedirects = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Handle POSTs one job.
func (h *HTTPHandler) Handle(ctx context.Context, job *Job) error {
	ctx, cancel, doc, err := prepare(ctx, job, h.Timeout)
	if err != nil {
		return err
	}
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("http route: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "artisan-go")
	client := h.Client
	if client == nil {
		client = noRedirects
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("http route: %w", err)
	}
	defer resp.Body.Close()
	var body boundedBuffer
	_, err = io.Copy(&body, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	herr := &HTTPError{URL: h.URL, Status: resp.StatusCode, Body: message(&body)}
	if class, msg, ok := namedException(herr.Body); ok {
		herr.Class, herr.Body = class, msg
	}
	if err != nil && herr.Body == "" {
		herr.Body = "reading the body: " + err.Error()
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 &&
		resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
		job.Fail(herr)
		return nil
	}
	return herr
}
