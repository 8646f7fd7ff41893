package laravel

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// dialect is everything that differs between the SQL families a Conn speaks: how to connect, quote and
// bind, the statements that have no portable form (insert returning the id, upsert, fenced group
// delete, DDL), how to read the catalog, how native errors translate, and what the server can do
// (capabilities). Strategies and bookkeeping are written once over it and test capabilities, never the
// dialect's name. Each implementation lives in its own file (dialect_mysql.go, dialect_pgsql.go,
// dialect_sqlite.go); a server kind that speaks one of these families with other limits (Galera,
// TiDB, PostgreSQL behind PgBouncer) is one more implementation, usually embedding one of them and
// changing its capabilities.
type dialect interface {
	// name is Laravel's driver name (MariaDB's is mysql's).
	name() Dialect
	// driverDSN returns the database/sql driver name, the DSN and a description of where it points
	// (no password), for messages.
	driverDSN(p OpenParams) (driver, dsn, where string, err error)
	// openDB opens the pool for driverDSN's driver and DSN, and the gate its writes pass where the
	// dialect has one (SQLite's, see writeGate), else nil. Once guard is set, every new connection
	// of the pool has the server end an idle transaction after idleTxTimeout (see idleTxSQL).
	openDB(driver, dsn string, guard *atomic.Bool) (*sqlx.DB, *writeGate, error)
	// idleTxSQL reads the session's timeout of a transaction left idle, in the unit the server keeps
	// it (0: none), on an engine that has one the pool's connections can set when connecting; "".
	idleTxSQL(engine string) string
	// idleTxOffSQL turns that timeout off for the session.
	idleTxOffSQL() string
	// versionSQL reads the version string as PHP's PDO::ATTR_SERVER_VERSION reports it.
	versionSQL() string
	// popLock returns the engine name and the lock clause Laravel's getLockForPopping chooses for a
	// server version (see PopLock).
	popLock(version string) (engine, lock string)
	// capabilities says what the server behind a connection can do, given its engine and pop lock.
	capabilities(engine, lock string) capabilities
	// sequenceUsageSQL reads the sequence that numbers a table's id column ($1, the quoted table
	// name) and whether the user may take numbers from it (USAGE), where inserts need that grant
	// besides the table's; "" where they do not.
	sequenceUsageSQL() string
	// xactStatus returns, for the version the server reports, a statement that reads the running
	// transaction's id (NULL before it has written) and one that says whether the transaction of an id
	// ($1) committed; "" where the server cannot say.
	xactStatus(version string) (idSQL, statusSQL string)
	// leadLockSQL takes, without waiting, a lock named for a jobs table ($1, the table name) in the
	// connected database, which the server drops with the session, and reads 1 when it did, 0 when
	// another session holds it; "" where the dialect has none. With inTx the lock is the
	// transaction's, taken in one that stays open until the lead's next check, which takes it again
	// in a new one: a transaction pooler keeps a server connection with its client only while a
	// transaction is open, and a session's lock would stay behind on a server connection that other
	// clients share.
	leadLockSQL() (q string, inTx bool)
	// idleTimeoutSQL reads, in milliseconds, the soonest the server ends a transaction left open
	// (0: never), for the lead's transaction where leadLockSQL's inTx; "" where not needed.
	idleTimeoutSQL() string
	// leadUnlockSQL gives the lock of leadLockSQL back at once, on the session holding it, with its
	// arguments for the jobs table named; "" where the dialect has none.
	leadUnlockSQL(table string) (string, []any)
	// sessionIDSQL reads the id of the server session running the statement; "" where the dialect
	// has none (see Conn.TransactionPooled).
	sessionIDSQL() string
	// keepNoSnapshot returns the arguments of a statement run in a transaction that stays open (the
	// lead's), so that the session holds no snapshot once it has answered; elsewhere args as they
	// are.
	keepNoSnapshot(args ...any) []any

	// quote quotes a validated identifier.
	quote(name string) string
	// rebind turns ? placeholders into the dialect's.
	rebind(q string) string
	// least is the name of the two-argument minimum function.
	least() string
	// maxTimestamp is the largest Unix time Laravel's available_at column holds (its migration's
	// unsignedInteger): MySQL's int unsigned, PostgreSQL's integer; 0 for no bound (SQLite).
	maxTimestamp() int64
	// encodeText and decodeText store a cache value where a text column cannot hold it as it is (NUL
	// on PostgreSQL), as Laravel's cache store does; elsewhere they return v.
	encodeText(v string) string
	decodeText(v string) string

	// insertID runs insert (already rebound) and returns the new row's id.
	insertID(ctx context.Context, ex Execer, insert string, args []any) (int64, error)
	// upsertSQL is an insert of cols into table (quoted, ? placeholders) that updates the other
	// columns when key already exists.
	upsertSQL(table, key string, cols []string) string
	// lockTakeSQL is one statement that inserts a cache lock (key, owner and expiration, then the
	// current time, as ? placeholders, rebound) or, when its key is taken, takes the row over if the
	// owner is the same or the row has expired, and affects a row exactly when the lock is then the
	// owner's; "" where the dialect has none, and a lock is an insert and, on a duplicate key, an
	// update. Where a failed statement ends the transaction it runs in (PostgreSQL), this one never
	// fails on a taken key.
	lockTakeSQL(table string) string
	// deleteFencedSQL deletes the jobs whose claims (id, attempts, reserved_at) still hold and
	// returns their ids; only where capabilities.DeleteReturning. The statement is ready to run.
	deleteFencedSQL(table string, jobs []*Job) (string, []any)
	// indexOrderSQL is run before a claim from a lower bound, in the claim's own transaction, so that
	// the claim walks the primary key whatever the planner's statistics say; "" where not needed.
	indexOrderSQL() string
	// primaryKeyHint follows the table name in a claim from a lower bound, for the same reason as
	// indexOrderSQL, where the server takes index hints; "" elsewhere.
	primaryKeyHint() string
	// freshSelect makes a "select *" text that a driver's statement cache must not answer from a
	// stale result shape (PostgreSQL's pgx caches it per text).
	freshSelect(q string) string

	// columnType is the DDL of a column of Laravel's schema builder for the logical type.
	columnType(t colType, nullable bool) string
	// createTableSuffix ends create table (MySQL's charset and collation).
	createTableSuffix() string
	// indexDDL, uniqueDDL and primaryDDL are the statements Laravel's schema builder writes for an
	// index, a unique constraint and a string primary key on an existing create table statement.
	indexDDL(table, name string, cols []string) string
	uniqueDDL(table, name, col string) string
	primaryDDL(create, table, col string) []string
	// onlineIndexDDL, onlineDropIndexDDL and onlineAlterSuffix change an index or column of a live
	// table without blocking its readers and writers where the server allows it.
	onlineIndexDDL(table, name string, cols []string) string
	onlineDropIndexDDL(table, name string) string
	onlineAlterSuffix() string
	// alterPrivilege names what a user needs to change the jobs table's indexes and columns.
	alterPrivilege() string
	// ddlInProgressSQL selects the process ids of other sessions changing the table's structure now
	// (an ALTER, an index build); "" when the dialect cannot tell. Its one argument is the table.
	ddlInProgressSQL() string
	// lockWaitSQL is the statement that bounds how long stmt, run next on the session, waits for the
	// table's lock (unbounded when stmt holds up no other session while it waits; d 0 restores the
	// server's default); "" when the dialect has none.
	lockWaitSQL(d time.Duration, stmt string) string

	// inspect reads the columns and indexes of t.Name from the catalog into t.
	inspect(ctx context.Context, c *Conn, t *JobsTable) error
	// classify says which kind of failure a native driver error is.
	classify(err error) errClass
	// batchReason says why the batch strategy suits this server, for the start-up log.
	batchReason(engine, version string) string
	// cleanup reads what holds back the removal of deleted rows (see CleanupStatus); nil where
	// nothing can (SQLite).
	cleanup(ctx context.Context, c *Conn) (*CleanupStatus, error)
	// pulse is what Laravel Pulse's tables are in this dialect.
	pulse() pulseSQL
}

