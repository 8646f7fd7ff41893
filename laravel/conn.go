package laravel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artisan-go/artisan-go/laravel/internal/rawsql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// MariaDB is accepted by Open as a synonym of MySQL, as Laravel 11+ names a separate mariadb driver for
// the same wire protocol and SQL.
const MariaDB Dialect = "mariadb"

// ErrInvalid means a parameter was malformed; the error names the field and the fix.
var ErrInvalid = errors.New("invalid parameter")

// DefaultSQLiteBusyTimeout is how long a SQLite connection waits for another writer before it reports
// ErrBusy. PHP's PDO waits 60 s; a worker prefers to give up sooner and try again on its next loop.
const DefaultSQLiteBusyTimeout = 10 * time.Second

// OpenParams says which database to open. Either DSN (a Go driver DSN: go-sql-driver/mysql form, a pgx
// URL or keyword string, or a SQLite path) or the discrete fields, as in Laravel's config/database.php.
type OpenParams struct {
	Dialect  Dialect // mysql (or mariadb), pgsql, sqlite
	DSN      string  // wins over the discrete fields when set
	Host     string  // default 127.0.0.1
	Port     int     // default 3306 / 5432
	Database string  // database name; for SQLite the file path
	Username string
	Password string
	Socket   string // MySQL unix_socket, or a PostgreSQL socket directory
	Schema   string // PostgreSQL search_path
	// SSL are the connection's TLS settings: PostgreSQL's sslmode, sslrootcert, sslcert and sslkey,
	// and MySQL's CA file; an empty SSLMode is prefer.
	SSL TLSParams

	Tables Tables // zero fields default to DefaultTables
	// TablePrefix is the connection's table prefix (Laravel's prefix key), put before every name of
	// Tables; PrefixIndexes puts it before the names of indexes created here too (prefix_indexes).
	TablePrefix   string
	PrefixIndexes bool

	// ServerVersion overrides the version the server reports, as Laravel's `version` connection key
	// does; it decides the pop lock (see PopLock).
	ServerVersion string
	// ForceForUpdate makes Laravel's own claim (Lock, the delete-retry strategy) use plain FOR UPDATE
	// even where the server has SKIP LOCKED, as a Laravel before 6.14 does. The other strategies still
	// claim with what the server offers, which is safe beside such claims: both lock the rows they
	// take, one waiting for the other's and the other skipping them.
	ForceForUpdate bool

	// CachePrefix is prepended to every cache and cache_locks key (cache.prefix, e.g. "laravel_cache").
	CachePrefix string

	// MaxOpenConns caps the connection pool; 0 leaves database/sql's default (unlimited).
	MaxOpenConns int
	// RequireSQLiteFile makes Open fail, naming the path, when the SQLite file does not exist, instead
	// of creating an empty database there (what a worker pointed at a wrong path should do).
	RequireSQLiteFile bool
	// BusyTimeout is SQLite's busy_timeout; 0 means DefaultSQLiteBusyTimeout.
	BusyTimeout time.Duration
	// Clock gives "now" for batch and cache timestamps and for the claim strategies' own timing (how
	// long a moving id bound stands, when marked rows are swept); nil means time.Now.
	Clock func() time.Time
}

