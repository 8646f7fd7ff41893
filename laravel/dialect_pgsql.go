package laravel

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"
)

// pgsqlDialect is PostgreSQL through pgx.
type pgsqlDialect struct{}

func (pgsqlDialect) name() Dialect { return Postgres }

func (pgsqlDialect) openDB(driver, dsn string, guard *atomic.Bool) (*sqlx.DB, *writeGate, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, nil, err
	}
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
		if !guard.Load() {
			return nil
		}
		// A statement, not a startup parameter, which PgBouncer refuses even in session pooling;
		// Open sets guard only where the session is the connection's own.
		_, err := c.Exec(ctx, "set idle_in_transaction_session_timeout = "+strconv.FormatInt(idleTxTimeout.Load()/int64(time.Millisecond), 10))
		return err
	}))
	return sqlx.NewDb(db, driver), nil, nil
}

// idleTxSQL: idle_in_transaction_session_timeout (9.6+), in milliseconds.
func (pgsqlDialect) idleTxOffSQL() string { return "set idle_in_transaction_session_timeout = 0" }

func (pgsqlDialect) idleTxSQL(string) string {
	return "select coalesce((select setting::bigint from pg_settings where name = 'idle_in_transaction_session_timeout'), -1)"
}

func (pgsqlDialect) driverDSN(p OpenParams) (driver, dsn, where string, err error) {
	if p.DSN != "" {
		return "pgx", withPlanPerRun(p.DSN), redactPostgres(p.DSN), nil
	}
	host := p.Host
	if p.Socket != "" {
		host = p.Socket
	}
	if host == "" {
		host = "127.0.0.1"
	}
	port := p.Port
	if port == 0 {
		port = 5432
	}
	mode := p.SSL.Mode
	if mode == "" {
		mode = "prefer"
	}
	kv := []string{"host=" + pgQuote(host), "port=" + strconv.Itoa(port), "sslmode=" + pgQuote(mode)}
	for _, f := range [][2]string{{"dbname", p.Database}, {"user", p.Username}, {"password", p.Password}, {"search_path", p.Schema},
		{"sslrootcert", p.SSL.RootCert}, {"sslcert", p.SSL.Cert}, {"sslkey", p.SSL.Key}} {
		if f[1] != "" {
			kv = append(kv, f[0]+"="+pgQuote(f[1]))
		}
	}
	return "pgx", withPlanPerRun(strings.Join(kv, " ")), fmt.Sprintf("%s:%d/%s", host, port, p.Database), nil
}

// TLSParams are the TLS settings of a connection: PostgreSQL's as libpq and PHP's pdo_pgsql take
// them, and MySQL's CA file.
type TLSParams struct {
	Mode     string // PostgreSQL: disable, allow, prefer (""), require, verify-ca, verify-full
	RootCert string // PostgreSQL: the CA certificates file that verify-ca and verify-full check the server with
	Cert     string // PostgreSQL: the client certificate file
	Key      string // PostgreSQL: the client key file
	// MySQLCA is MySQL's and MariaDB's PDO::MYSQL_ATTR_SSL_CA: the connection uses TLS and checks the
	// server's certificate against this CA file and the host name.
	MySQLCA string
}

// withPlanPerRun sets pgx's default_query_exec_mode to cache_describe unless the DSN names a mode:
// every statement runs unnamed and PostgreSQL plans it with its arguments each time. pgx's default
// prepares each statement once per connection, and from its sixth run PostgreSQL may keep one generic
// plan for it, chosen from the table's size then. A worker that starts beside a small jobs table keeps
// the plan it chose there, a sequential scan, after the table has grown: with autovacuum behind a
// burst, every grouped delete then read the whole table (a 600,000-row steady run on PostgreSQL, its
// queue growing from the third minute on).
func withPlanPerRun(dsn string) string {
	const mode = "default_query_exec_mode"
	switch {
	case strings.Contains(dsn, mode):
		return dsn
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + mode + "=cache_describe"
	default:
		return strings.TrimSpace(dsn + " " + mode + "=cache_describe")
	}
}

func pgQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// redactPostgres describes a pgx DSN without its password.
func redactPostgres(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Host != "" {
		return u.Host + u.Path
	}
	var parts []string
	for _, f := range strings.Fields(dsn) {
		if k, _, _ := strings.Cut(f, "="); k == "host" || k == "port" || k == "dbname" {
			parts = append(parts, f)
		}
	}
	return strings.Join(parts, " ")
}