// capabilities are the facts about a server that strategies choose by.
type capabilities struct {
	// SkipLocked: the pop lock skips rows other transactions hold (FOR UPDATE SKIP LOCKED).
	SkipLocked bool
	// UpdateReturning: UPDATE … WHERE id IN (SELECT …) RETURNING claims rows in one statement.
	UpdateReturning bool
	// DeleteReturning: DELETE … RETURNING says which rows a fenced group delete removed.
	DeleteReturning bool
	// ReturningInTx: a DELETE … RETURNING runs in a transaction of its own, never in autocommit. On a
	// MariaDB Galera node an autocommit one left the client waiting on its connection for good,
	// for the rest of a result the server had already ended (MariaDB 10.11, about one drain in three
	// with a worker on each of three nodes; none in sixty with the transaction).
	ReturningInTx bool
	// Pipeline: several statements go in one round trip and commit as one implicit transaction.
	Pipeline bool
	// RowLocks: SELECT … FOR UPDATE locks rows; false where a transaction holds the database's write
	// lock from its start instead (SQLite's BEGIN IMMEDIATE).
	RowLocks bool
	// DeleteLimit: DELETE … LIMIT n. Such a server (MySQL) cannot delete from a table it selects from
	// in a subquery, which is the portable form.
	DeleteLimit bool
	// TypedIntegers: an integer column holds only its declared type's range (false with SQLite's
	// type affinity).
	TypedIntegers bool
	// ClaimIsolation is the isolation of a claim transaction that locks rows: READ COMMITTED on MySQL,
	// which takes no gap locks, so claimers and inserters do not deadlock on the queue index.
	ClaimIsolation sql.IsolationLevel
	// MaxAttempts is the largest value Laravel's attempts column holds.
	MaxAttempts int
	// NoNulInText: a text column refuses the NUL byte (PostgreSQL's 22021, invalid byte sequence).
	NoNulInText bool
	// NoPrivileges: the database has no per-table privileges (SQLite); a grant check only finds
	// missing tables.
	NoPrivileges bool
	// BoundClaims: claims running at once from many workers on one queue cost the server more than
	// they bring, so the workers of a host share one bound on them (see ClaimScope).
	BoundClaims bool
	// CommitIgnoresContext: the driver's Commit does not heed the transaction's context, so a
	// transaction is committed in a goroutine the caller stops waiting for once its context ends (see
	// Conn.commitWatched).
	CommitIgnoresContext bool
}

