package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// demoAppKey is the APP_KEY the encrypted fixture was written with.
const demoAppKey = "base64:a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s="

// demoBatchID is the batch the batch fixture belongs to.
const demoBatchID = "a346ab68-af16-4dcc-adb9-10c0f54940f0"

// demoCachePrefix is Laravel 8's default cache prefix.
const demoCachePrefix = "laravel_cache"

// demoUniqueKey is the lock PHP took when it dispatched the unique fixture (uniqueId() returns reportId).
const demoUniqueKey = `laravel_unique_job:App\Jobs\UniqueReport77`

// demoJobs are the fixtures the demo enqueues, in order.
var demoJobs = []string{"welcome", "podcast", "secret", "flaky", "retry-until", "unique", "chain", "batch", "closure", "raw", "raw-string"}

// demoClock is the worker's clock: real time that the demo moves forward instead of sleeping through
// backoffs.
type demoClock struct{ offset atomic.Int64 }

// Now returns the moved time.
func (c *demoClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func runDemo(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("db", filepath.Join(os.TempDir(), "artisan-go-demo.sqlite"), "SQLite file to create (replaced on each run)")
	verbose := fs.Bool("v", false, "print the worker's log lines")
	if err := parseAsSymfony(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := demo(ctx, *path, *verbose, stdout); err != nil {
		fmt.Fprintf(stderr, "artisan-go demo: %v\n", err)
		return 1
	}
	return 0
}

func demo(ctx context.Context, path string, verbose bool, out io.Writer) error {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("reset %s: %w", path+suffix, err)
		}
	}
	// Laravel's SQLite database is a file the app creates (touch database/database.sqlite).
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	f.Close()
	clk := &demoClock{}
	conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.SQLite, Database: path, CachePrefix: demoCachePrefix, Clock: clk.Now})
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{}); err != nil {
		return err
	}
	q, err := laravel.NewQueue(conn, laravel.QueueParams{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "artisan-go demo: Laravel 8.83 payloads in %s (claim strategy %s)\n\n", path, q.Strategy())

	if err := demoSetup(ctx, conn, q, clk, out); err != nil {
		return err
	}
	reg := demoHandlers(out)
	kr, err := payload.NewKeyring(demoAppKey, nil, "AES-256-CBC")
	if err != nil {
		return err
	}
	cfg := worker.Defaults()
	cfg.Sleep = 0
	cfg.Tries = 1
	cfg.CacheEnabled = true
	// The demo's file holds the queue's tables, not the application's users table that the podcast
	// job's models live in, so they are not looked up before it runs.
	cfg.CheckModels = false
	logOut := io.Discard
	if verbose {
		logOut = out
	}
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	w, err := worker.New(worker.Params{Queue: q, Conn: conn, Registry: reg, Keyring: kr, Config: cfg, Logger: log, Clock: clk.Now})
	if err != nil {
		return err
	}

	fmt.Fprintln(out, "\nWorking the queue (one job at a time; the clock is moved forward past backoffs):")
	for {
		found, err := w.RunOnce(ctx)
		if err != nil {
			return err
		}
		if found {
			continue
		}
		next, ok, err := nextAvailable(ctx, conn, clk.Now().Unix())
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		skip := next - clk.Now().Unix()
		fmt.Fprintf(out, "  … no job ready; moving the clock %d s forward to the next release\n", skip)
		clk.offset.Add(int64(time.Duration(skip) * time.Second))
	}
	return demoSummary(ctx, conn, w.Stats(), out)
}

// demoSetup enqueues the fixtures and creates the batch row and unique lock PHP would have created.
func demoSetup(ctx context.Context, conn *laravel.Conn, q laravel.Queue, clk *demoClock, out io.Writer) error {
	now := clk.Now().Unix()
	if err := conn.BatchCreate(ctx, &laravel.BatchCreateParams{ID: demoBatchID, Name: "import", TotalJobs: 1, CreatedAt: now}); err != nil {
		return err
	}
	if _, err := conn.CacheLockAcquire(ctx, &laravel.CacheLockParams{Key: demoUniqueKey, Owner: "php", TTL: time.Hour}); err != nil {
		return fmt.Errorf("create unique lock: %w", err)
	}
	all := fixtures.Laravel883()
	fmt.Fprintln(out, "Enqueued (payloads written by a real Laravel 8.83 app):")
	for _, name := range demoJobs {
		f, ok := all[name]
		if !ok {
			return fmt.Errorf("fixture %q is missing from the fixtures package", name)
		}
		id, err := q.JobPush(ctx, &laravel.JobPushParams{Queue: "default", Payload: f.Payload, Now: now, AvailableAt: now})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  #%-3d %-12s %s\n", id, name, demoClass(f.Payload))
	}
	return nil
}

// demoClass names a payload's job for display.
func demoClass(raw []byte) string {
	env, err := payload.ParseEnvelope(raw)
	if err != nil {
		return "(unreadable payload)"
	}
	if env.DisplayName != "" {
		return env.DisplayName
	}
	return env.Job
}

// welcomeEmail is the SendWelcomeEmail command, bound by its PHP property names.
type welcomeEmail struct {
	Email  string   `php:"email"`
	UserID int      `php:"userId"`
	Tags   []string `php:"tags"`
}

// uniqueReport handles App\Jobs\UniqueReport, whose PHP uniqueId() returns reportId.
type uniqueReport struct{ out io.Writer }