func (pgsqlDialect) versionSQL() string { return "show server_version" }

// popLock: SKIP LOCKED came with PostgreSQL 9.5.
func (pgsqlDialect) popLock(version string) (engine, lock string) {
	return "pgsql", skipLockedSince(version, "9.5")
}

// leadLockSQL: an advisory lock of a transaction kept open (idle in transaction, with no transaction
// id, and no snapshot once its statements run as keepNoSnapshot says, so vacuum does not wait for
// it), in the database connected to, keyed by a class of artisan-go's own (0x61676f, "ago") and the
// hash of the schema and table. A session's advisory
// lock stayed behind PgBouncer's transaction pooling on a shared server connection, which took it
// again for any client.
func (pgsqlDialect) leadLockSQL() (string, bool) {
	return "select case when pg_try_advisory_xact_lock(6383471, hashtext(current_schema() || '.' || $1)) then 1 else 0 end", true
}

// idleTimeoutSQL: idle_in_transaction_session_timeout, and transaction_timeout from PostgreSQL 17,
// whichever is set and shorter (pg_settings gives both in milliseconds).
func (pgsqlDialect) idleTimeoutSQL() string {
	return "select coalesce(min(nullif(setting, '0')::bigint), 0) from pg_settings where name in ('idle_in_transaction_session_timeout', 'transaction_timeout')"
}

// leadUnlockSQL: the lock is the transaction's, and goes with it.
func (pgsqlDialect) leadUnlockSQL(string) (string, []any) { return "rollback", nil }

// sessionIDSQL: the backend process's id.
func (pgsqlDialect) sessionIDSQL() string { return "select pg_backend_pid()" }

// keepNoSnapshot: pgx's simple query protocol. The extended protocol's unnamed portal outlives its
// statement until the next one, and with it the statement's snapshot: a transaction left idle after
// one kept its xmin, so the rows deleted since could be neither vacuumed nor pruned, and the claims
// walked past them (one queue:work process ran 15–20 % slower while it led). The simple protocol's
// portal ends with its statement.
func (pgsqlDialect) keepNoSnapshot(args ...any) []any {
	return append([]any{pgx.QueryExecModeSimpleProtocol}, args...)
}

// xactStatus: txid_current_if_assigned and txid_status came with PostgreSQL 10.
// sequenceUsageSQL: a serial id (Laravel's increments and bigIncrements) takes its numbers from a
// sequence that needs USAGE besides INSERT on the table; NULL when the column has none.
func (pgsqlDialect) sequenceUsageSQL() string {
	return "select s, has_sequence_privilege(s, 'USAGE') from (select pg_get_serial_sequence($1, 'id') as s) q where s is not null"
}

func (pgsqlDialect) xactStatus(version string) (idSQL, statusSQL string) {
	if VersionCompare(version, "10") < 0 {
		return "", ""
	}
	return "select txid_current_if_assigned()", "select txid_status($1)"
}

func (pgsqlDialect) capabilities(engine, lock string) capabilities {
	return capabilities{
		SkipLocked:      hasSkipLocked(lock),
		UpdateReturning: true,
		DeleteReturning: true,
		Pipeline:        true,
		RowLocks:        true,
		TypedIntegers:   true,
		ClaimIsolation:  sql.LevelDefault,
		// 16 queue:work processes of optimistic claims at their defaults ran 321 jobs/s where one
		// ran 3,679, and 2,360 under the bound; 16 workers of 8 claims in one process about the same.
		BoundClaims: true,
		MaxAttempts: 32767, // smallint
		NoNulInText: true,
	}
}

func (pgsqlDialect) quote(name string) string { return `"` + name + `"` }
func (pgsqlDialect) rebind(q string) string   { return sqlx.Rebind(sqlx.DOLLAR, q) }
func (pgsqlDialect) least() string            { return "least" }
func (pgsqlDialect) maxTimestamp() int64      { return 1<<31 - 1 }

// encodeText base64-encodes values containing NUL, which PostgreSQL's text columns cannot hold.
func (pgsqlDialect) encodeText(v string) string {
	if strings.Contains(v, "\x00") {
		return base64.StdEncoding.EncodeToString([]byte(v))
	}
	return v
}