// Conn is an open database with Laravel's queue tables. It is safe for concurrent use.
type Conn struct {
	db          *sqlx.DB
	gate        *writeGate   // SQLite's, which counts the writes (see ConnStats.Writes); nil on servers
	idleGuard   *atomic.Bool // new connections have the server end a transaction idle for idleTxTimeout
	name        Dialect
	d           dialect
	caps        capabilities
	jobs        *JobTable
	tables      Tables
	indexTable  string // the jobs table's name in the names of its indexes (see OpenParams.PrefixIndexes)
	version     string
	engine      string
	cluster     bool   // the server is a node of a Galera cluster
	lock        string // Laravel's pop lock clause, "" on SQLite
	claimLock   string // the server's best pop lock, for the strategies' own claims (see ForceForUpdate)
	cachePrefix string
	tablePrefix string // the connection's table prefix, for tables named outside Tables (Pulse's)
	clock       func() time.Time
	where       string // host and database, for messages
	schema      string // PostgreSQL's search_path as DB_SCHEMA set it, for messages
	floors      idFloors

	failedUUIDMu    sync.Mutex
	failedUUIDKnown bool
	failedUUID      bool

	deadlocks atomic.Int64
	busy      atomic.Int64
	retries   atomic.Int64
	returning atomic.Int64 // claims whose COMMIT went unanswered, their rows being given back
	returned  atomic.Int64 // such returns finished
	unknownMu sync.Mutex
	unknown   map[int64]bool // ids of those rows, which this Conn's claims leave alone meanwhile
	// xactIDSQL and xactStatusSQL read a transaction's id and later whether it committed (see
	// dialect.xactStatus): a claim whose COMMIT went unanswered is then known to have committed or not.
	xactIDSQL, xactStatusSQL string

	leadsMu sync.Mutex
	leads   map[*laneLead]bool // the leads of this Conn's queues held on a session of their own
	pooler  poolerCheck        // whether sessions change between transactions (see TransactionPooled)
}

// ConnStats counts the conflicts a Conn has seen since it was opened.
type ConnStats struct {
	Deadlocks int64 // statements aborted as deadlock victims or serialization failures
	Busy      int64 // lock wait timeouts and SQLITE_BUSY
	Retries   int64 // operations retried after a deadlock
	// Writes counts the transactions and the write statements outside them that took the file's
	// write lock, on SQLite, where every one that changed a row is a commit and a flush to disk; 0 on
	// servers, whose commits this process does not see as such.
	Writes int64
}

