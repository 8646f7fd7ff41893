package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jmoiron/sqlx"
)

// ErrMissingGrant means the database user lacks a privilege the worker needs.
var ErrMissingGrant = errors.New("missing grant")

// GrantsParams says which tables a worker writes besides the jobs table.
type GrantsParams struct {
	// FailedJobs says failed jobs are written to failed_jobs (every failed-job driver but null).
	FailedJobs bool
	// Cache says the database cache store is read and written (queue:restart, maintenance mode,
	// maxExceptions counters, unique locks); Batches that job_batches counters are kept. Their tables
	// are optional: a missing one is not checked (the features that need it warn when used).
	Cache, Batches bool
}

// Grant is one privilege on one table.
type Grant struct {
	Table     string
	Privilege string // SELECT, INSERT, UPDATE or DELETE; USAGE on a "SEQUENCE name"
}

// MissingGrantsError lists the privileges the database user lacks, with the statement that grants them.
type MissingGrantsError struct {
	Missing []Grant
	Fix     string
	// Fixes is Fix's statement for each table (or "SEQUENCE name") alone.
	Fixes map[string]string
}

// Error names every missing privilege and the fix.
func (e *MissingGrantsError) Error() string {
	names := make([]string, len(e.Missing))
	for i, g := range e.Missing {
		names[i] = g.Privilege + " on " + g.Table
	}
	return fmt.Sprintf("%v: the database user lacks %s: %s", ErrMissingGrant, strings.Join(names, ", "), e.Fix)
}

// Unwrap returns ErrMissingGrant.
func (e *MissingGrantsError) Unwrap() error { return ErrMissingGrant }

// CheckGrants checks, before any job is claimed, that the database user may do what every claim
// strategy does: select, insert (releases, chain links), update (claims) and delete rows of the jobs
// table, and select and insert into failed_jobs; with Cache and Batches, what the cache store and
// batch counters need where those tables exist. A missing grant is a *MissingGrantsError naming each
// privilege; a missing table is a *MissingTableError. On SQLite, which has no privileges, this finds
// missing tables.
func CheckGrants(ctx context.Context, c *Conn, p GrantsParams) error {
	want := []Grant{{c.tables.Jobs, "SELECT"}, {c.tables.Jobs, "INSERT"}, {c.tables.Jobs, "UPDATE"}, {c.tables.Jobs, "DELETE"}}
	if p.FailedJobs {
		want = append(want, Grant{c.tables.FailedJobs, "SELECT"}, Grant{c.tables.FailedJobs, "INSERT"})
	}
	optional := map[string]bool{}
	if p.Cache {
		optional[c.tables.Cache], optional[c.tables.CacheLocks] = true, true
		want = append(want, Grant{c.tables.Cache, "SELECT"}, Grant{c.tables.Cache, "INSERT"}, Grant{c.tables.Cache, "UPDATE"},
			Grant{c.tables.Cache, "DELETE"}, Grant{c.tables.CacheLocks, "DELETE"})
	}
	if p.Batches {
		optional[c.tables.JobBatches] = true
		want = append(want, Grant{c.tables.JobBatches, "SELECT"}, Grant{c.tables.JobBatches, "UPDATE"})
	}
	var missing []Grant
	absent := map[string]bool{}
	for _, g := range want {
		if absent[g.Table] {
			continue
		}
		ok, err := c.hasGrant(ctx, g)
		if errors.Is(err, ErrMissingTable) && optional[g.Table] {
			absent[g.Table] = true
			continue
		}
		if err != nil {
			return fmt.Errorf("check %s on %s: %w", g.Privilege, g.Table, err)
		}
		if !ok {
			missing = append(missing, g)
		}
	}
	// Inserts (releases, chain links, failed jobs) also take the id from its sequence where the
	// server asks a grant for that; the insert probe above inserts nothing, so it never asks.
	inserted := []string{c.tables.Jobs}
	if p.FailedJobs {
		inserted = append(inserted, c.tables.FailedJobs)
	}
	for _, t := range inserted {
		seq, ok, err := c.sequenceUsage(ctx, t)
		if err != nil {
			return fmt.Errorf("check USAGE on the id sequence of %s: %w", t, err)
		}
		if !ok {
			missing = append(missing, Grant{"SEQUENCE " + seq, "USAGE"})
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var fix []string
	byTable := map[string][]string{}
	var order []string
	for _, g := range missing {
		if byTable[g.Table] == nil {
			order = append(order, g.Table)
		}
		byTable[g.Table] = append(byTable[g.Table], g.Privilege)
	}
	user := c.grantee(ctx)
	fixes := map[string]string{}
	for _, t := range order {
		fixes[t] = fmt.Sprintf("GRANT %s ON %s TO %s", strings.Join(byTable[t], ", "), c.grantTarget(ctx, t), user)
		fix = append(fix, fixes[t])
	}
	return &MissingGrantsError{Missing: missing, Fix: strings.Join(fix, "; "), Fixes: fixes}
}

// grantee names the connection's user as a GRANT statement names it: 'user'@'host' on MySQL and
// MariaDB (the account the server matched), the quoted role on PostgreSQL; a placeholder when the
// server does not say.
func (c *Conn) grantee(ctx context.Context) string {
	var q string
	switch c.name {
	case MySQL:
		q = "select current_user()"
	case Postgres:
		q = "select current_user"
	default:
		return "<the worker's user>"
	}
	var user string
	if err := c.db.QueryRowxContext(ctx, q).Scan(&user); err != nil || user == "" {
		return "<the worker's user>"
	}
	if c.name == Postgres {
		return c.d.quote(user)
	}
	name, host, _ := strings.Cut(user, "@")
	esc := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	return esc(name) + "@" + esc(host)
}

// hasGrant reports whether the connection's user holds g, by running the statement that needs it with
// an impossible WHERE in a transaction that is rolled back: the server checks privileges before it
// looks at rows, so this covers roles, wildcards and column grants exactly as the real statements do.
func (c *Conn) hasGrant(ctx context.Context, g Grant) (bool, error) {
	t := c.d.quote(g.Table)
	if c.caps.NoPrivileges {
		// Only whether the table exists, by a read outside any transaction: the probes' transactions
		// would wait for the write lock another process may hold (SQLite's BEGIN IMMEDIATE) and stop
		// the worker at start after the busy timeout.
		rows, err := c.db.QueryContext(ctx, "select 1 from "+t+" where 1 = 0")
		if err != nil {
			return false, c.translate(err)
		}
		return true, rows.Close()
	}
	col := "id" // jobs, failed_jobs and job_batches have one; the cache table is keyed by key
	if g.Table == c.tables.Cache {
		col = "expiration"
	}
	probe := map[string]string{
		"SELECT": "select 1 from " + t + " where 1 = 0",
		"DELETE": "delete from " + t + " where 1 = 0",
		"UPDATE": "update " + t + " set " + col + " = " + col + " where 1 = 0",
		// Inserting the table's own columns: MySQL checks every column without a default otherwise.
		"INSERT": "insert into " + t + " select * from " + t + " where 1 = 0",
	}[g.Privilege]
	err := c.InTx(ctx, func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, probe)
		if err == nil {
			return errProbeDone
		}
		return err
	})
	var my *mysql.MySQLError
	var pg *pgconn.PgError
	switch {
	case errors.Is(err, errProbeDone):
		return true, nil
	case errors.As(err, &my) && (my.Number == 1142 || my.Number == 1143 || my.Number == 1044):
		// The insert probe also selects: a missing SELECT is reported by its own probe.
		return !strings.HasPrefix(my.Message, g.Privilege), nil
	case errors.As(err, &pg) && pg.Code == "42501":
		return false, nil
	}
	return false, err
}