// decodeText undoes encodeText as Laravel does: a value with neither ':' nor ';' is base64.
func (pgsqlDialect) decodeText(v string) string {
	if !strings.ContainsAny(v, ":;") {
		if b, err := base64.StdEncoding.DecodeString(v); err == nil {
			return string(b)
		}
	}
	return v
}

func (pgsqlDialect) insertID(ctx context.Context, ex Execer, insert string, args []any) (int64, error) {
	var id int64
	err := ex.QueryRowContext(ctx, insert+` returning "id"`, args...).Scan(&id)
	return id, err
}

func (d pgsqlDialect) lockTakeSQL(table string) string { return onConflictLockTake(d, table) }

func (d pgsqlDialect) upsertSQL(table, key string, cols []string) string {
	return onConflictUpsert(d, table, key, cols)
}

// deleteFencedSQL passes the claims as three arrays joined to the table: one statement text for every
// group size (prepared once per connection), and each row matched by a join instead of against a list
// of every claim.
func (d pgsqlDialect) deleteFencedSQL(table string, jobs []*Job) (string, []any) {
	ids := make([]int64, len(jobs))
	attempts := make([]int64, len(jobs))
	reserved := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i], attempts[i], reserved[i] = j.ID, int64(j.Attempts), j.ReservedAt
	}
	q := "delete from " + d.quote(table) + " as j using unnest($1::bigint[], $2::bigint[], $3::bigint[]) as f(id, attempts, reserved_at)" +
		" where j.id = f.id and j.attempts = f.attempts and j.reserved_at = f.reserved_at returning j.id"
	return q, []any{ids, attempts, reserved}
}

// indexOrderSQL switches sorting off for the rest of the claim's transaction. PostgreSQL plans
// Laravel's claim (WHERE queue = ? … ORDER BY id LIMIT n) from the table's statistics; on a table that
// grew faster than autovacuum analyzes it (a new table, a burst of dispatches) it expects a handful of
// rows and picks a bitmap scan of the queue index and a sort, which reads every row of the queue for
// every claim: measured at 14 ms for a 20,000-row backlog against 0.2 ms for the index walk.
func (pgsqlDialect) indexOrderSQL() string { return "select set_config('enable_sort', 'off', true)" }

// primaryKeyHint: PostgreSQL takes no index hints (see indexOrderSQL).
func (pgsqlDialect) primaryKeyHint() string { return "" }

// freshSelect: pgx caches the result shape of a prepared "select *", which goes stale when a column is
// added; the comment makes the statement text, and so the cache entry, unique.
func (pgsqlDialect) freshSelect(q string) string {
	return q + fmt.Sprintf(" /* %d */", time.Now().UnixNano())
}

var pgsqlTypes = map[colType]string{
	colID: "bigserial primary key not null", colString: "varchar(255)", colText: "text",
	colMediumText: "text", colLongText: "text", colInteger: "integer", colUInt: "integer",
	colTinyUInt: "smallint", colSmallUInt: "smallint", colBigUInt: "bigint", colTimestamp: "timestamp(0) without time zone default CURRENT_TIMESTAMP",
}

func (pgsqlDialect) columnType(t colType, nullable bool) string {
	return columnDDL(pgsqlTypes, t, nullable, "null")
}

func (pgsqlDialect) createTableSuffix() string { return "" }

func (d pgsqlDialect) indexDDL(table, name string, cols []string) string {
	return fmt.Sprintf("create index %s on %s (%s)", d.quote(name), d.quote(table), quoteAll(d, cols))
}

func (d pgsqlDialect) uniqueDDL(table, name, col string) string {
	return fmt.Sprintf("alter table %s add constraint %s unique (%s)", d.quote(table), d.quote(name), d.quote(col))
}

func (d pgsqlDialect) primaryDDL(create, table, col string) []string {
	return []string{create, fmt.Sprintf("alter table %s add primary key (%s)", d.quote(table), d.quote(col))}
}

// onlineIndexDDL builds CONCURRENTLY, which cannot run inside a transaction.
func (d pgsqlDialect) onlineIndexDDL(table, name string, cols []string) string {
	return fmt.Sprintf("create index concurrently if not exists %s on %s (%s)", d.quote(name), d.quote(table), quoteAll(d, cols))
}

func (d pgsqlDialect) onlineDropIndexDDL(table, name string) string {
	return "drop index concurrently if exists " + d.quote(name)
}

