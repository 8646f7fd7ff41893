package laravel

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
)

// sqliteDialect is SQLite through modernc.org/sqlite: one writer at a time, every write transaction
// begun IMMEDIATE, the file in WAL mode.
type sqliteDialect struct{}

func (sqliteDialect) name() Dialect { return SQLite }

// openDB opens the pool behind a write gate of its own (see writeGate).
func (sqliteDialect) openDB(_, dsn string, _ *atomic.Bool) (*sqlx.DB, *writeGate, error) {
	return openSQLite(dsn, sqliteBusyTimeout(dsn))
}

// idleTxSQL: a SQLite transaction is the process's own; nothing outlives it.
func (sqliteDialect) idleTxSQL(string) string { return "" }
func (sqliteDialect) idleTxOffSQL() string    { return "" }

func (sqliteDialect) driverDSN(p OpenParams) (driver, dsn, where string, err error) {
	path := p.DSN
	if path == "" {
		path = p.Database
	}
	if path == "" {
		return "", "", "", fmt.Errorf("%w: DB_DATABASE is empty: set it to the SQLite file path Laravel uses (database/database.sqlite)", ErrInvalid)
	}
	bt := p.BusyTimeout
	if bt == 0 {
		bt = DefaultSQLiteBusyTimeout
	}
	file, query, _ := strings.Cut(path, "?")
	if plain := strings.TrimPrefix(file, "file:"); p.RequireSQLiteFile && plain != ":memory:" {
		if _, err := os.Stat(plain); err != nil {
			return "", "", "", fmt.Errorf("%w: SQLite database file %q: %v; set DB_DATABASE to the absolute path of the file Laravel uses (database/database.sqlite)", ErrInvalid, plain, err)
		}
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", "", "", fmt.Errorf("%w: SQLite DSN %q: %v", ErrInvalid, path, err)
	}
	setDefault(q, "_busy_timeout", strconv.FormatInt(bt.Milliseconds(), 10))
	setDefault(q, "_journal_mode", "WAL")
	setDefault(q, "_txlock", "immediate")
	// A statement inside a transaction that writes many rows keeps a statement journal, and SQLite's
	// temporary tables (RETURNING's rows, an IN list's index) live in temp storage; by default both
	// can go to files (the journal past 64 KiB), created and deleted each time. The batch strategy's
	// delete and claim share a transaction, so with 128 rows of payloads every cycle opened, wrote and
	// removed a file (233 in a queue:work process draining 20,000 jobs). In memory, the bench's batch
	// row at one worker ran 43,138–44,829 jobs/s against 32,600–36,441 (20,000 jobs) and 39,912
	// against 37,973 (100,000); a separate queue:work process ran the same with and without it.
	if !hasPragma(q, "temp_store") {
		q.Add("_pragma", "temp_store(memory)")
	}
	return "sqlite", file + "?" + q.Encode(), file, nil
}

// sqliteBusyTimeout reads the busy timeout a DSN from driverDSN sets.
func sqliteBusyTimeout(dsn string) time.Duration {
	_, query, _ := strings.Cut(dsn, "?")
	q, _ := url.ParseQuery(query)
	if ms, err := strconv.ParseInt(q.Get("_busy_timeout"), 10, 64); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return DefaultSQLiteBusyTimeout
}