// Open connects to the database, checks that it answers, and detects the server version that decides
// the pop lock. Wrong credentials or an unreachable server give an error naming host and database.
func Open(ctx context.Context, p OpenParams) (*Conn, error) {
	p.Tables = p.Tables.withDefaults()
	indexTable := p.Tables.Jobs
	p.Tables = p.Tables.withPrefix(p.TablePrefix)
	if p.PrefixIndexes {
		indexTable = p.Tables.Jobs
	}
	if err := p.Tables.Validate(); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	d, err := dialectFor(p.Dialect)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	p.Dialect = d.name()
	driver, dsn, where, err := d.driverDSN(p)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	guard := new(atomic.Bool)
	db, gate, err := d.openDB(driver, dsn, guard)
	if err != nil {
		return nil, fmt.Errorf("open %s database %s: %w; %s", p.Dialect, where, err, connectHint(err))
	}
	if p.MaxOpenConns > 0 {
		db.SetMaxOpenConns(p.MaxOpenConns)
	}
	idle := 16
	if p.MaxOpenConns > 0 {
		idle = p.MaxOpenConns
	}
	db.SetMaxIdleConns(idle)
	c := &Conn{db: db, gate: gate, idleGuard: guard, name: p.Dialect, d: d, jobs: newJobTable(d, p.Tables.Jobs), tables: p.Tables, indexTable: indexTable, cachePrefix: p.CachePrefix, tablePrefix: p.TablePrefix, clock: p.Clock, where: where, schema: p.Schema}
	if c.clock == nil {
		c.clock = time.Now
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.ping(pctx); err != nil {
		db.Close()
		if pctx.Err() != nil && ctx.Err() == nil {
			// A server that accepts the connection and never answers, or a host that drops packets.
			return nil, fmt.Errorf("connect to %s database %s: no answer within 10 s (%w); %s", p.Dialect, where, err, connectHint(err))
		}
		return nil, fmt.Errorf("connect to %s database %s: %w; %s", p.Dialect, where, err, connectHint(err))
	}
	reported, err := c.serverVersion(pctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("read server version of %s: %w", where, err)
	}
	if err := c.transactionsAllowed(pctx); err != nil {
		db.Close()
		return nil, err
	}
	c.version = reported
	if p.ServerVersion != "" {
		c.version = p.ServerVersion
	}
	c.engine, c.claimLock = d.popLock(c.version)
	c.lock = c.claimLock
	if p.ForceForUpdate && c.lock != "" {
		c.lock = "for update"
	}
	c.caps = d.capabilities(c.engine, c.claimLock)
	if cl, ok := d.(clusterDialect); ok && c.caps.DeleteReturning {
		c.cluster = cl.inCluster(pctx, c.db)
		c.caps.ReturningInTx = c.cluster
	}
	c.xactIDSQL, c.xactStatusSQL = d.xactStatus(reported)
	c.readAttemptsLimit(pctx)
	c.guardIdleTransactions(pctx, idle)
	return c, nil
}

// idleTxTimeout is how long the server keeps a transaction of this process's connections that waits
// for its next statement: past it the server ends the session, and the transaction's locks with it.
// A claim, a completion and the lanes' lead (renewed within half of it) are never idle so long; a
// connection lost mid-transaction across a network that drops packets is, and its server session
// would otherwise hold the rows it locked until the server's TCP keepalive ends it (two hours by
// default), the claims of every worker passing over them.
var idleTxTimeout = newDuration(60 * time.Second)

// newDuration is an atomic duration set to d.
func newDuration(d time.Duration) *atomic.Int64 {
	var v atomic.Int64
	v.Store(int64(d))
	return &v
}

// guardIdleTransactions sets idleTxTimeout on the pool's connections (those it opens from now on,
// and the idle one Open used, closed) where the server has the setting, leaves it off, and is
// reached directly: a server or role that sets a timeout of its own keeps it, and behind a pooler
// such as PgBouncer a connection's setting is not its own.
func (c *Conn) guardIdleTransactions(ctx context.Context, idle int) {
	q := c.d.idleTxSQL(c.engine)
	if q == "" {
		return
	}
	var current int64
	if err := c.db.QueryRowContext(ctx, q).Scan(&current); err != nil || current != 0 {
		return
	}
	if c.d.sessionIDSQL() != "" && c.db.Stats().MaxOpenConnections != 1 {
		if pooled, err := c.TransactionPooled(ctx); err != nil || pooled {
			return
		}
	} else if c.name == Postgres {
		return // one connection: TransactionPooled cannot tell a pooler from the server
	}
	c.idleGuard.Store(true)
	c.db.SetMaxIdleConns(0) // the connections open now reconnect with the setting
	c.db.SetMaxIdleConns(idle)
}

// connectHint says what to check when a connection could not be opened.
func connectHint(err error) string {
	const pooler = "unsupported startup parameter: "
	msg := err.Error()
	i := strings.Index(msg, pooler)
	if i < 0 && (strings.Contains(msg, "failed to configure TLS") || strings.Contains(msg, "x509: ") || strings.Contains(msg, "server does not support TLS")) {
		return "check the connection's TLS settings: on PostgreSQL sslmode and its sslrootcert, sslcert and sslkey files (config/database.php, or the url's options), on MySQL MYSQL_ATTR_SSL_CA"
	}
	if i < 0 {
		return "check that the server is running and DB_HOST, DB_PORT, DB_DATABASE, DB_USERNAME and DB_PASSWORD (or the DSN) are right"
	}
	param, _, _ := strings.Cut(msg[i+len(pooler):], " ")
	if param == "search_path" {
		return "a connection pooler (PgBouncer) refuses search_path when connecting, and would not keep it between transactions: " +
			"unset DB_SCHEMA and set the schema on the server instead (ALTER ROLE <user> SET search_path = <schema>), " +
			"or connect to PostgreSQL directly"
	}
	return fmt.Sprintf("a connection pooler (PgBouncer) refuses %s when connecting: remove it from the DSN and set it on the server instead (ALTER ROLE <user> SET %s = …)", param, param)
}

func hostPort(host string, port, def int) string {
	if host == "" {
		host = "127.0.0.1"
	}
	if port == 0 {
		port = def
	}
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// serverVersion returns the version string as PHP's PDO::ATTR_SERVER_VERSION reports it.
func (c *Conn) serverVersion(ctx context.Context) (string, error) {
	var v string
	err := c.db.QueryRowContext(ctx, c.d.versionSQL()).Scan(&v)
	return v, err
}

// ping checks the connection. A server that answers busy is asked again until ctx ends: on SQLite a
// new connection switches the file to WAL, which another connection's lock can refuse at once
// (SQLITE_BUSY without waiting, where waiting could deadlock).
func (c *Conn) ping(ctx context.Context) error {
	for {
		err := c.db.PingContext(ctx)
		if err == nil || !errors.Is(c.translate(err), ErrBusy) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close ends the claims' probes (see idFloors), gives up the lanes' lead a queue holds (see laneLead)
// and closes the connection pool.
func (c *Conn) Close() error {
	c.floors.close()
	c.leadsMu.Lock()
	leads := slices.Collect(maps.Keys(c.leads))
	c.leadsMu.Unlock()
	for _, l := range leads {
		l.release()
	}
	return c.db.Close()
}

func init() {
	rawsql.Of = func(conn any) rawsql.Handle {
		c := conn.(*Conn)
		return rawsql.Handle{DB: c.db, Quote: c.d.quote, Rebind: c.d.rebind, UpdateReturning: c.caps.UpdateReturning, Lock: c.lock}
	}
}

// Dialect returns the connection's SQL family.
func (c *Conn) Dialect() Dialect { return c.name }

// Where names the database the connection reaches (host, port and database, or the SQLite file),
// without a password, for logs.
func (c *Conn) Where() string { return c.where }

// JobTable returns the connection's jobs table, for writing rows through a transaction of the caller's.
func (c *Conn) JobTable() *JobTable { return c.jobs }

// Tables returns the table names this connection uses.
func (c *Conn) Tables() Tables { return c.tables }

// ServerVersion returns the version string that decided the pop lock: the override if one was given,
// else what the server reported.
func (c *Conn) ServerVersion() string { return c.version }

// Engine returns the engine Laravel's getLockForPopping derives: mysql, mariadb, pgsql or sqlite.
func (c *Conn) Engine() string { return c.engine }

// InCluster reports whether the server is a node of a MariaDB Galera cluster (wsrep_on).
func (c *Conn) InCluster() bool { return c.cluster }

// Lock returns the lock clause appended to claim selects: "FOR UPDATE SKIP LOCKED", "for update", or
// "" on SQLite, where BEGIN IMMEDIATE serializes claims instead.
func (c *Conn) Lock() string { return c.lock }

// Stats returns the conflict counters.
func (c *Conn) Stats() ConnStats {
	return ConnStats{Deadlocks: c.deadlocks.Load(), Busy: c.busy.Load(), Retries: c.retries.Load(), Writes: c.gate.writes()}
}

// now returns the Conn clock in Unix seconds.
func (c *Conn) now() int64 { return c.clock().Unix() }

// PopLock returns the engine name and the lock clause Laravel 8.83's DatabaseQueue::getLockForPopping
// chooses for a server version string: SKIP LOCKED for MySQL >= 8.0.1, MariaDB >= 10.6.0 and PostgreSQL
// >= 9.5 (compared as PHP's version_compare does), plain "for update" otherwise, nothing on SQLite.
func PopLock(d Dialect, version string) (engine, lock string) {
	impl, err := dialectFor(d)
	if err != nil {
		impl = mysqlDialect{} // as before dialects were checked: anything unknown is read as MySQL
	}
	return impl.popLock(version)
}
