package laravel

import (
	"context"
	"errors"
	"fmt"
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
}

// Grant is one privilege on one table.
type Grant struct {
	Table     string
	Privilege string // SELECT, INSERT, UPDATE or DELETE
}

// MissingGrantsError lists the privileges the database user lacks, with the statement that grants them.
type MissingGrantsError struct {
	Missing []Grant
	Fix     string
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
// table, and select and insert into failed_jobs. A missing grant is a *MissingGrantsError naming each
// privilege; a missing table is a *MissingTableError. On SQLite, which has no privileges, this finds
// missing tables.
func CheckGrants(ctx context.Context, c *Conn, p GrantsParams) error {
	want := []Grant{{c.tables.Jobs, "SELECT"}, {c.tables.Jobs, "INSERT"}, {c.tables.Jobs, "UPDATE"}, {c.tables.Jobs, "DELETE"}}
	if p.FailedJobs {
		want = append(want, Grant{c.tables.FailedJobs, "SELECT"}, Grant{c.tables.FailedJobs, "INSERT"})
	}
	var missing []Grant
	for _, g := range want {
		ok, err := c.hasGrant(ctx, g)
		if err != nil {
			return fmt.Errorf("check %s on %s: %w", g.Privilege, g.Table, err)
		}
		if !ok {
			missing = append(missing, g)
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
	for _, t := range order {
		fix = append(fix, fmt.Sprintf("GRANT %s ON %s TO <the worker's user>", strings.Join(byTable[t], ", "), t))
	}
	return &MissingGrantsError{Missing: missing, Fix: strings.Join(fix, "; ")}
}

// hasGrant reports whether the connection's user holds g, by running the statement that needs it with
// an impossible WHERE in a transaction that is rolled back: the server checks privileges before it
// looks at rows, so this covers roles, wildcards and column grants exactly as the real statements do.
func (c *Conn) hasGrant(ctx context.Context, g Grant) (bool, error) {
	t := c.d.quote(g.Table)
	probe := map[string]string{
		"SELECT": "select 1 from " + t + " where 1 = 0",
		"DELETE": "delete from " + t + " where 1 = 0",
		"UPDATE": "update " + t + " set id = id where 1 = 0",
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

// errProbeDone rolls a privilege probe's transaction back once its statement ran.
var errProbeDone = errors.New("probe done")
