package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/artisan-go/artisan-go/laravel"
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

const protocolTable = "bench_protocol"

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
	switch d.Dialect {
	case laravel.MySQL:
		if err := createMySQLDatabase(ctx, d.DSN); err != nil {
			return nil, err
		}
	case laravel.Postgres:
		if err := createPostgresDatabase(ctx, d.DSN); err != nil {
			return nil, err
		}
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
	e.open = laravel.OpenParams{Dialect: d.Dialect, DSN: d.DSN, ForceForUpdate: p.LegacyIndex}
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

// createMySQLDatabase creates the DSN's database when it does not exist.
func createMySQLDatabase(ctx context.Context, dsn string) error {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("%w: MySQL DSN %q: %v", ErrParams, dsn, err)
	}
	name := cfg.DBName
	if name == "" {
		return fmt.Errorf("%w: MySQL DSN %q names no database: add one, e.g. root@tcp(127.0.0.1:3306)/artisan_go_bench", ErrParams, dsn)
	}
	cfg.DBName = ""
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "create database if not exists `"+strings.ReplaceAll(name, "`", "")+"` character set utf8mb4 collate utf8mb4_unicode_ci"); err != nil {
		return fmt.Errorf("bench: create database %s on %s: %w", name, cfg.Addr, err)
	}
	return nil
}

// createPostgresDatabase creates the DSN's database when it does not exist, from the postgres
// database of the same server.
func createPostgresDatabase(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("%w: PostgreSQL DSN %q: %v", ErrParams, dsn, err)
	}
	name := cfg.Database
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return nil // a keyword DSN: use the database as it is
	}
	u.Path = "/postgres"
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "select count(*) from pg_database where datname = $1", name).Scan(&n); err != nil {
		return fmt.Errorf("bench: connect to PostgreSQL %s: %w", cfg.Host, err)
	}
	if n == 0 {
		if _, err := db.ExecContext(ctx, `create database "`+strings.ReplaceAll(name, `"`, "")+`"`); err != nil {
			return fmt.Errorf("bench: create database %s: %w", name, err)
		}
	}
	return nil
}

// reset drops and recreates Laravel's tables and the protocol table.
func (e *env) reset(ctx context.Context) error {
	c := e.admin
	t := c.Tables()
	for _, name := range []string{t.Jobs, t.FailedJobs, t.JobBatches, t.Cache, t.CacheLocks, protocolTable} {
		if _, err := c.DB().ExecContext(ctx, "drop table if exists "+c.Q(name)); err != nil {
			return fmt.Errorf("bench: drop %s: %w", name, err)
		}
	}
	if err := laravel.CreateSchema(ctx, c, laravel.SchemaParams{LegacyJobsIndex: e.p.LegacyIndex}); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	_, err := c.DB().ExecContext(ctx, "create table "+c.Q(protocolTable)+" (job_id bigint not null, worker integer not null, started_ns bigint not null)")
	return err
}

// enqueueAll inserts every payload as Laravel's Queue::bulk does (multi-row inserts) and returns the
// ids in enqueue order.
func (e *env) enqueueAll(ctx context.Context, now int64) ([]int64, error) {
	c := e.admin
	cols := "(" + strings.Join([]string{c.Q("queue"), c.Q("attempts"), c.Q("reserved_at"), c.Q("available_at"), c.Q("created_at"), c.Q("payload")}, ", ") + ")"
	for chunk := range slices.Chunk(e.payloads, 500) {
		var b strings.Builder
		b.WriteString("insert into " + c.Q(c.Tables().Jobs) + " " + cols + " values ")
		args := make([]any, 0, 6*len(chunk))
		for i, pl := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, 0, null, ?, ?, ?)")
			args = append(args, "default", now, now, string(pl))
		}
		if _, err := c.DB().ExecContext(ctx, c.Rebind(b.String()), args...); err != nil {
			return nil, fmt.Errorf("bench: enqueue: %w", err)
		}
	}
	var ids []int64
	if err := c.DB().SelectContext(ctx, &ids, "select id from "+c.Q(c.Tables().Jobs)+" order by id"); err != nil {
		return nil, fmt.Errorf("bench: read ids: %w", err)
	}
	return ids, nil
}

// producer enqueues the payloads one by one at a steady rate and records when each became available.
type producer struct {
	mu       sync.Mutex
	ids      []int64
	enqueued map[int64]int64 // id → nanoseconds since the protocol's start, after the insert returned
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
			now := time.Now().Unix()
			id, err := q.JobPush(ctx, &laravel.JobPushParams{Queue: "default", Payload: pl, Now: now, AvailableAt: now})
			if err != nil {
				pr.err = err
				return
			}
			at := time.Since(proto.start).Nanoseconds()
			pr.mu.Lock()
			pr.ids = append(pr.ids, id)
			pr.enqueued[id] = at
			pr.mu.Unlock()
		}
	}()
	return pr
}

// count returns the rows of a table.
func (e *env) count(ctx context.Context, table string) (int, error) {
	var n int
	err := e.admin.DB().QueryRowContext(ctx, "select count(*) from "+e.admin.Q(table)).Scan(&n)
	return n, err
}

// writeProtocol stores the executions in the protocol table and reads back executions and distinct
// jobs from it.
func (e *env) writeProtocol(ctx context.Context, proto *protocol) (executions, distinct int, err error) {
	c := e.admin
	n := proto.len()
	for start := 0; start < n; start += 500 {
		end := min(start+500, n)
		var b strings.Builder
		b.WriteString("insert into " + c.Q(protocolTable) + " (job_id, worker, started_ns) values ")
		args := make([]any, 0, 3*(end-start))
		for i := start; i < end; i++ {
			if i > start {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?)")
			args = append(args, proto.ids[i], proto.worker[i], proto.at[i])
		}
		if _, err := c.DB().ExecContext(ctx, c.Rebind(b.String()), args...); err != nil {
			return 0, 0, fmt.Errorf("bench: write protocol: %w", err)
		}
	}
	err = c.DB().QueryRowContext(ctx, "select count(*), count(distinct job_id) from "+c.Q(protocolTable)).Scan(&executions, &distinct)
	return executions, distinct, err
}

var errTimeout = errors.New("row timed out")
