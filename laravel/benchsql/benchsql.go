// Package benchsql is the SQL of artisan-go's throughput benchmark that is not the queue's own: the
// database and tables it works on, the bulk enqueue, the protocol of executions, and the "bare SQL"
// loop (a minimal batched claim and delete with Laravel's claim predicate) that gives the ceiling the
// strategies are compared with. It lives under laravel/ because only that tree writes SQL.
package benchsql

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jmoiron/sqlx"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/internal/rawsql"
)

// ProtocolTable records every execution: which job, which worker, and when it started.
const ProtocolTable = "bench_protocol"

// creators make a server's database named by a DSN; SQLite's file is made by its caller.
var creators = map[laravel.Dialect]func(ctx context.Context, dsn string) error{
	laravel.MySQL:    createMySQLDatabase,
	laravel.MariaDB:  createMySQLDatabase,
	laravel.Postgres: createPostgresDatabase,
}

// CreateDatabase creates the database a MySQL or PostgreSQL DSN names when it does not exist. Other
// dialects have nothing to create.
func CreateDatabase(ctx context.Context, d laravel.Dialect, dsn string) error {
	if create := creators[d]; create != nil {
		return create(ctx, dsn)
	}
	return nil
}

// createMySQLDatabase creates the DSN's database when it does not exist.
func createMySQLDatabase(ctx context.Context, dsn string) error {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("%w: MySQL DSN %q: %v", laravel.ErrInvalid, dsn, err)
	}
	name := cfg.DBName
	if name == "" {
		return fmt.Errorf("%w: MySQL DSN %q names no database: add one, e.g. root@tcp(127.0.0.1:3306)/artisan_go_bench", laravel.ErrInvalid, dsn)
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
		return fmt.Errorf("%w: PostgreSQL DSN %q: %v", laravel.ErrInvalid, dsn, err)
	}
	name := cfg.Database
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return nil // a keyword DSN: use the database as it is
	}
	u.Path = "/postgres"
	// Unnamed statements: a named one stays on the server connection behind a transaction pooler
	// (PgBouncer) and the next bench's connection, given the same one, fails to prepare it again.
	q := u.Query()
	q.Set("default_query_exec_mode", "exec")
	u.RawQuery = q.Encode()
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

// Reset drops Laravel's tables and the protocol table and creates them again.
func Reset(ctx context.Context, c *laravel.Conn, schema laravel.SchemaParams) error {
	h := rawsql.Of(c)
	t := c.Tables()
	for _, name := range []string{t.Jobs, t.FailedJobs, t.JobBatches, t.Cache, t.CacheLocks, ProtocolTable} {
		if _, err := h.DB.ExecContext(ctx, "drop table if exists "+h.Quote(name)); err != nil {
			return fmt.Errorf("bench: drop %s: %w", name, err)
		}
	}
	if err := laravel.CreateSchema(ctx, c, schema); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	_, err := h.DB.ExecContext(ctx, "create table "+h.Quote(ProtocolTable)+" (job_id bigint not null, worker integer not null, started_ns bigint not null)")
	return err
}

// Enqueue inserts every payload on the default queue as Laravel's Queue::bulk does (multi-row
// inserts) and returns the ids in enqueue order.
func Enqueue(ctx context.Context, c *laravel.Conn, payloads [][]byte, now int64) ([]int64, error) {
	h := rawsql.Of(c)
	cols := "(" + strings.Join([]string{h.Quote("queue"), h.Quote("attempts"), h.Quote("reserved_at"), h.Quote("available_at"), h.Quote("created_at"), h.Quote("payload")}, ", ") + ")"
	for chunk := range slices.Chunk(payloads, 500) {
		var b strings.Builder
		b.WriteString("insert into " + h.Quote(c.Tables().Jobs) + " " + cols + " values ")
		args := make([]any, 0, 6*len(chunk))
		for i, pl := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, 0, null, ?, ?, ?)")
			args = append(args, "default", now, now, string(pl))
		}
		if _, err := h.DB.ExecContext(ctx, h.Rebind(b.String()), args...); err != nil {
			return nil, fmt.Errorf("bench: enqueue: %w", err)
		}
	}
	var ids []int64
	if err := h.DB.SelectContext(ctx, &ids, "select id from "+h.Quote(c.Tables().Jobs)+" order by id"); err != nil {
		return nil, fmt.Errorf("bench: read ids: %w", err)
	}
	return ids, nil
}

