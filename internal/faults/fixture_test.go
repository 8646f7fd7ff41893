package faults_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/leakcheck"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// long runs every fault with more jobs and more runs, and prints the table (make chaos).
var long = flag.Bool("chaos", os.Getenv("ARTISAN_GO_CHAOS") == "1", "run the long fault suite and print its table")

func TestMain(m *testing.M) {
	workerMain()
	flag.Parse()
	// Killed servers and cut connections are what these tests are about: the driver's own log of
	// each broken packet is noise here.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	code := leakcheck.Run(m)
	if *long {
		fmt.Print("\n" + faults.Table())
	}
	os.Exit(code)
}

// size returns short in the short form and full in the long one.
func size(short, full int) int {
	if *long {
		return full
	}
	return short
}

var bg = context.Background()

// ledgerClass is the job class whose handler records each execution in the ledger.
const ledgerClass = `App\Jobs\LedgerJob`

// drain is one set of Laravel tables with good jobs pushed and a ledger of their executions.
type drain struct {
	*queuetest.Setup
	ledger *faults.Ledger
	uuids  []string
}

// newDrain creates the tables in db and pushes n ledger jobs.
func newDrain(t *testing.T, db testenv.Database, schema laravel.SchemaParams, n int) *drain {
	t.Helper()
	p := queuetest.OpenParams(db)
	c := queuetest.Open(t, p)
	if err := laravel.CreateSchema(bg, c, schema); err != nil {
		t.Fatal(err)
	}
	q, _, err := laravel.OpenQueue(bg, c, laravel.QueueParams{Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	d := &drain{Setup: &queuetest.Setup{DB: db, Params: p, Conn: c, Queue: q, Strategy: q.Strategy()}, ledger: faults.NewLedger()}
	d.push(t, n)
	return d
}

// push adds n ledger jobs.
func (d *drain) push(t *testing.T, n int) {
	t.Helper()
	for range n {
		d.uuids = append(d.uuids, d.pushClass(t, ledgerClass))
	}
}

// pushInBatch adds n ledger jobs of the batch id.
func (d *drain) pushInBatch(t *testing.T, n int, id string) {
	t.Helper()
	for range n {
		d.uuids = append(d.uuids, d.pushCommand(t, payload.NewObject(ledgerClass).Set("batchId", id)))
	}
}

// pushClass adds one job of class and returns its uuid.
func (d *drain) pushClass(t *testing.T, class string) string {
	t.Helper()
	return d.pushCommand(t, payload.NewObject(class))
}

// pushCommand adds one job of the command and returns its uuid.
func (d *drain) pushCommand(t *testing.T, cmd *payload.Object) string {
	t.Helper()
	p, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ UUID string }
	_ = json.Unmarshal(p, &env)
	now := time.Now().Unix()
	if _, err := d.Queue.JobPush(bg, &laravel.JobPushParams{Queue: "default", Payload: p, Now: now, AvailableAt: now}); err != nil {
		t.Fatal(err)
	}
	return env.UUID
}

// registry returns handlers for the ledger jobs.
func (d *drain) registry() *handlers.Registry {
	reg := handlers.NewRegistry()
	reg.Register(ledgerClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		d.ledger.Record(j.UUID)
		return nil
	}))
	return reg
}

// worker returns an in-process worker over the drain's tables that stops when the queue is empty,
// with reg's handlers (nil: the ledger jobs').
func (d *drain) worker(t *testing.T, reg *handlers.Registry, mod func(*worker.Config)) *worker.Worker {
	t.Helper()
	cfg := worker.Defaults()
	cfg.Sleep, cfg.Timeout, cfg.Concurrency, cfg.StopWhenEmpty = 50*time.Millisecond, 0, 16, true
	cfg.MemoryMB = 0
	if mod != nil {
		mod(&cfg)
	}
	if reg == nil {
		reg = d.registry()
	}
	w, err := worker.New(worker.Params{Queue: d.Queue, Conn: d.Conn, Registry: reg, Config: cfg, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// runWorker runs w until it stops, and fails the test when it still runs after three minutes.
func runWorker(t *testing.T, w *worker.Worker) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := w.Run(bg); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the worker hangs")
	}
}

// result counts lost, duplicated and wrongly failed jobs from the ledger and the tables.
func (d *drain) result(t *testing.T) faults.Result {
	t.Helper()
	// Idle connections opened before a server restart answer with an error once: the checks below
	// read through new ones.
	db := queuetest.DB(d.Conn)
	db.SetMaxIdleConns(0)
	db.SetMaxIdleConns(2)
	// A pooler in front of a restarted server refuses new logins for a while after one failed
	// (PgBouncer's server_login_retry, 15 s by default), though the worker's connections got through:
	// the checks wait until a new connection answers.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(30 * time.Second); ; <-tick.C {
		err := db.PingContext(bg)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database does not answer new connections 30 s after the drain: %v", err)
		}
	}
	var failed, left []string
	for _, r := range d.FailedRows(t) {
		failed = append(failed, r.UUID)
	}
	for _, r := range d.Rows(t) {
		var env struct{ UUID string }
		_ = json.Unmarshal(r.Payload, &env)
		left = append(left, env.UUID)
		reserved := "null"
		if r.ReservedAt != nil {
			reserved = strconv.FormatInt(*r.ReservedAt, 10)
		}
		t.Logf("left in jobs: id %d, attempts %d, reserved_at %s", r.ID, r.Attempts, reserved)
	}
	return d.ledger.Check(d.uuids, failed, left)
}

// testLogger logs the workers to stderr when ARTISAN_GO_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("ARTISAN_GO_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return nil
}

// env returns the environment that points a worker process at the drain's database and tables.
func (d *drain) env() []string {
	tb := d.Conn.Tables()
	return append(d.DB.Env(),
		"ARTISAN_GO_TABLES_JOBS="+tb.Jobs, "ARTISAN_GO_TABLES_FAILED_JOBS="+tb.FailedJobs,
		"ARTISAN_GO_TABLES_JOB_BATCHES="+tb.JobBatches, "ARTISAN_GO_TABLES_CACHE="+tb.Cache,
		"ARTISAN_GO_TABLES_CACHE_LOCKS="+tb.CacheLocks)
}
