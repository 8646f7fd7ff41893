package laravel

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// mysqlDialect is MySQL and MariaDB (Laravel's mysql and mariadb drivers).
type mysqlDialect struct{}

func (mysqlDialect) name() Dialect { return MySQL }

func (mysqlDialect) openDB(driver, dsn string, guard *atomic.Bool) (*sqlx.DB, *writeGate, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, err
	}
	err = cfg.Apply(mysql.BeforeConnect(func(_ context.Context, c *mysql.Config) error {
		if guard.Load() {
			if c.Params == nil {
				c.Params = map[string]string{}
			}
			c.Params["idle_transaction_timeout"] = strconv.FormatInt(max(idleTxTimeout.Load()/int64(time.Second), 1), 10)
		}
		return nil
	}))
	if err != nil {
		return nil, nil, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	return sqlx.NewDb(sql.OpenDB(connector), driver), nil, nil
}

// idleTxSQL: MariaDB's idle_transaction_timeout (10.3+), in seconds; MySQL has no such variable.
func (mysqlDialect) idleTxSQL(engine string) string {
	if engine != "mariadb" {
		return ""
	}
	return "select @@session.idle_transaction_timeout"
}

func (mysqlDialect) idleTxOffSQL() string { return "set session idle_transaction_timeout = 0" }