// errClass is the kind of a native driver error.
type errClass int

const (
	errOther        errClass = iota
	errDeadlock              // deadlock victim or serialization failure: the transaction may be retried
	errBusy                  // lock wait timeout, SQLITE_BUSY
	errMissingTable          // the statement names a table that does not exist
	errUnique                // a unique or primary key constraint refused the row
)

// colType is a logical column type of Laravel's schema builder.
type colType int

const (
	colID         colType = iota // $table->id(): the auto-increment primary key
	colString                    // string(): varchar(255)
	colText                      // text()
	colMediumText                // mediumText()
	colLongText                  // longText()
	colInteger                   // integer()
	colUInt                      // unsignedInteger()
	colTinyUInt                  // unsignedTinyInteger(): the jobs attempts column
	colSmallUInt                 // unsignedSmallInteger(): the jobs attempts column from Laravel 13.6
	colBigUInt                   // unsignedBigInteger(): columns the migrations here add
	colTimestamp                 // timestamp()->useCurrent()
)

// dialects are the implementations by Laravel's driver name; MariaDB is MySQL's, as Laravel 11+
// names a separate mariadb driver for the same wire protocol and SQL.
var dialects = map[Dialect]dialect{
	MySQL:    mysqlDialect{},
	MariaDB:  mysqlDialect{},
	Postgres: pgsqlDialect{},
	SQLite:   sqliteDialect{},
}