// sequenceUsage reports whether the user may take ids from the sequence of table's id column, and
// its name; true where the dialect needs no such grant or the column has no sequence.
func (c *Conn) sequenceUsage(ctx context.Context, table string) (string, bool, error) {
	q := c.d.sequenceUsageSQL()
	if q == "" {
		return "", true, nil
	}
	var seq string
	var ok bool
	err := c.db.QueryRowContext(ctx, q, c.d.quote(table)).Scan(&seq, &ok)
	if errors.Is(err, sql.ErrNoRows) {
		return "", true, nil
	}
	return seq, ok, err
}

// errProbeDone rolls a privilege probe's transaction back once its statement ran.
var errProbeDone = errors.New("probe done")

// deniedTable reads the table a privilege error names: MySQL's "… for table `db`.`t`" (or 't'),
// PostgreSQL's "permission denied for table t" (or sequence s).
var deniedTable = regexp.MustCompile("(?:(?:for|in) table [`']?(?:[^`'.]+[`']?\\.[`']?)?([^`'\\s]+)[`']?$)|(?:permission denied for (table|sequence) (\\S+))")

// DeniedFix returns the statement that grants what err was refused when err is the server refusing
// the database user a privilege on a table (MySQL's 1142 and 1143, PostgreSQL's 42501), and ""
// otherwise. MySQL names the privilege; for PostgreSQL, which does not, it grants what the commands
// and the worker do on that table.
func (c *Conn) DeniedFix(ctx context.Context, err error) string {
	var my *mysql.MySQLError
	var pg *pgconn.PgError
	var priv, table string
	switch {
	case errors.As(err, &my) && (my.Number == 1142 || my.Number == 1143):
		priv, _, _ = strings.Cut(my.Message, " ")
		if m := deniedTable.FindStringSubmatch(my.Message); m != nil {
			table = m[1]
		}
	case errors.As(err, &pg) && pg.Code == "42501":
		m := deniedTable.FindStringSubmatch(pg.Message)
		if m == nil {
			return ""
		}
		if m[2] == "sequence" {
			return fmt.Sprintf("GRANT USAGE ON SEQUENCE %s TO %s", m[3], c.grantee(ctx))
		}
		table = m[3]
		priv = "SELECT, INSERT, UPDATE, DELETE"
		if table == c.tables.FailedJobs {
			priv = "SELECT, INSERT, DELETE"
		}
	default:
		return ""
	}
	if table == "" || priv == "" {
		return ""
	}
	return fmt.Sprintf("GRANT %s ON %s TO %s", priv, c.grantTarget(ctx, table), c.grantee(ctx))
}

// grantTarget names a table as a GRANT run by an administrator names it: on PostgreSQL with DB_SCHEMA
// set, with the schema the worker's search_path finds it in, since the administrator's session has a
// search_path of its own.
func (c *Conn) grantTarget(ctx context.Context, table string) string {
	if c.name != Postgres || c.schema == "" || strings.HasPrefix(table, "SEQUENCE ") {
		return table
	}
	var schema string
	q := "select n.nspname from pg_class t join pg_namespace n on n.oid = t.relnamespace where t.oid = to_regclass($1)"
	if err := c.db.QueryRowxContext(ctx, q, c.d.quote(table)).Scan(&schema); err != nil || schema == "" {
		return table
	}
	return pgIdent(schema) + "." + table
}

// BatchesTableExists reports whether the job_batches table exists.
func (c *Conn) BatchesTableExists(ctx context.Context) (bool, error) {
	_, err := c.hasGrant(ctx, Grant{c.tables.JobBatches, "SELECT"})
	if errors.Is(err, ErrMissingTable) {
		return false, nil
	}
	return err == nil, err
}
