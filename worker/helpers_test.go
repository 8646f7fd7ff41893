package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

var bg = context.Background()

// clock is a real clock that tests can move forward, so backoffs and delays pass without waiting.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }
func (c *clock) Unix() int64             { return c.Now().Unix() }

// manualTicker replaces a worker's renewer ticker with ticks the test sends.
type manualTicker chan time.Time

// newManualTicker makes w's renewer tick only when the test calls tick.
func newManualTicker(w *Worker) manualTicker {
	m := make(manualTicker)
	w.renewTicker = func(time.Duration) (<-chan time.Time, func()) { return m, func() {} }
	return m
}

// tick makes the renewer look for due renewals once, and returns after it has: the renewer takes a
// second tick only when it is done with the first.
func (m manualTicker) tick(t *testing.T) {
	t.Helper()
	for range 2 {
		select {
		case m <- time.Now():
		case <-time.After(time.Minute):
			t.Fatal("the renewer does not run")
		}
	}
}

// fixture is one isolated set of Laravel tables with a worker clock and a handler registry.
type fixture struct {
	*queuetest.Setup
	clock *clock
	reg   *handlers.Registry
}

// newFixture creates the tables in db and opens them through Laravel's own claim strategy.
func newFixture(t testing.TB, db testenv.Database) *fixture {
	t.Helper()
	return newStrategyFixture(t, db, laravel.DefaultStrategy)
}

// newStrategyFixture creates the tables in db and opens them through the named claim strategy.
func newStrategyFixture(t testing.TB, db testenv.Database, strategy string) *fixture {
	t.Helper()
	clk := &clock{}
	p := queuetest.OpenParams(db)
	p.Clock = clk.Now
	c := queuetest.Open(t, p)
	if err := laravel.CreateSchema(bg, c, laravel.SchemaParams{}); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	s := &queuetest.Setup{DB: db, Params: p, Conn: c, Strategy: strategy}
	s.Queue = s.NewQueue(t, c)
	return &fixture{Setup: s, clock: clk, reg: handlers.NewRegistry()}
}

// eachStrategy runs fn in parallel subtests, once per claim strategy on each database, each with its
// own tables: what the worker does with a job must not depend on how the job was claimed (and "auto"
// picks batch in production, not Laravel's own delete-retry).
func eachStrategy(t *testing.T, fn func(t *testing.T, f *fixture)) {
	t.Helper()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		for _, strategy := range laravel.Strategies() {
			t.Run(strategy, func(t *testing.T) {
				t.Parallel()
				fn(t, newStrategyFixture(t, testenv.Apart(t, db), strategy))
			})
		}
	})
}

// worker returns a worker over the fixture's tables with test-friendly options, changed by mod.
func (f *fixture) worker(t *testing.T, mod func(*Config)) *Worker {
	t.Helper()
	return f.workerWith(t, mod, nil)
}

// workerWith is worker with its Params changed by pmod too.
func (f *fixture) workerWith(t *testing.T, mod func(*Config), pmod func(*Params)) *Worker {
	t.Helper()
	cfg := Defaults()
	cfg.Sleep = 20 * time.Millisecond
	cfg.Tries = 3
	cfg.Timeout = 0
	cfg.ShutdownGrace = time.Second
	if mod != nil {
		mod(&cfg)
	}
	kr, err := payload.NewKeyring(fixtureAppKey, nil, "AES-256-CBC")
	if err != nil {
		t.Fatal(err)
	}
	p := Params{Queue: f.Queue, Conn: f.Conn, Registry: f.reg, Keyring: kr, Config: cfg, Logger: testLogger(t), Clock: f.clock.Now}
	if pmod != nil {
		pmod(&p)
	}
	w, err := New(p)
	if err != nil {
		t.Fatalf("new worker: %v", err)
	}
	return w
}

const fixtureAppKey = "base64:a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s="

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("ARTISAN_GO_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil)).With("test", t.Name())
	}
	return nil
}