// Handle builds the report.
func (u uniqueReport) Handle(ctx context.Context, j *handlers.Job) error {
	fmt.Fprintf(u.out, "  ✓ UniqueReport #%s built\n", u.UniqueID(j))
	return nil
}

// UniqueID returns the job's uniqueId, as the PHP class computes it.
func (u uniqueReport) UniqueID(j *handlers.Job) string {
	v, _ := j.Command.Get("reportId")
	return fmt.Sprint(v)
}

// demoHandlers registers Go handlers for some of the fixture classes; the others stay PHP's.
func demoHandlers(out io.Writer) *handlers.Registry {
	reg := handlers.NewRegistry()
	reg.Register(`App\Jobs\SendWelcomeEmail`, handlers.Typed(func(ctx context.Context, j *handlers.Job, m *welcomeEmail) error {
		fmt.Fprintf(out, "  ✓ SendWelcomeEmail to %s (user %d, tags %s)\n", m.Email, m.UserID, strings.Join(m.Tags, ","))
		return nil
	}))
	reg.Register(`App\Jobs\ProcessPodcast`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		var m struct {
			User      payload.ModelIdentifier `php:"user"`
			PublishAt time.Time               `php:"publishAt"`
			Status    string                  `php:"status"`
		}
		if err := payload.Bind(j.Command, &m); err != nil {
			return err
		}
		fmt.Fprintf(out, "  ✓ ProcessPodcast for %s %v, publish at %s, status %s\n", m.User.Class, m.User.ID, m.PublishAt.Format(time.RFC3339), m.Status)
		return nil
	}))
	reg.Register(`App\Jobs\SecretJob`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		token, _ := j.Command.Get("token")
		fmt.Fprintf(out, "  ✓ SecretJob decrypted with APP_KEY (token of %d bytes)\n", len(fmt.Sprint(token)))
		return nil
	}))
	reg.Register(`App\Jobs\FlakyJob`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		fmt.Fprintf(out, "  ✗ FlakyJob attempt %d: upstream returned 503\n", j.Attempts)
		return errors.New("upstream returned 503")
	}))
	reg.Register(`App\Jobs\RetryUntilJob`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		fmt.Fprintln(out, "  ✓ RetryUntilJob ran before its retryUntil deadline")
		return nil
	}))
	reg.Register(`App\Jobs\UniqueReport`, uniqueReport{out})
	reg.Register(`App\Jobs\Noop`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		seq, _ := j.Command.Get("seq")
		fmt.Fprintf(out, "  ✓ chain link %v (job #%d)\n", seq, j.ID)
		return nil
	}))
	reg.Register(`App\Jobs\BatchPart`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		part, _ := j.Command.Get("part")
		fmt.Fprintf(out, "  ✓ BatchPart %v\n", part)
		return nil
	}))
	return reg
}

// nextAvailable returns the earliest available_at of a delayed, unreserved job.
func nextAvailable(ctx context.Context, conn *laravel.Conn, now int64) (int64, bool, error) {
	jobs, err := conn.JobList(ctx, &laravel.JobListParams{})
	if err != nil {
		return 0, false, fmt.Errorf("find delayed jobs: %w", err)
	}
	var next int64
	for _, j := range jobs {
		if j.ReservedAt == 0 && j.AvailableAt > now && (next == 0 || j.AvailableAt < next) {
			next = j.AvailableAt
		}
	}
	return next, next != 0, nil
}

// demoSummary prints what the worker did and what the tables hold now.
func demoSummary(ctx context.Context, conn *laravel.Conn, s worker.Stats, out io.Writer) error {
	fmt.Fprintln(out, "\nSummary")
	fmt.Fprintf(out, "  done                    %d\n", s.Processed)
	fmt.Fprintf(out, "  released for retry      %d\n", s.Released)
	fmt.Fprintf(out, "  failed                  %d\n", s.Failed)
	fmt.Fprintf(out, "  left for PHP workers    %d\n", s.LeftForPHP)
	fmt.Fprintf(out, "  chain links dispatched  %d\n", s.ChainDispatched)

	b, err := conn.BatchFind(ctx, demoBatchID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  batch %s: total %d, pending %d, failed %d, finished %v\n", b.ID, b.TotalJobs, b.PendingJobs, b.FailedJobs, b.FinishedAt != nil)
	_, held, err := conn.CacheLockOwner(ctx, demoUniqueKey)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  unique lock %s released: %v\n", demoUniqueKey, !held)

	fmt.Fprintln(out, "\nfailed_jobs (what `php artisan queue:failed` lists):")
	failed, err := conn.FailedJobList(ctx, &laravel.FailedJobListParams{})
	if err != nil {
		return err
	}
	slices.Reverse(failed) // oldest first, in the order they failed
	for _, f := range failed {
		first, _, _ := strings.Cut(f.Exception, "\n")
		fmt.Fprintf(out, "  %s  %s  %s\n      %s\n", f.UUID, f.Queue, demoClass(f.Payload), first)
	}

	fmt.Fprintln(out, "\njobs left in the table for PHP workers:")
	jobs, err := conn.JobList(ctx, &laravel.JobListParams{})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		fmt.Fprintf(out, "  #%-3d %-8s attempts %d  %s\n", j.ID, j.Queue, j.Attempts, demoClass(j.Payload))
	}
	return nil
}

// dropTime removes the timestamp from log lines, which the demo's moved clock would make confusing.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