func (mysqlDialect) driverDSN(p OpenParams) (driver, dsn, where string, err error) {
	cfg := mysql.NewConfig()
	if p.DSN != "" {
		if cfg, err = mysql.ParseDSN(p.DSN); err != nil {
			return "", "", "", fmt.Errorf("%w: db.dsn: %v; use the go-sql-driver form user:pass@tcp(host:3306)/dbname", ErrInvalid, err)
		}
	} else {
		cfg.User, cfg.Passwd, cfg.DBName = p.Username, p.Password, p.Database
		if p.Socket != "" {
			cfg.Net, cfg.Addr = "unix", p.Socket
		} else {
			cfg.Net, cfg.Addr = "tcp", hostPort(p.Host, p.Port, 3306)
		}
	}
	if p.SSL.MySQLCA != "" {
		name, err := registerMySQLTLS(p.SSL.MySQLCA, p.Host)
		if err != nil {
			return "", "", "", err
		}
		cfg.TLSConfig = name
	}
	// Fenced updates count matched rows, so a renewal within the same second is not "lost".
	cfg.ClientFoundRows = true
	// Send statements with their arguments in one round trip, as PDO's emulated prepares do,
	// instead of prepare, execute and close; utf8mb4 makes the escaping safe.
	if !strings.Contains(p.DSN, "interpolateParams") {
		cfg.InterpolateParams = true
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if _, ok := cfg.Params["charset"]; !ok {
		cfg.Params["charset"] = "utf8mb4"
	}
	return "mysql", cfg.FormatDSN(), fmt.Sprintf("%s/%s", cfg.Addr, cfg.DBName), nil
}

// registerMySQLTLS registers with the MySQL driver a TLS configuration that checks the server's
// certificate against the CA file and the host name, as PDO does with PDO::MYSQL_ATTR_SSL_CA, and
// returns its name.
func registerMySQLTLS(caFile, host string) (string, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return "", fmt.Errorf("%w: the MySQL CA file (MYSQL_ATTR_SSL_CA): %v", ErrInvalid, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return "", fmt.Errorf("%w: the MySQL CA file %s (MYSQL_ATTR_SSL_CA) holds no PEM certificate", ErrInvalid, caFile)
	}
	sum := sha256.Sum256(append(pem, host...))
	name := "artisan-go-" + hex.EncodeToString(sum[:8])
	if err := mysql.RegisterTLSConfig(name, &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
		return "", fmt.Errorf("register the MySQL TLS configuration: %w", err)
	}
	return name, nil
}

func (mysqlDialect) versionSQL() string { return "select version()" }

// xactStatus: neither MySQL nor MariaDB says whether another session's transaction committed.
func (mysqlDialect) xactStatus(string) (idSQL, statusSQL string) { return "", "" }
func (mysqlDialect) sequenceUsageSQL() string                    { return "" }

// leadLockSQL: GET_LOCK names are server-wide and at most 64 characters, so the database and table
// are hashed into one; NULL (an error, or a Galera node refusing it) reads 0.
func (mysqlDialect) leadLockSQL() (string, bool) {
	return "select coalesce(get_lock(" + leadLockName + ", 0), 0)", false
}

// leadLockName is the GET_LOCK name of a jobs table (?).
const leadLockName = "concat('artisan-go-lanes-', left(sha2(concat(database(), '.', ?), 256), 40))"

// idleTimeoutSQL: none; the lead holds no transaction.
func (mysqlDialect) idleTimeoutSQL() string { return "" }

// leadUnlockSQL: RELEASE_LOCK of the same name.
func (mysqlDialect) leadUnlockSQL(table string) (string, []any) {
	return "do release_lock(" + leadLockName + ")", []any{table}
}

// sessionIDSQL: the connection (thread) id.
func (mysqlDialect) sessionIDSQL() string { return "select connection_id()" }

// keepNoSnapshot: args as they are; no transaction is left open here.
func (mysqlDialect) keepNoSnapshot(args ...any) []any { return args }

// clusterDialect is a dialect whose servers may be nodes of a replicating cluster.
type clusterDialect interface {
	// inCluster reports whether the server is such a node (false when it cannot tell).
	inCluster(ctx context.Context, db *sqlx.DB) bool
}

// inCluster reports whether the server is a node of a Galera cluster (MariaDB's wsrep_on; MySQL has
// no such variable).
func (mysqlDialect) inCluster(ctx context.Context, db *sqlx.DB) bool {
	var on int
	return db.QueryRowContext(ctx, "select @@wsrep_on").Scan(&on) == nil && on == 1
}

// popLock tells MariaDB from MySQL by the version string ("5.5.5-10.11.6-MariaDB-…" through old
// clients): SKIP LOCKED came with MySQL 8.0.1 and MariaDB 10.6.0.
func (mysqlDialect) popLock(version string) (engine, lock string) {
	if strings.Contains(version, "MariaDB") {
		v := version
		if _, after, ok := strings.Cut(v, "5.5.5-"); ok {
			v = after
		}
		v, _, _ = strings.Cut(v, "-")
		return "mariadb", skipLockedSince(v, "10.6.0")
	}
	return "mysql", skipLockedSince(version, "8.0.1")
}

func (mysqlDialect) capabilities(engine, lock string) capabilities {
	return capabilities{
		SkipLocked:      hasSkipLocked(lock),
		DeleteReturning: engine == "mariadb",
		RowLocks:        true,
		DeleteLimit:     true,
		TypedIntegers:   true,
		ClaimIsolation:  sql.LevelReadCommitted,
		// 16 workers of 8 single-row claims each spent a quarter of MariaDB's CPU in InnoDB's spin
		// waits and ran below one worker's rate.
		BoundClaims: true,
		MaxAttempts: 255, // tinyint unsigned
		// go-sql-driver/mysql's Tx.Commit waits for the server's answer without a deadline and
		// without the transaction's context: a claim whose COMMIT met a server that stopped answering
		// held its worker, even one told twice to stop, for good.
		CommitIgnoresContext: true,
	}
}

func (mysqlDialect) quote(name string) string   { return "`" + name + "`" }
func (mysqlDialect) rebind(q string) string     { return q }
func (mysqlDialect) least() string              { return "least" }
func (mysqlDialect) maxTimestamp() int64        { return 1<<32 - 1 }
func (mysqlDialect) encodeText(v string) string { return v }
func (mysqlDialect) decodeText(v string) string { return v }

func (mysqlDialect) insertID(ctx context.Context, ex Execer, insert string, args []any) (int64, error) {
	return lastInsertID(ctx, ex, insert, args)
}

// lockTakeSQL is none: an insert refused for a duplicate key leaves MySQL's transaction usable, and
// MySQL's upsert cannot say whether the lock was taken.
func (mysqlDialect) lockTakeSQL(string) string { return "" }

func (d mysqlDialect) upsertSQL(table, key string, cols []string) string {
	var set []string
	for _, col := range cols {
		if col != key {
			set = append(set, d.quote(col)+" = values("+d.quote(col)+")")
		}
	}
	return "insert into " + d.quote(table) + " (" + quoteAll(d, cols) + ") values (" + placeholders(len(cols)) +
		") on duplicate key update " + strings.Join(set, ", ")
}

// deleteFencedSQL is MariaDB's; MySQL has no DELETE … RETURNING.
func (d mysqlDialect) deleteFencedSQL(table string, jobs []*Job) (string, []any) {
	return deleteFencedRowsSQL(d, table, jobs)
}

func (mysqlDialect) indexOrderSQL() string { return "" }

// primaryKeyHint: MariaDB plans a claim from a lower bound (queue = ? … and id >= ? order by id) as
// a ref lookup of the queue index on queue alone, with the bound checked entry by entry, so it reads
// every entry of the queue, the rows deleted but not yet purged included: beside a long transaction
// 674 pages and 29 ms for 200 live ids, against 18 pages and 0.1 ms for the primary key's range.
func (mysqlDialect) primaryKeyHint() string      { return " force index (PRIMARY)" }
func (mysqlDialect) freshSelect(q string) string { return q }

var mysqlTypes = map[colType]string{
	colID: "bigint unsigned not null auto_increment primary key", colString: "varchar(255)", colText: "text",
	colMediumText: "mediumtext", colLongText: "longtext", colInteger: "int", colUInt: "int unsigned",
	colTinyUInt: "tinyint unsigned", colSmallUInt: "smallint unsigned", colBigUInt: "bigint unsigned", colTimestamp: "timestamp default CURRENT_TIMESTAMP",
}

func (mysqlDialect) columnType(t colType, nullable bool) string {
	return columnDDL(mysqlTypes, t, nullable, "null")
}

func (mysqlDialect) createTableSuffix() string {
	return " default character set utf8mb4 collate 'utf8mb4_unicode_ci'"
}

func (d mysqlDialect) indexDDL(table, name string, cols []string) string {
	return fmt.Sprintf("alter table %s add index %s(%s)", d.quote(table), d.quote(name), quoteAll(d, cols))
}

func (d mysqlDialect) uniqueDDL(table, name, col string) string {
	return fmt.Sprintf("alter table %s add unique %s(%s)", d.quote(table), d.quote(name), d.quote(col))
}

func (d mysqlDialect) primaryDDL(create, table, col string) []string {
	return []string{create, fmt.Sprintf("alter table %s add primary key %s(%s)", d.quote(table), d.quote(table+"_"+col+"_primary"), d.quote(col))}
}

// mysqlOnline makes an ALTER TABLE fail rather than block the table's readers and writers.
const mysqlOnline = ", algorithm=inplace, lock=none"

func (d mysqlDialect) onlineIndexDDL(table, name string, cols []string) string {
	return fmt.Sprintf("alter table %s add index %s (%s)%s", d.quote(table), d.quote(name), quoteAll(d, cols), mysqlOnline)
}

func (d mysqlDialect) onlineDropIndexDDL(table, name string) string {
	return fmt.Sprintf("alter table %s drop index %s%s", d.quote(table), d.quote(name), mysqlOnline)
}

func (mysqlDialect) lockWaitSQL(d time.Duration, _ string) string {
	if d == 0 {
		return "set session lock_wait_timeout = default"
	}
	return fmt.Sprintf("set session lock_wait_timeout = %d", max(int(d/time.Second), 1))
}

func (mysqlDialect) ddlInProgressSQL() string {
	// Only this database's: another application's jobs table on the same server is another table.
	return "select id from information_schema.processlist where id <> connection_id() and db = database() and command = 'Query' and lower(info) like concat('alter table `', ?, '`%')"
}

// mysqlFailedJobIDsSQL reads the size in bytes of job_batches.failed_job_ids (the table's name the
// argument), and its type.
// mysqlNarrowCharsetSQL finds the text columns of a table whose character set is not utf8mb4.
const mysqlNarrowCharsetSQL = "select column_name, character_set_name from information_schema.columns where table_schema = database() and table_name = ? and column_name in ('payload', 'exception') and character_set_name is not null and character_set_name <> 'utf8mb4' order by ordinal_position"

const mysqlFailedJobIDsSQL = "select character_octet_length, data_type from information_schema.columns where table_schema = database() and table_name = ? and column_name = 'failed_job_ids'"

func (mysqlDialect) alterPrivilege() string { return "ALTER and INDEX privileges on the table" }

func (mysqlDialect) onlineAlterSuffix() string { return mysqlOnline }

func (mysqlDialect) inspect(ctx context.Context, c *Conn, t *JobsTable) error {
	if err := c.schemaColumns(ctx, t, "select column_name, column_type, is_nullable, case when column_default is null then 0 else 1 end from information_schema.columns where table_schema = database() and table_name = ? order by ordinal_position"); err != nil {
		return err
	}
	var engine sql.NullString
	var kind string
	switch err := c.db.QueryRowContext(ctx, "select engine, table_type from information_schema.tables where table_schema = database() and table_name = ?", t.Name).Scan(&engine, &kind); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return c.translate(err)
	default:
		t.Engine, t.View = strings.ToLower(engine.String), kind == "VIEW"
	}
	irows, err := c.db.QueryContext(ctx, "select index_name, column_name, non_unique from information_schema.statistics where table_schema = database() and table_name = ? order by index_name, seq_in_index", t.Name)
	if err != nil {
		return c.translate(err)
	}
	defer irows.Close()
	for irows.Next() {
		var name, col string
		var nonUnique int
		if err := irows.Scan(&name, &col, &nonUnique); err != nil {
			return err
		}
		t.addIndexColumn(Index{Name: name, Unique: nonUnique == 0, Primary: name == "PRIMARY"}, col)
	}
	return irows.Err()
}

