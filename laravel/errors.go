package laravel

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// MissingTableError reports a table the operation needs that does not exist, and the artisan command
// that creates it. It wraps ErrMissingTable and the driver's error.
type MissingTableError struct {
	Table string
	Fix   string
	Hint  string // another cause to check, when there is one
	// Hidden, on PostgreSQL, says where the table is when it exists in a schema DB_SCHEMA names but
	// the worker's user cannot see (no USAGE), with the fix.
	Hidden string
	Err    error
}

// Error names the table and the fix.
func (e *MissingTableError) Error() string {
	if e.Hidden != "" {
		return fmt.Sprintf("%v: table %q is not in the worker's search_path: %s", ErrMissingTable, e.Table, e.Hidden)
	}
	s := fmt.Sprintf("%v: table %q does not exist: run %q", ErrMissingTable, e.Table, e.Fix)
	if e.Hint != "" {
		s += ", " + e.Hint
	}
	return s
}

// Unwrap returns ErrMissingTable and the driver's error.
func (e *MissingTableError) Unwrap() []error { return []error{ErrMissingTable, e.Err} }

var missingTableName = regexp.MustCompile(`(?:Table '(?:[^'.]*\.)?([^']+)' doesn't exist|relation "(?:[^".]*\.)?([^"]+)" does not exist|no such table: (?:\w+\.)?(\w+))`)

// translate maps a native driver error to the package sentinels, wrapped so both stay visible, and
// counts conflicts. It returns err unchanged when there is nothing to translate.
func (c *Conn) translate(err error) error {
	if err == nil {
		return nil
	}
	var kind error
	switch c.d.classify(err) {
	case errDeadlock:
		kind = ErrDeadlock
	case errBusy:
		kind = ErrBusy
	case errMissingTable:
		return c.missingTable(err)
	case errUnique:
		kind = ErrDuplicate
	}
	switch kind {
	case ErrDeadlock:
		c.deadlocks.Add(1)
	case ErrBusy:
		c.busy.Add(1)
	case nil:
		return err
	}
	return fmt.Errorf("%w: %w", kind, err)
}

func (c *Conn) missingTable(err error) error {
	m := missingTableName.FindStringSubmatch(err.Error())
	if m == nil {
		// PostgreSQL's 42P01 also names a statement's mistake ("missing FROM-clause entry for
		// table"): no table is missing, and no migration would help.
		return err
	}
	return c.newMissingTable(m[1]+m[2]+m[3], err)
}

// newMissingTable names the table, the command that creates it and, with DB_SCHEMA set, the search_path.
func (c *Conn) newMissingTable(name string, err error) *MissingTableError {
	fix := "php artisan queue:table && php artisan migrate"
	switch name {
	case c.tables.FailedJobs:
		fix = "php artisan queue:failed-table && php artisan migrate"
	case c.tables.JobBatches:
		fix = "php artisan queue:batches-table && php artisan migrate"
	case c.tables.Cache:
		fix = "php artisan cache:table && php artisan migrate"
	case c.tables.CacheLocks:
		// cache:table's migration (Laravel 8+) creates the cache table too, which an application from
		// before 8 has already.
		fix = "php artisan cache:table && php artisan migrate (with a cache table from before Laravel 8, keep only the cache_locks part of that migration)"
	}
	e := &MissingTableError{Table: name, Fix: fix, Err: err, Hidden: c.hiddenTable(name)}
	if c.schema != "" {
		// A search_path naming a schema that does not exist, or not the tables' one, hides every table.
		e.Hint = fmt.Sprintf("or check DB_SCHEMA (%s): the tables must be in a schema it names, and each schema must exist", c.schema)
	}
	return e
}

// hiddenTable, on PostgreSQL, finds a table in a schema DB_SCHEMA names but the worker's user has no
// USAGE on (PostgreSQL then leaves the schema out of the search_path, silently), or, without
// DB_SCHEMA, in a schema the server's search_path does not name; it returns the fix, or "".
func (c *Conn) hiddenTable(name string) string {
	if c.name != Postgres {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if c.schema == "" {
		// No DB_SCHEMA: the server's search_path ("$user", public) does not name the schema the
		// application's migrations made the table in.
		var schemas []string
		q := "select n.nspname from pg_class t join pg_namespace n on n.oid = t.relnamespace " +
			"where t.relname = $1 and t.relkind in ('r', 'p') and has_schema_privilege(n.oid, 'USAGE') order by 1 limit 4"
		if err := c.db.SelectContext(ctx, &schemas, q, name); err != nil || len(schemas) == 0 || len(schemas) > 3 {
			return ""
		}
		return fmt.Sprintf("a table of that name is in schema %s, which the search_path does not name: set DB_SCHEMA (search_path in config/database.php) to the application's", strings.Join(schemas, ", "))
	}
	q := "select has_schema_privilege(n.oid, 'USAGE') from pg_class t join pg_namespace n on n.oid = t.relnamespace " +
		"where t.relname = $1 and n.nspname = $2 and t.relkind in ('r', 'p')"
	for _, schema := range strings.Split(c.schema, ",") {
		schema = strings.Trim(strings.TrimSpace(schema), `"`)
		var usage bool
		if err := c.db.QueryRowxContext(ctx, q, name, schema).Scan(&usage); err == nil && !usage {
			return fmt.Sprintf("it is in schema %s, on which the database user has no USAGE: run GRANT USAGE ON SCHEMA %s TO %s", schema, pgIdent(schema), c.grantee(ctx))
		}
	}
	return ""
}

// pgIdent writes a PostgreSQL name as a statement names it: plain when it is a lower-case identifier,
// else quoted.
func pgIdent(name string) string {
	if plainIdent.MatchString(name) {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)

// retry runs fn up to tries times while it fails with ErrDeadlock (see deadlockRetry), counting the
// retries in Stats.
func (c *Conn) retry(ctx context.Context, tries int, fn func() error) error {
	return deadlockRetry(tries).do(ctx, fn, func() { c.retries.Add(1) })
}