// hasPragma reports whether the DSN sets the pragma name itself: modernc.org/sqlite runs each
// _pragma value as written after "pragma ", so name(value), name=value and name = value all set it.
func hasPragma(q url.Values, name string) bool {
	for _, v := range q["_pragma"] {
		n := strings.TrimSpace(v)
		if i := strings.IndexAny(n, "(= \t"); i >= 0 {
			n = n[:i]
		}
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

func setDefault(q url.Values, k, v string) {
	if q.Get(k) == "" {
		q.Set(k, v)
	}
}

func (sqliteDialect) versionSQL() string { return "select sqlite_version()" }

// xactStatus: SQLite runs in this process, where no COMMIT's answer is lost.
func (sqliteDialect) xactStatus(string) (idSQL, statusSQL string) { return "", "" }
func (sqliteDialect) sequenceUsageSQL() string                    { return "" }

// leadLockSQL: none; SQLite claims never run in lanes.
func (sqliteDialect) leadLockSQL() (string, bool) { return "", false }

// idleTimeoutSQL: none; no lead.
func (sqliteDialect) idleTimeoutSQL() string { return "" }

// leadUnlockSQL: none either.
func (sqliteDialect) leadUnlockSQL(string) (string, []any) { return "", nil }

// sessionIDSQL: none; the file has no server sessions.
func (sqliteDialect) sessionIDSQL() string { return "" }

// keepNoSnapshot: args as they are; no transaction is left open here.
func (sqliteDialect) keepNoSnapshot(args ...any) []any { return args }

// popLock: SQLite has no row locks; BEGIN IMMEDIATE serializes claims instead.
func (sqliteDialect) popLock(string) (engine, lock string) { return "sqlite", "" }

func (sqliteDialect) capabilities(engine, lock string) capabilities {
	return capabilities{
		UpdateReturning: true,
		DeleteReturning: true,
		ClaimIsolation:  sql.LevelDefault,
		MaxAttempts:     1<<31 - 1,
		NoPrivileges:    true,
	}
}

func (sqliteDialect) quote(name string) string   { return `"` + name + `"` }
func (sqliteDialect) rebind(q string) string     { return q }
func (sqliteDialect) least() string              { return "min" }
func (sqliteDialect) maxTimestamp() int64        { return 0 }
func (sqliteDialect) encodeText(v string) string { return v }
func (sqliteDialect) decodeText(v string) string { return v }

func (sqliteDialect) insertID(ctx context.Context, ex Execer, insert string, args []any) (int64, error) {
	return lastInsertID(ctx, ex, insert, args)
}

func (d sqliteDialect) lockTakeSQL(table string) string { return onConflictLockTake(d, table) }

func (d sqliteDialect) upsertSQL(table, key string, cols []string) string {
	return onConflictUpsert(d, table, key, cols)
}

// deleteFencedSQL deletes the claimed rows by id, one id list per claim (attempts, reserved_at): the
// rows of one claim statement share both, so a group is mostly one or two lists. SQLite looks each id
// up in the primary key and checks the claim on the row. Its check of a row-value IN list compares each
// row with every claim, which made that portable statement a third slower than a plain delete by id
// for a group of 128; a VALUES list of the claims joined to the primary key was within a quarter of it,
// and a list per claim within a tenth (a claim of 128 rows and its delete: 96k and 105k jobs/s against
// 127k). A group of many claims, which only rows released and claimed again one by one make, keeps
// the join. The claims are integers written into the text, not bound: the text differs per group
// anyway, and binding costs more than parsing them.
func (d sqliteDialect) deleteFencedSQL(table string, jobs []*Job) (string, []any) {
	type claim struct{ attempts, reservedAt int64 }
	order, ids := groupIDs(jobs, func(j *Job) claim { return claim{int64(j.Attempts), j.ReservedAt} })
	if len(order) > sqliteFenceLists {
		return d.deleteJoinedSQL(table, jobs), nil
	}
	var b strings.Builder
	b.WriteString("delete from " + d.quote(table) + " where ")
	for i, k := range order {
		if i > 0 {
			b.WriteString(" or ")
		}
		fmt.Fprintf(&b, "(attempts = %d and reserved_at = %d and id in (", k.attempts, k.reservedAt)
		for n, id := range ids[k] {
			if n > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.FormatInt(id, 10))
		}
		b.WriteString("))")
	}
	b.WriteString(" returning id")
	return b.String(), nil
}

// sqliteFenceLists is the most id lists deleteFencedSQL writes before it joins the claims instead.
const sqliteFenceLists = 8

// deleteJoinedSQL joins the claims, as a VALUES list walked first, to the table's primary key.
func (d sqliteDialect) deleteJoinedSQL(table string, jobs []*Job) string {
	var b strings.Builder
	b.WriteString("delete from " + d.quote(table) + " where id in (select j.id from (values ")
	for i, j := range jobs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, %d, %d)", j.ID, j.Attempts, j.ReservedAt)
	}
	b.WriteString(") as f cross join " + d.quote(table) + " as j on j.id = f.column1 and j.attempts = f.column2 and j.reserved_at = f.column3) returning id")
	return b.String()
}