// mysqlRefused: SQLSTATE classes 22 (data), 23 (constraints, MariaDB's checks too), 42 (names,
// privileges) and 45 (a trigger's SIGNAL).
func mysqlRefused(err error) bool {
	var my *mysql.MySQLError
	if !errors.As(err, &my) {
		return false
	}
	switch string(my.SQLState[:2]) {
	case "22", "23", "42", "45":
		return true
	}
	return false
}

func (mysqlDialect) classify(err error) errClass {
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		switch my.Number {
		case 1213: // ER_LOCK_DEADLOCK
			return errDeadlock
		case 1205: // ER_LOCK_WAIT_TIMEOUT
			return errBusy
		case 1146: // ER_NO_SUCH_TABLE
			return errMissingTable
		case 1062: // ER_DUP_ENTRY
			return errUnique
		}
	}
	return errOther
}

func (mysqlDialect) batchReason(engine, version string) string {
	return engine + " " + version + " has SKIP LOCKED: batched claims in READ COMMITTED transactions"
}

// cleanup reads the oldest open InnoDB transaction (other than this session's) and the history list
// length: undo records of every table that purge cannot remove while that transaction's read view may
// need them, deleted jobs rows among them.
func (mysqlDialect) cleanup(ctx context.Context, c *Conn) (*CleanupStatus, error) {
	s := &CleanupStatus{DeadRowsKind: "InnoDB history list length"}
	var age int64
	err := c.db.QueryRowContext(ctx, `select trx_mysql_thread_id, timestampdiff(microsecond, trx_started, now(6)), coalesce(trx_state, '')
		from information_schema.innodb_trx where trx_mysql_thread_id <> connection_id() order by trx_started limit 1`).Scan(&s.OldestPID, &age, &s.OldestState)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	default:
		s.OldestAge = time.Duration(age) * time.Microsecond
		s.End = fmt.Sprintf("kill %d", s.OldestPID)
	}
	err = c.db.QueryRowContext(ctx, "select count from information_schema.innodb_metrics where name = 'trx_rseg_history_len'").Scan(&s.DeadRows)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return s, err
}