func (pgsqlDialect) lockWaitSQL(d time.Duration, stmt string) string {
	if d == 0 || strings.Contains(stmt, " concurrently ") {
		return "set lock_timeout = 0" // a CONCURRENTLY build waits for older transactions without blocking the workers
	}
	return fmt.Sprintf("set lock_timeout = '%dms'", d.Milliseconds())
}

func (pgsqlDialect) ddlInProgressSQL() string {
	return "select pid from pg_stat_progress_create_index where relid = to_regclass(quote_ident($1)) and pid <> pg_backend_pid()"
}

func (pgsqlDialect) alterPrivilege() string {
	return "ownership of the table (PostgreSQL lets only its owner alter it)"
}

func (pgsqlDialect) onlineAlterSuffix() string { return "" }

func (pgsqlDialect) inspect(ctx context.Context, c *Conn, t *JobsTable) error {
	// The schema the name resolves to on the search path, as the worker's statements resolve it: with
	// DB_SCHEMA naming several, it need not be the first (current_schema()).
	var schema, kind string
	switch err := c.db.QueryRowContext(ctx, "select n.nspname, c.relkind::text from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = to_regclass(quote_ident($1))", t.Name).Scan(&schema, &kind); {
	case errors.Is(err, sql.ErrNoRows):
		return nil // no columns: the table is missing
	case err != nil:
		return c.translate(err)
	}
	t.View = kind == "v" || kind == "m"
	if err := c.schemaColumns(ctx, t, "select column_name, data_type, is_nullable, case when column_default is null then 0 else 1 end from information_schema.columns where table_schema = '"+strings.ReplaceAll(schema, "'", "''")+"' and table_name = $1 order by ordinal_position"); err != nil {
		return err
	}
	irows, err := c.db.QueryContext(ctx, `select i.relname, a.attname, ix.indisunique, ix.indisprimary, ix.indisvalid
		from pg_index ix
		join pg_class t on t.oid = ix.indrelid
		join pg_class i on i.oid = ix.indexrelid
		join pg_namespace n on n.oid = t.relnamespace
		join pg_attribute a on a.attrelid = t.oid and a.attnum = any(ix.indkey)
		where t.relname = $1 and n.nspname = $2
		order by i.relname, array_position(ix.indkey::int2[], a.attnum)`, t.Name, schema)
	if err != nil {
		return c.translate(err)
	}
	defer irows.Close()
	for irows.Next() {
		var ix Index
		var col string
		var valid bool
		if err := irows.Scan(&ix.Name, &col, &ix.Unique, &ix.Primary, &valid); err != nil {
			return err
		}
		ix.Invalid = !valid
		t.addIndexColumn(ix, col)
	}
	return irows.Err()
}

// pgsqlRefused: SQLSTATE classes 22 (data), 23 (constraints), 42 (names, privileges) and P0 (a
// trigger's RAISE).
func pgsqlRefused(err error) bool {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || len(pg.Code) < 2 {
		return false
	}
	switch pg.Code[:2] {
	case "22", "23", "42", "P0":
		return true
	}
	return false
}

func (pgsqlDialect) classify(err error) errClass {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return errDeadlock
		case "55P03": // lock_not_available
			return errBusy
		case "42P01": // undefined_table
			return errMissingTable
		case "23505": // unique_violation
			return errUnique
		}
	}
	return errOther
}

func (pgsqlDialect) batchReason(engine, version string) string {
	return "PostgreSQL " + version + ": batched FOR UPDATE SKIP LOCKED claims with a moving id lower bound"
}