func (sqliteDialect) indexOrderSQL() string       { return "" }
func (sqliteDialect) primaryKeyHint() string      { return "" }
func (sqliteDialect) freshSelect(q string) string { return q }

var sqliteTypes = map[colType]string{
	colID: "integer not null primary key autoincrement", colString: "varchar", colText: "text",
	colMediumText: "text", colLongText: "text", colInteger: "integer", colUInt: "integer",
	colTinyUInt: "integer", colSmallUInt: "integer", colBigUInt: "integer", colTimestamp: "datetime default CURRENT_TIMESTAMP",
}

// columnType: SQLite's grammar writes nothing for a nullable column.
func (sqliteDialect) columnType(t colType, nullable bool) string {
	return columnDDL(sqliteTypes, t, nullable, "")
}

func (sqliteDialect) createTableSuffix() string { return "" }

func (d sqliteDialect) indexDDL(table, name string, cols []string) string {
	return fmt.Sprintf("create index %s on %s (%s)", d.quote(name), d.quote(table), quoteAll(d, cols))
}

func (d sqliteDialect) uniqueDDL(table, name, col string) string {
	return fmt.Sprintf("create unique index %s on %s (%s)", d.quote(name), d.quote(table), d.quote(col))
}

// primaryDDL: a string primary key is declared inside create table.
func (d sqliteDialect) primaryDDL(create, table, col string) []string {
	return []string{strings.TrimSuffix(create, ")") + ", primary key (" + d.quote(col) + "))"}
}

// onlineIndexDDL: SQLite's DDL is quick under its write lock.
func (d sqliteDialect) onlineIndexDDL(table, name string, cols []string) string {
	return fmt.Sprintf("create index if not exists %s on %s (%s)", d.quote(name), d.quote(table), quoteAll(d, cols))
}

func (d sqliteDialect) onlineDropIndexDDL(table, name string) string {
	return "drop index if exists " + d.quote(name)
}

func (sqliteDialect) lockWaitSQL(time.Duration, string) string { return "" }

func (sqliteDialect) ddlInProgressSQL() string { return "" }

func (sqliteDialect) alterPrivilege() string { return "write access to the database file" }

func (sqliteDialect) onlineAlterSuffix() string { return "" }