// pulse is what Laravel Pulse's tables are on MySQL and MariaDB: key_hash is unhex(md5(key)), virtual.
func (mysqlDialect) pulse() pulseSQL {
	keyHash := "`key_hash` char(16) character set binary as (unhex(md5(`key`)))"
	tail := " default character set utf8mb4 collate 'utf8mb4_unicode_ci'"
	ddl := []string{
		"create table `pulse_values` (`id` bigint unsigned not null auto_increment primary key, `timestamp` int unsigned not null, `type` varchar(255) not null, `key` mediumtext not null, " + keyHash + ", `value` mediumtext not null)" + tail,
		"alter table `pulse_values` add index `pulse_values_timestamp_index`(`timestamp`)",
		"alter table `pulse_values` add index `pulse_values_type_index`(`type`)",
		"alter table `pulse_values` add unique `pulse_values_type_key_hash_unique`(`type`, `key_hash`)",
		"create table `pulse_entries` (`id` bigint unsigned not null auto_increment primary key, `timestamp` int unsigned not null, `type` varchar(255) not null, `key` mediumtext not null, " + keyHash + ", `value` bigint null)" + tail,
		"alter table `pulse_entries` add index `pulse_entries_timestamp_index`(`timestamp`)",
		"alter table `pulse_entries` add index `pulse_entries_type_index`(`type`)",
		"alter table `pulse_entries` add index `pulse_entries_key_hash_index`(`key_hash`)",
		"alter table `pulse_entries` add index `pulse_entries_timestamp_type_key_hash_value_index`(`timestamp`, `type`, `key_hash`, `value`)",
		"create table `pulse_aggregates` (`id` bigint unsigned not null auto_increment primary key, `bucket` int unsigned not null, `period` mediumint unsigned not null, `type` varchar(255) not null, `key` mediumtext not null, " + keyHash + ", `aggregate` varchar(255) not null, `value` decimal(20, 2) not null, `count` int unsigned null)" + tail,
		"alter table `pulse_aggregates` add unique `pulse_aggregates_bucket_period_type_aggregate_key_hash_unique`(`bucket`, `period`, `type`, `aggregate`, `key_hash`)",
		"alter table `pulse_aggregates` add index `pulse_aggregates_period_bucket_index`(`period`, `bucket`)",
		"alter table `pulse_aggregates` add index `pulse_aggregates_type_index`(`type`)",
		"alter table `pulse_aggregates` add index `pulse_aggregates_period_type_aggregate_bucket_index`(`period`, `type`, `aggregate`, `bucket`)",
	}
	return pulseSQL{
		keyHashSQL: "select table_name, coalesce(generation_expression, '') from information_schema.columns where table_schema = database() and table_name in (?, ?) and column_name = 'key_hash'",
		addSQL:     " on duplicate key update `value` = `value` + values(`value`)",
		maxSQL:     " on duplicate key update `value` = greatest(`value`, values(`value`))",
		keyHash:    func(sum [16]byte) any { return sum[:] },
		ddl:        ddl,
	}
}