// dialectFor returns the implementation of d, or an error that names the known ones.
func dialectFor(d Dialect) (dialect, error) {
	if impl, ok := dialects[d]; ok {
		return impl, nil
	}
	return nil, fmt.Errorf("%w: DB_CONNECTION %q: use mysql, mariadb, pgsql or sqlite", ErrInvalid, d)
}

// placeholders returns n ? placeholders separated by commas.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// quoteAll quotes each name and joins them with commas.
func quoteAll(d dialect, names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = d.quote(n)
	}
	return strings.Join(quoted, ", ")
}

// deleteFencedRowsSQL is the portable fenced group delete with RETURNING, for dialects that match
// rows against a list of (id, attempts, reserved_at) tuples.
func deleteFencedRowsSQL(d dialect, table string, jobs []*Job) (string, []any) {
	where, args := fencedRowsWhere(jobs)
	return d.rebind("delete from " + d.quote(table) + where + " returning id"), args
}

// fencedRowsWhere matches the jobs whose claims still hold: the id list lets the server use the
// primary key, the tuple list checks each claim.
func fencedRowsWhere(jobs []*Job) (string, []any) {
	args := make([]any, 0, 4*len(jobs))
	for _, j := range jobs {
		args = append(args, j.ID)
	}
	for _, j := range jobs {
		args = append(args, j.ID, j.Attempts, j.ReservedAt)
	}
	rowIn := strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(jobs)), ", ")
	return " where id in (" + placeholders(len(jobs)) + ") and (id, attempts, reserved_at) in (" + rowIn + ")", args
}

// skipLockedSince returns Laravel's lock clause for engine at version: SKIP LOCKED from least on
// (compared as PHP's version_compare does), plain "for update" before.
func skipLockedSince(version, least string) string {
	if VersionCompare(version, least) >= 0 {
		return "FOR UPDATE SKIP LOCKED"
	}
	return "for update"
}

// hasSkipLocked reports whether a pop lock clause skips locked rows.
func hasSkipLocked(lock string) bool {
	return strings.Contains(strings.ToUpper(lock), "SKIP LOCKED")
}

// columnDDL writes a column type from a dialect's table of logical types: nullable columns get
// nullWord ("null", or nothing on SQLite), others "not null"; the id column's type says it all.
func columnDDL(types map[colType]string, t colType, nullable bool, nullWord string) string {
	typ := types[t]
	switch {
	case t == colID:
		return typ
	case !nullable:
		return typ + " not null"
	case nullWord == "":
		return typ
	}
	return typ + " " + nullWord
}

// onConflictUpsert is the upsert of PostgreSQL and SQLite.
func onConflictUpsert(d dialect, table, key string, cols []string) string {
	var set []string
	for _, col := range cols {
		if col != key {
			set = append(set, d.quote(col)+" = excluded."+d.quote(col))
		}
	}
	return "insert into " + d.quote(table) + " (" + quoteAll(d, cols) + ") values (" + placeholders(len(cols)) +
		") on conflict (" + d.quote(key) + ") do update set " + strings.Join(set, ", ")
}

// onConflictLockTake is lockTakeSQL in the INSERT … ON CONFLICT form PostgreSQL and SQLite share.
func onConflictLockTake(d dialect, table string) string {
	k, o, e := d.quote("key"), d.quote("owner"), d.quote("expiration")
	return d.rebind("insert into " + d.quote(table) + " as l (" + k + ", " + o + ", " + e + ") values (?, ?, ?) on conflict (" + k +
		") do update set " + o + " = excluded." + o + ", " + e + " = excluded." + e + " where l." + o + " = excluded." + o + " or l." + e + " <= ?")
}

// lastInsertID runs insert and returns the id the driver reports (MySQL, SQLite).
func lastInsertID(ctx context.Context, ex Execer, insert string, args []any) (int64, error) {
	res, err := ex.ExecContext(ctx, insert, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}
