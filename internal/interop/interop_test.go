// Package interop checks artisan-go against the real Laravel 8.83 application in testdata/laravel:
// PHP dispatches and Go works, Go fails and PHP retries, Go continues chains and batches that PHP
// finishes, PHP and Go workers share one queue, Go dispatches and PHP works. Every case runs on
// MariaDB, PostgreSQL and SQLite and asserts on the database and on what PHP saw (interop_log).
package interop

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/arraycache"
	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/dispatch"
	"github.com/artisan-go/artisan-go/filecache"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/memcached"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/redislock"
	"github.com/artisan-go/artisan-go/worker"
)

// side is one Laravel application with the Go side wired to it exactly as `artisan-go queue:work
// --env-file` wires itself: configuration read from the app's .env, a connection, a keyring.
type side struct {
	app     *phpapp.App
	cfg     *config.Config
	conn    *laravel.Conn
	keyring *payload.Keyring
	reg     *handlers.Registry
	// strategy is the Go worker's claim strategy; "" chooses as queue:work does.
	strategy string
	// locks releases unique locks, and cache reads and counts cache values, when the app's cache
	// store is Redis.
	locks, cache *redislock.Locks
	// files is the app's cache store when it is the file store, mc when it is memcached.
	files *filecache.Store
	mc    *memcached.Store
	// mcSeen is every key (prefix cut off) either copy of a differential pair has listed in memcached:
	// an lru_crawler metadump can miss an item that clients read meanwhile, so the keys once seen
	// are read by name as well.
	mcSeen map[string]bool
	// goConfig changes the worker configuration of every differential work step (differential_test.go).
	goConfig func(*worker.Config)
	// events, when set, receives the Go worker's job events (the console lines a differential step
	// compares with PHP's).
	events func(worker.RunEvent)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newSide(t *testing.T, db testenv.Database, opts ...phpapp.Option) *side {
	t.Helper()
	app := phpapp.New(t, db, opts...)
	cfg, err := config.Load(config.LoadParams{EnvFile: app.EnvFile()})
	if err != nil {
		t.Fatalf("load %s: %v", app.EnvFile(), err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("validate config from %s: %v", app.EnvFile(), err)
	}
	conn, err := laravel.Open(context.Background(), laravel.OpenParams{
		Dialect: laravel.Dialect(cfg.DB.Driver), Host: cfg.DB.Host, Port: cfg.DB.Port, Database: cfg.DB.Database,
		Username: cfg.DB.Username, Password: cfg.DB.Password, Schema: cfg.DB.Schema, CachePrefix: cfg.Cache.Prefix,
	})
	if err != nil {
		t.Fatalf("open the app's database: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	kr, err := payload.NewKeyring(cfg.App.Key, cfg.App.PreviousKeys, cfg.App.Cipher)
	if err != nil {
		t.Fatalf("keyring: %v", err)
	}
	s := &side{app: app, cfg: cfg, conn: conn, keyring: kr, reg: handlers.NewRegistry()}
	if cfg.Cache.Store == "redis" {
		r := cfg.Cache.Redis
		store, err := redislock.OpenStore(context.Background(), redislock.Params{
			Addr: net.JoinHostPort(r.Host, strconv.Itoa(r.Port)), Password: r.Password,
			Prefix: redislock.LockPrefix(r.Prefix, cfg.Cache.Prefix), ClientPrefix: r.Prefix,
		}, r.LockDB, r.DB)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(store.Close)
		s.locks, s.cache = store.Locks, store.Values
	}
	switch cfg.Cache.Store {
	case "file":
		if s.files, err = filecache.Open(filecache.Params{Dir: cfg.Cache.File.Path, Permission: cfg.Cache.File.Mode()}); err != nil {
			t.Fatal(err)
		}
	case "memcached":
		m := cfg.Cache.Memcached
		p := memcached.Params{Prefix: cfg.Cache.Prefix, Distribution: memcached.Distribution(m.Distribution)}
		for _, sv := range m.Pool() {
			p.Servers = append(p.Servers, memcached.Server{Host: sv.Host, Port: sv.Port, Weight: sv.Weight})
		}
		if s.mc, err = memcached.Open(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.mc.Close() })
	}
	return s
}

// run runs a Go worker over the app's tables with the app's settings, changed by mod, until it stops
// (--stop-when-empty by default), and settles the queue (rows prefetched or marked), as
// `artisan-go queue:work` does. A non-nil clock replaces the worker's clock.
func (s *side) run(t *testing.T, ctx context.Context, mod func(*worker.Config), clock func() time.Time) worker.Stats {
	t.Helper()
	q, _, err := laravel.OpenQueue(ctx, s.conn, laravel.QueueParams{Strategy: s.strategy})
	if err != nil {
		t.Fatal(err)
	}
	c := worker.Defaults()
	c.Connection = s.cfg.Connection
	c.LaravelVersion = s.cfg.LaravelVersion
	c.Sleep = 50 * time.Millisecond
	c.StopWhenEmpty = true
	c.Timeout = 0
	c.Concurrency = 4
	c.ShutdownGrace = 5 * time.Second
	c.CacheEnabled = s.cfg.Cache.Reached() || s.cfg.Cache.InProcess()
	c.DBConnection = s.cfg.DB.Driver
	if mod != nil {
		mod(&c)
	}
	p := worker.Params{Queue: q, Conn: s.conn, Registry: s.reg, Keyring: s.keyring, Config: c, Logger: testLogger(t), Clock: clock, Events: s.events}
	if s.locks != nil {
		p.Locks, p.Cache = s.locks, s.cache
	}
	if s.files != nil {
		p.Locks, p.Cache = s.files, s.files
	}
	if s.mc != nil {
		p.Locks, p.Cache = s.mc, s.mc
	}
	if s.cfg.Cache.InProcess() {
		a := arraycache.New(nil) // each run a process of its own, as each PHP worker's array
		p.Locks, p.Cache = a, a
	}
	w, err := worker.New(p)
	if err != nil {
		t.Fatalf("new worker: %v", err)
	}
	if _, err := w.Run(ctx); err != nil {
		t.Fatalf("go worker: %v", err)
	}
	if err := laravel.Settle(context.WithoutCancel(ctx), q); err != nil {
		t.Fatalf("settle the queue (prefetched rows, marked rows): %v", err)
	}
	return w.Stats()
}

// drain runs a Go worker until the queues are empty.
func (s *side) drain(t *testing.T, ctx context.Context, mod func(*worker.Config)) worker.Stats {
	t.Helper()
	return s.run(t, ctx, mod, nil)
}

// phpDrain runs PHP's own `queue:work --stop-when-empty`.
func (s *side) phpDrain(t *testing.T, ctx context.Context, args ...string) {
	t.Helper()
	if out, err := s.app.Artisan(ctx, append([]string{"queue:work", "database", "--stop-when-empty", "--sleep=0"}, args...)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// record makes a Go handler that writes what Go saw into interop_log with runner "go", and then
// returns the error fail gives for the attempt (nil: success).
func (s *side) record(fail func(job *handlers.Job) error) handlers.Handler {
	return handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
		props := map[string]any{}
		if job.Command != nil {
			for _, p := range job.Command.Props {
				props[p.Name] = json.RawMessage(payload.CanonicalJSON(p.Value))
			}
		} else {
			props["data"] = job.Data
		}
		class := job.Class
		if job.Command == nil {
			class += "@" + job.Method
		}
		if job.Envelope != nil && job.Envelope.DisplayName != "" && job.Envelope.DisplayName != job.Class && job.Command != nil {
			class = job.Envelope.DisplayName // listeners, notifications, mailables: the class PHP records
		}
		err := s.app.Insert(ctx, phpapp.LogEntry{Class: class, UUID: job.UUID, JobID: itoa(job.ID), Attempts: job.Attempts,
			Queue: job.Queue, Runner: "go", Props: props})
		if err != nil {
			return err
		}
		if fail != nil {
			return fail(job)
		}
		return nil
	})
}

// dispatcher returns a Go dispatcher for the app.
func (s *side) dispatcher(t *testing.T) *dispatch.Dispatcher {
	t.Helper()
	d, err := dispatch.ForConn(s.conn, dispatch.Params{LaravelVersion: s.cfg.LaravelVersion, Keyring: s.keyring})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (s *side) log(t *testing.T, ctx context.Context) []phpapp.LogEntry {
	t.Helper()
	entries, err := s.app.Log(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func (s *side) jobs(t *testing.T, ctx context.Context) []phpapp.JobRow {
	t.Helper()
	rows, err := s.app.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func (s *side) failed(t *testing.T, ctx context.Context) []phpapp.FailedRow {
	t.Helper()
	rows, err := s.app.FailedJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func (s *side) artisan(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := s.app.Artisan(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// byClass groups interop_log rows by class.
func byClass(entries []phpapp.LogEntry) map[string][]phpapp.LogEntry {
	m := map[string][]phpapp.LogEntry{}
	for _, e := range entries {
		m[e.Class] = append(m[e.Class], e)
	}
	return m
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// testLogger logs the Go worker to stderr when ARTISAN_GO_TEST_LOG is set.
func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("ARTISAN_GO_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil)).With("test", t.Name())
}
