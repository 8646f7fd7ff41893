package laravel

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
)

// errWriterBusy is a write that waited busy_timeout for the one before it on the same Conn; it is
// classified as SQLITE_BUSY is.
var errWriterBusy = errors.New("database is locked: another write of this process held the SQLite file for the whole busy_timeout")

// writeGate lets one write of a Conn's pool at a time reach its SQLite file; the others wait for it in
// Go, in arrival order. Without it the pool's connections meet at the file's write lock, and a writer
// that finds it taken sleeps in SQLite's busy handler (1, 2, 5, 10 … ms) however soon the lock frees:
// a worker's claims and its grouped deletes, which run on connections of their own, kept waking each
// other that way. Claiming one row at a time, 8 in flight, one worker: `delete-mark` / `delete-retry`
// / `optimistic` ran 1,720 / 1,291 / 1,725 jobs/s with the busy handler between them and 4,872 /
// 2,963 / 3,717 serialized in Go. Other processes still meet this one at the file's lock. Reads do
// not pass the gate: WAL lets them run beside the writer.
type writeGate struct {
	token   chan struct{} // holds one value while a write runs
	timeout time.Duration // as long as SQLite's busy_timeout would wait
	entered atomic.Int64  // writes let through
}

func newWriteGate(timeout time.Duration) *writeGate {
	return &writeGate{token: make(chan struct{}, 1), timeout: timeout}
}

// enter waits for the gate: until the write before it is done, ctx ends, or the timeout passes.
func (g *writeGate) enter(ctx context.Context) error {
	select {
	case g.token <- struct{}{}:
		g.entered.Add(1)
		return nil
	default:
	}
	t := time.NewTimer(g.timeout)
	defer t.Stop()
	select {
	case g.token <- struct{}{}:
		g.entered.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errWriterBusy
	}
}

func (g *writeGate) leave() { <-g.token }

// writes returns how many writes the gate let through; 0 for a nil gate (servers).
func (g *writeGate) writes() int64 {
	if g == nil {
		return 0
	}
	return g.entered.Load()
}

// isWrite reports whether a statement run outside a transaction may write: anything but a plain read.
// Every transaction is a write (BEGIN IMMEDIATE, see driverDSN).
func isWrite(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	for _, read := range []string{"select", "explain"} {
		if len(q) >= len(read) && strings.EqualFold(q[:len(read)], read) {
			return false
		}
	}
	return true
}

// openSQLite opens dsn with modernc.org/sqlite behind a writeGate of its own, and returns the gate.
func openSQLite(dsn string, busyTimeout time.Duration) (*sqlx.DB, *writeGate, error) {
	base, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, nil, err
	}
	g := newWriteGate(busyTimeout)
	return sqlx.NewDb(sql.OpenDB(gatedConnector{Connector: base, gate: g}), "sqlite"), g, nil
}

type gatedConnector struct {
	driver.Connector
	gate *writeGate
}

func (c gatedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &gatedConn{inner: conn, gate: c.gate}, nil
}

// gatedConn passes modernc.org/sqlite's connection through, with its writes through the gate.
// database/sql uses a connection from one goroutine at a time, so inTx needs no lock.
type gatedConn struct {
	inner driver.Conn
	gate  *writeGate
	inTx  bool
}

var (
	_ driver.ConnBeginTx        = (*gatedConn)(nil)
	_ driver.ExecerContext      = (*gatedConn)(nil)
	_ driver.QueryerContext     = (*gatedConn)(nil)
	_ driver.ConnPrepareContext = (*gatedConn)(nil)
	_ driver.Pinger             = (*gatedConn)(nil)
	_ driver.SessionResetter    = (*gatedConn)(nil)
	_ driver.Validator          = (*gatedConn)(nil)
)

// Prepare and PrepareContext return the driver's statements unguarded: nothing here prepares, and
// database/sql prepares only when asked to or when a connection cannot run a query directly.
func (c *gatedConn) Prepare(query string) (driver.Stmt, error) { return c.inner.Prepare(query) }

func (c *gatedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.inner.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *gatedConn) Close() error { return c.inner.Close() }

func (c *gatedConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *gatedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.gate.enter(ctx); err != nil {
		return nil, err
	}
	tx, err := c.inner.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		c.gate.leave()
		return nil, err
	}
	c.inTx = true
	return &gatedTx{inner: tx, conn: c}, nil
}

func (c *gatedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if !c.inTx && isWrite(query) {
		if err := c.gate.enter(ctx); err != nil {
			return nil, err
		}
		defer c.gate.leave()
	}
	return c.inner.(driver.ExecerContext).ExecContext(ctx, query, args)
}

// QueryContext holds the gate for a write (UPDATE or DELETE … RETURNING) until its rows are closed.
func (c *gatedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q := c.inner.(driver.QueryerContext)
	if c.inTx || !isWrite(query) {
		return q.QueryContext(ctx, query, args)
	}
	if err := c.gate.enter(ctx); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, query, args)
	if err != nil {
		c.gate.leave()
		return nil, err
	}
	return &gatedRows{Rows: rows, leave: sync.OnceFunc(c.gate.leave)}, nil
}

func (c *gatedConn) Ping(ctx context.Context) error { return c.inner.(driver.Pinger).Ping(ctx) }

func (c *gatedConn) ResetSession(ctx context.Context) error {
	return c.inner.(driver.SessionResetter).ResetSession(ctx)
}

func (c *gatedConn) IsValid() bool { return c.inner.(driver.Validator).IsValid() }

// gatedTx leaves the gate when the transaction ends, whatever its outcome.
type gatedTx struct {
	inner driver.Tx
	conn  *gatedConn
}

func (t *gatedTx) Commit() error {
	defer t.end()
	return t.inner.Commit()
}

func (t *gatedTx) Rollback() error {
	defer t.end()
	return t.inner.Rollback()
}

func (t *gatedTx) end() {
	t.conn.inTx = false
	t.conn.gate.leave()
}

// gatedRows are a write's rows; closing them leaves the gate.
type gatedRows struct {
	driver.Rows
	leave func()
}

func (r *gatedRows) Close() error {
	defer r.leave()
	return r.Rows.Close()
}

func (r *gatedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *gatedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