// Count returns the rows of a table.
func Count(ctx context.Context, c *laravel.Conn, table string) (int, error) {
	h := rawsql.Of(c)
	var n int
	err := h.DB.QueryRowContext(ctx, "select count(*) from "+h.Quote(table)).Scan(&n)
	return n, err
}

// IDs returns the ids of a table's rows.
func IDs(ctx context.Context, c *laravel.Conn, table string) (map[int64]bool, error) {
	h := rawsql.Of(c)
	rows, err := h.DB.QueryContext(ctx, "select id from "+h.Quote(table))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids[id] = true
	}
	return ids, rows.Err()
}

// Execution is one row of the protocol.
type Execution struct {
	JobID     int64
	Worker    int
	StartedNS int64
}

// WriteProtocol stores the executions in the protocol table and reads back how many executions and
// distinct jobs it holds.
func WriteProtocol(ctx context.Context, c *laravel.Conn, execs []Execution) (executions, distinct int, err error) {
	h := rawsql.Of(c)
	for chunk := range slices.Chunk(execs, 500) {
		var b strings.Builder
		b.WriteString("insert into " + h.Quote(ProtocolTable) + " (job_id, worker, started_ns) values ")
		args := make([]any, 0, 3*len(chunk))
		for i, e := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?)")
			args = append(args, e.JobID, e.Worker, e.StartedNS)
		}
		if _, err := h.DB.ExecContext(ctx, h.Rebind(b.String()), args...); err != nil {
			return 0, 0, fmt.Errorf("bench: write protocol: %w", err)
		}
	}
	err = h.DB.QueryRowContext(ctx, "select count(*), count(distinct job_id) from "+h.Quote(ProtocolTable)).Scan(&executions, &distinct)
	return executions, distinct, err
}

// BareClaim claims up to n rows of the default queue in plain SQL with Laravel's predicate and
// returns their ids: UPDATE … RETURNING where the server has it, else a READ COMMITTED transaction
// that selects with the pop lock and updates by id.
func BareClaim(ctx context.Context, c *laravel.Conn, n int) ([]int64, error) {
	h := rawsql.Of(c)
	now := time.Now().Unix()
	jobs := h.Quote(c.Tables().Jobs)
	pred := fmt.Sprintf("queue = 'default' and ((reserved_at is null and available_at <= %d) or reserved_at <= %d)", now, now-90)
	var ids []int64
	if h.UpdateReturning {
		lock := ""
		if h.Lock != "" {
			lock = " " + h.Lock
		}
		q := fmt.Sprintf("update %s set reserved_at = %d, attempts = attempts + 1 where id in (select id from %s where %s order by id limit %d%s) returning id, payload", jobs, now, jobs, pred, n, lock)
		rows, err := h.DB.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return readIDs(rows, ids)
	}
	err := inReadCommitted(ctx, h.DB, func(tx *sqlx.Tx) error {
		rows, err := tx.QueryContext(ctx, fmt.Sprintf("select id, payload from %s where %s order by id limit %d %s", jobs, pred, n, h.Lock))
		if err != nil {
			return err
		}
		ids, err = readIDs(rows, ids)
		rows.Close()
		if err != nil || len(ids) == 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, fmt.Sprintf("update %s set reserved_at = %d, attempts = attempts + 1 where id in (%s)", jobs, now, idList(ids)))
		return err
	})
	return ids, err
}

// readIDs appends the id of each (id, payload) row to ids; the payload is read as a worker would.
func readIDs(rows *sql.Rows, ids []int64) ([]int64, error) {
	for rows.Next() {
		var id int64
		var payload []byte
		if err := rows.Scan(&id, &payload); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// inReadCommitted runs fn in a READ COMMITTED transaction.
func inReadCommitted(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// BareDelete deletes the claimed rows in one statement, again while the server picks it as a deadlock
// victim.
func BareDelete(ctx context.Context, c *laravel.Conn, ids []int64) error {
	h := rawsql.Of(c)
	for {
		_, err := h.DB.ExecContext(ctx, "delete from "+h.Quote(c.Tables().Jobs)+" where id in ("+idList(ids)+")")
		if err == nil || !Conflict(err) || ctx.Err() != nil {
			return err
		}
	}
}

// Conflict reports a deadlock or busy error, by its text since the bare loop has no driver mapping.
func Conflict(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "deadlock") || strings.Contains(s, "busy") || strings.Contains(s, "locked") || strings.Contains(s, "serializ")
}

func idList(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}