func (sqliteDialect) inspect(ctx context.Context, c *Conn, t *JobsTable) error {
	rows, err := c.db.QueryxContext(ctx, "select name, type, \"notnull\", pk from pragma_table_info(?)", t.Name)
	if err != nil {
		return c.translate(err)
	}
	defer rows.Close()
	var pk []string
	for rows.Next() {
		var col Column
		var notNull, pkPos int
		if err := rows.Scan(&col.Name, &col.Type, &notNull, &pkPos); err != nil {
			return err
		}
		col.Name, col.Type, col.Nullable = strings.ToLower(col.Name), strings.ToLower(col.Type), notNull == 0
		t.Columns = append(t.Columns, col)
		if pkPos > 0 {
			pk = append(pk, col.Name)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(pk) > 0 {
		t.Indexes = append(t.Indexes, Index{Name: "PRIMARY", Columns: pk, Unique: true, Primary: true})
	}
	irows, err := c.db.QueryxContext(ctx, `select il.name, il."unique", ii.name from pragma_index_list(?) il, pragma_index_info(il.name) ii order by il.name, ii.seqno`, t.Name)
	if err != nil {
		return c.translate(err)
	}
	defer irows.Close()
	for irows.Next() {
		var name, col string
		var unique int
		if err := irows.Scan(&name, &unique, &col); err != nil {
			return err
		}
		t.addIndexColumn(Index{Name: name, Unique: unique == 1}, col)
	}
	return irows.Err()
}

// sqliteRefused: SQLITE_CONSTRAINT (a trigger's RAISE(ABORT) too), SQLITE_TOOBIG, SQLITE_MISMATCH,
// a missing table and SQLITE_AUTH.
func sqliteRefused(err error) bool {
	var lite *sqlite.Error
	if !errors.As(err, &lite) {
		return false
	}
	switch lite.Code() & 0xff {
	case 19, 18, 20, 23: // SQLITE_CONSTRAINT, SQLITE_TOOBIG, SQLITE_MISMATCH, SQLITE_AUTH
		return true
	case 1: // SQLITE_ERROR
		return strings.Contains(lite.Error(), "no such table") || strings.Contains(lite.Error(), "no such column") || strings.Contains(lite.Error(), "no column named")
	}
	return false
}

func (sqliteDialect) classify(err error) errClass {
	if errors.Is(err, errWriterBusy) {
		return errBusy
	}
	var lite *sqlite.Error
	if !errors.As(err, &lite) {
		return errOther
	}
	switch lite.Code() & 0xff {
	case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
		return errBusy
	case 1: // SQLITE_ERROR
		if strings.Contains(lite.Error(), "no such table") {
			return errMissingTable
		}
	case 19: // SQLITE_CONSTRAINT
		if c := lite.Code(); c == 2067 || c == 1555 { // _UNIQUE, _PRIMARYKEY
			return errUnique
		}
	}
	return errOther
}

func (sqliteDialect) batchReason(engine, version string) string {
	return "SQLite: one UPDATE … RETURNING claims a batch under the database write lock"
}

// cleanup is nil: SQLite's writers hold the whole database, and no reader holds back the removal of
// deleted rows.
func (sqliteDialect) cleanup(context.Context, *Conn) (*CleanupStatus, error) { return nil, nil }

// pulse is what Laravel Pulse's tables are on SQLite: key_hash is a plain string Pulse fills with md5($key) in PHP.
func (sqliteDialect) pulse() pulseSQL {
	ddl := []string{
		`create table "pulse_values" ("id" integer primary key autoincrement not null, "timestamp" integer not null, "type" varchar not null, "key" text not null, "key_hash" varchar not null, "value" text not null)`,
		`create index "pulse_values_timestamp_index" on "pulse_values" ("timestamp")`,
		`create index "pulse_values_type_index" on "pulse_values" ("type")`,
		`create unique index "pulse_values_type_key_hash_unique" on "pulse_values" ("type", "key_hash")`,
		`create table "pulse_entries" ("id" integer primary key autoincrement not null, "timestamp" integer not null, "type" varchar not null, "key" text not null, "key_hash" varchar not null, "value" integer)`,
		`create index "pulse_entries_timestamp_index" on "pulse_entries" ("timestamp")`,
		`create index "pulse_entries_type_index" on "pulse_entries" ("type")`,
		`create index "pulse_entries_key_hash_index" on "pulse_entries" ("key_hash")`,
		`create index "pulse_entries_timestamp_type_key_hash_value_index" on "pulse_entries" ("timestamp", "type", "key_hash", "value")`,
		`create table "pulse_aggregates" ("id" integer primary key autoincrement not null, "bucket" integer not null, "period" integer not null, "type" varchar not null, "key" text not null, "key_hash" varchar not null, "aggregate" varchar not null, "value" numeric not null, "count" integer)`,
		`create unique index "pulse_aggregates_bucket_period_type_aggregate_key_hash_unique" on "pulse_aggregates" ("bucket", "period", "type", "aggregate", "key_hash")`,
		`create index "pulse_aggregates_period_bucket_index" on "pulse_aggregates" ("period", "bucket")`,
		`create index "pulse_aggregates_type_index" on "pulse_aggregates" ("type")`,
		`create index "pulse_aggregates_period_type_aggregate_bucket_index" on "pulse_aggregates" ("period", "type", "aggregate", "bucket")`,
	}
	return pulseSQL{
		keyHashSQL: "select m.name, case when x.hidden in (2, 3) then 'generated' else '' end from sqlite_master m join pragma_table_xinfo(m.name) x where m.type = 'table' and m.name in (?, ?) and x.name = 'key_hash'",
		addSQL:     conflictUpdate(""),
		maxSQL:     conflictUpdate("max"),
		keyHash:    func(sum [16]byte) any { return hex.EncodeToString(sum[:]) },
		ddl:        ddl,
	}
}