// push inserts a payload on a queue, available now, and returns its id.
func (f *fixture) push(t *testing.T, queue string, payload []byte) int64 {
	t.Helper()
	now := f.clock.Unix()
	id, err := f.Queue.JobPush(bg, &laravel.JobPushParams{Queue: queue, Payload: payload, Now: now, AvailableAt: now})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return id
}

// runOnce runs one job and fails the test on a claim error.
func runOnce(t *testing.T, w *Worker) bool {
	t.Helper()
	found, err := w.RunOnce(bg)
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return found
}

// envelope returns a Laravel 8.83 payload for a job of class with the given extra envelope keys (a JSON
// fragment such as `"maxTries":3`) and command properties.
func envelope(t testing.TB, class, extra string, props map[string]payload.Value) []byte {
	t.Helper()
	cmd := payload.NewObject(class)
	for k, v := range props {
		cmd.Set(k, v)
	}
	cmd.Set("connection", nil).Set("queue", nil).Set("chained", payload.NewList())
	ser, err := payload.Serialize(cmd)
	if err != nil {
		t.Fatal(err)
	}
	cls, _ := json.Marshal(class)
	s, _ := json.Marshal(string(ser))
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Appendf(nil, `{"uuid":%q,"displayName":%s,"job":"Illuminate\\Queue\\CallQueuedHandler@call"%s,"data":{"commandName":%s,"command":%s}}`,
		testUUID(), cls, extra, cls, s)
}

// testUUID returns a random version-4 UUID.
func testUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// failing is a handler that always returns err and counts its calls.
func failing(calls *atomic.Int32, err error) handlers.Handler {
	return handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
		calls.Add(1)
		return err
	})
}

func ok(calls *atomic.Int32) handlers.Handler {
	return failing(calls, nil)
}

// queueLog is a handler that records the queue of every job it runs, in the order they ran.
type queueLog struct {
	mu     sync.Mutex
	queues []string
}

func (l *queueLog) Handle(ctx context.Context, j *handlers.Job) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queues = append(l.queues, j.Queue)
	return nil
}

// String lists the queues, comma-separated.
func (l *queueLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.queues, ",")
}

// wantRows checks the number of jobs and failed_jobs rows (after delete-mark's sweep).
func (f *fixture) wantRows(t *testing.T, jobs, failed int) {
	t.Helper()
	if n := len(f.Rows(t)); n != jobs {
		t.Errorf("jobs rows = %d, want %d", n, jobs)
	}
	if n := f.Count(t, f.Conn.Tables().FailedJobs); n != failed {
		t.Errorf("failed_jobs rows = %d, want %d", n, failed)
	}
}

// wantUntouched checks that the jobs table holds n rows and that none was ever claimed.
func (f *fixture) wantUntouched(t *testing.T, n int) {
	t.Helper()
	rows := f.Rows(t)
	if len(rows) != n {
		t.Fatalf("jobs has %d rows, want %d", len(rows), n)
	}
	for _, r := range rows {
		if r.Attempts != 0 || r.ReservedAt != nil {
			t.Fatalf("row %+v was claimed", r)
		}
	}
}

// onlyRow returns the single jobs row.
func (f *fixture) onlyRow(t *testing.T) queuetest.Row {
	t.Helper()
	rows := f.Rows(t)
	if len(rows) != 1 {
		t.Fatalf("jobs has %d rows, want 1", len(rows))
	}
	return rows[0]
}

// onlyFailed returns the single failed_jobs row.
func (f *fixture) onlyFailed(t *testing.T) queuetest.FailedRow {
	t.Helper()
	rows := f.FailedRows(t)
	if len(rows) != 1 {
		t.Fatalf("failed_jobs has %d rows, want 1", len(rows))
	}
	return rows[0]
}

// exec runs a statement with ? placeholders on the fixture's database.
func (f *fixture) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := queuetest.DB(f.Conn).Exec(queuetest.Rebind(f.Conn, q), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// lockedLog is a log destination safe for concurrent writes and a read.
type lockedLog = testenv.Output