// cleanup reads the oldest open transaction of the database (other than this session's) that holds
// vacuum back, by a snapshot or a transaction id (the claim lanes' lead holds neither: see
// leadLockSQL), and the jobs table's dead tuples, which vacuum cannot remove while that
// transaction's snapshot may see them.
func (pgsqlDialect) cleanup(ctx context.Context, c *Conn) (*CleanupStatus, error) {
	s := &CleanupStatus{DeadRowsKind: "dead tuples in " + c.tables.Jobs}
	var age float64
	err := c.db.QueryRowContext(ctx, `select pid, extract(epoch from now() - xact_start), coalesce(state, '')
		from pg_stat_activity where xact_start is not null and pid <> pg_backend_pid() and datname = current_database()
		and (backend_xmin is not null or backend_xid is not null)
		order by xact_start limit 1`).Scan(&s.OldestPID, &age, &s.OldestState)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	default:
		s.OldestAge = time.Duration(age * float64(time.Second))
		s.End = fmt.Sprintf("select pg_terminate_backend(%d)", s.OldestPID)
	}
	err = c.db.QueryRowContext(ctx, "select coalesce(sum(n_dead_tup), 0) from pg_stat_user_tables where relname = $1 and schemaname = any(current_schemas(false))",
		c.tables.Jobs).Scan(&s.DeadRows)
	if err != nil {
		return nil, err
	}
	var server string
	var table sql.NullString
	err = c.db.QueryRowContext(ctx, `select current_setting('autovacuum'), (select o.option_value from pg_class t
		join pg_namespace n on n.oid = t.relnamespace, pg_options_to_table(t.reloptions) o
		where t.relname = $1 and n.nspname = any(current_schemas(false)) and o.option_name = 'autovacuum_enabled' limit 1)`,
		c.tables.Jobs).Scan(&server, &table)
	switch {
	case err != nil:
		return nil, err
	case !pgBool(server):
		s.AutovacuumOff = "autovacuum"
	case table.Valid && !pgBool(table.String):
		s.AutovacuumOff = "autovacuum_enabled"
	}
	return s, nil
}

// pgBool reads a PostgreSQL boolean setting as the server accepts it (on, true, yes, 1 and their
// prefixes are true).
func pgBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "of", "false", "fals", "fal", "fa", "f", "no", "n", "0":
		return false
	}
	return true
}

// pulse is what Laravel Pulse's tables are on PostgreSQL: key_hash is md5(key)::uuid, stored.
func (pgsqlDialect) pulse() pulseSQL {
	keyHash := `"key_hash" uuid generated always as (md5("key")::uuid) stored`
	ddl := []string{
		`create table "pulse_values" ("id" bigserial not null primary key, "timestamp" integer not null, "type" varchar(255) not null, "key" text not null, ` + keyHash + `, "value" text not null)`,
		`create index "pulse_values_timestamp_index" on "pulse_values" ("timestamp")`,
		`create index "pulse_values_type_index" on "pulse_values" ("type")`,
		`alter table "pulse_values" add constraint "pulse_values_type_key_hash_unique" unique ("type", "key_hash")`,
		`create table "pulse_entries" ("id" bigserial not null primary key, "timestamp" integer not null, "type" varchar(255) not null, "key" text not null, ` + keyHash + `, "value" bigint null)`,
		`create index "pulse_entries_timestamp_index" on "pulse_entries" ("timestamp")`,
		`create index "pulse_entries_type_index" on "pulse_entries" ("type")`,
		`create index "pulse_entries_key_hash_index" on "pulse_entries" ("key_hash")`,
		`create index "pulse_entries_timestamp_type_key_hash_value_index" on "pulse_entries" ("timestamp", "type", "key_hash", "value")`,
		`create table "pulse_aggregates" ("id" bigserial not null primary key, "bucket" integer not null, "period" integer not null, "type" varchar(255) not null, "key" text not null, ` + keyHash + `, "aggregate" varchar(255) not null, "value" decimal(20, 2) not null, "count" integer null)`,
		`alter table "pulse_aggregates" add constraint "pulse_aggregates_bucket_period_type_aggregate_key_hash_unique" unique ("bucket", "period", "type", "aggregate", "key_hash")`,
		`create index "pulse_aggregates_period_bucket_index" on "pulse_aggregates" ("period", "bucket")`,
		`create index "pulse_aggregates_type_index" on "pulse_aggregates" ("type")`,
		`create index "pulse_aggregates_period_type_aggregate_bucket_index" on "pulse_aggregates" ("period", "type", "aggregate", "bucket")`,
	}
	return pulseSQL{
		keyHashSQL: "select table_name, case when is_generated = 'ALWAYS' then 'generated' else '' end from information_schema.columns where table_schema = current_schema() and table_name in (?, ?) and column_name = 'key_hash'",
		addSQL:     conflictUpdate(""),
		maxSQL:     conflictUpdate("greatest"),
		keyHash: func(sum [16]byte) any {
			h := hex.EncodeToString(sum[:])
			return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		},
		ddl: ddl,
	}
}
