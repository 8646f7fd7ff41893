package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/benchsql"
)

// DefaultDSN returns the DSN the bench uses for a dialect when none is given: a database of its own
// (artisan_go_bench) on the local server, created when missing; for SQLite a fresh file.
func DefaultDSN(d laravel.Dialect) string {
	switch d {
	case laravel.MySQL, laravel.MariaDB:
		return "root@tcp(127.0.0.1:3306)/artisan_go_bench"
	case laravel.Postgres:
		return "postgres://postgres@127.0.0.1:5432/artisan_go_bench?sslmode=disable"
	}
	return ""
}

// env is one database prepared for the bench.
type env struct {
	p        Params
	d        Database
	open     laravel.OpenParams
	admin    *laravel.Conn
	version  string
	payloads [][]byte
	tmp      string
}

func prepare(ctx context.Context, d Database, p Params) (*env, error) {
	if d.Dialect == laravel.MariaDB {
		d.Dialect = laravel.MySQL
	}
	e := &env{p: p, d: d}
	if d.DSN == "" {
		d.DSN = DefaultDSN(d.Dialect)
	}
	if err := benchsql.CreateDatabase(ctx, d.Dialect, d.DSN); err != nil {
		if errors.Is(err, laravel.ErrInvalid) {
			err = fmt.Errorf("%w: %w", ErrParams, err)
		}
		return nil, err
	}
	switch d.Dialect {
	case laravel.MySQL, laravel.Postgres:
	case laravel.SQLite:
		if d.DSN == "" {
			dir, err := os.MkdirTemp("", "artisan-go-bench-")
			if err != nil {
				return nil, fmt.Errorf("bench: %w", err)
			}
			e.tmp = dir
			d.DSN = filepath.Join(dir, "bench.sqlite")
		}
		if f, err := os.OpenFile(d.DSN, os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			return nil, fmt.Errorf("bench: create SQLite file: %w", err)
		} else {
			f.Close()
		}
	default:
		return nil, fmt.Errorf("%w: database %q: use mysql, pgsql or sqlite", ErrParams, d.Dialect)
	}
	e.d = d
	e.open = laravel.OpenParams{Dialect: d.Dialect, DSN: d.DSN, ForceForUpdate: p.LegacyIndex, ServerVersion: p.ServerVersion}
	admin, err := laravel.Open(ctx, e.open)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	e.admin, e.version = admin, admin.ServerVersion()
	p.Progress("%s %s: building %d Laravel 8.83 App\\Jobs\\Noop payloads", d.Dialect, e.version, p.Jobs)
	if e.payloads, err = noopPayloads(p.Jobs); err != nil {
		admin.Close()
		return nil, err
	}
	return e, nil
}

func (e *env) close() {
	e.admin.Close()
	if e.tmp != "" {
		os.RemoveAll(e.tmp)
	}
}

// reset drops and recreates Laravel's tables and the protocol table.
func (e *env) reset(ctx context.Context) error {
	return benchsql.Reset(ctx, e.admin, laravel.SchemaParams{LegacyJobsIndex: e.p.LegacyIndex})
}

// enqueueAll inserts every payload as Laravel's Queue::bulk does (multi-row inserts) and returns the
// ids in enqueue order.
func (e *env) enqueueAll(ctx context.Context, now int64) ([]int64, error) {
	return benchsql.Enqueue(ctx, e.admin, e.payloads, now)
}

// producer enqueues the payloads one by one at a steady rate and records when each became available.
type producer struct {
	mu       sync.Mutex
	ids      []int64
	enqueued map[int64]int64 // id → nanoseconds since the protocol's start, after the insert returned
	pushes   []claimSample   // each insert's start (since the protocol's start) and duration; only the bench's own producer
	err      error
	done     chan struct{}
}

func (e *env) startProducer(ctx context.Context, q laravel.Queue, proto *protocol) *producer {
	pr := &producer{enqueued: map[int64]int64{}, done: make(chan struct{})}
	go func() {
		defer close(pr.done)
		interval := time.Duration(float64(time.Second) / e.p.Rate)
		next := time.Now()
		for _, pl := range e.payloads {
			if d := time.Until(next); d > 0 {
				select {
				case <-ctx.Done():
					pr.err = ctx.Err()
					return
				case <-time.After(d):
				}
			}
			next = next.Add(interval)
			began := time.Now()
			now := began.Unix()
			id, err := q.JobPush(ctx, &laravel.JobPushParams{Queue: "default", Payload: pl, Now: now, AvailableAt: now})
			if err != nil {
				pr.err = err
				return
			}
			at := time.Since(proto.start)
			pr.mu.Lock()
			pr.ids = append(pr.ids, id)
			pr.enqueued[id] = at.Nanoseconds()
			pr.pushes = append(pr.pushes, claimSample{at: began.Sub(proto.start), took: time.Since(began)})
			pr.mu.Unlock()
		}
	}()
	return pr
}

// count returns the rows of a table.
func (e *env) count(ctx context.Context, table string) (int, error) {
	return benchsql.Count(ctx, e.admin, table)
}

// writeProtocol stores the executions in the protocol table and reads back executions and distinct
// jobs from it.
func (e *env) writeProtocol(ctx context.Context, proto *protocol) (executions, distinct int, err error) {
	n := proto.len()
	execs := make([]benchsql.Execution, n)
	for i := range n {
		execs[i] = benchsql.Execution{JobID: proto.ids[i], Worker: int(proto.worker[i]), StartedNS: proto.at[i]}
	}
	return benchsql.WriteProtocol(ctx, e.admin, execs)
}

var errTimeout = errors.New("row timed out")
