package laravel

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// Validate checks that every table name is a plain SQL identifier, so names can be quoted safely. The
// error names the field and the fix and wraps ErrInvalid.
func (t Tables) Validate() error {
	for _, f := range []struct{ field, name string }{
		{"jobs", t.Jobs}, {"failed_jobs", t.FailedJobs}, {"job_batches", t.JobBatches},
		{"cache", t.Cache}, {"cache_locks", t.CacheLocks},
	} {
		if !identifier.MatchString(f.name) {
			return fmt.Errorf("%w: tables.%s %q is not a plain table name: use 1 to 64 letters, digits and underscores, not starting with a digit", ErrInvalid, f.field, f.name)
		}
	}
	return nil
}

// withDefaults fills empty names with Laravel's defaults.
func (t Tables) withDefaults() Tables {
	d := DefaultTables()
	for _, f := range []struct {
		dst *string
		def string
	}{
		{&t.Jobs, d.Jobs}, {&t.FailedJobs, d.FailedJobs}, {&t.JobBatches, d.JobBatches},
		{&t.Cache, d.Cache}, {&t.CacheLocks, d.CacheLocks},
	} {
		if *f.dst == "" {
			*f.dst = f.def
		}
	}
	return t
}

// withPrefix returns t with prefix before every name, as Laravel's query builder puts a connection's
// table prefix before the names it is given.
func (t Tables) withPrefix(prefix string) Tables {
	for _, f := range []*string{&t.Jobs, &t.FailedJobs, &t.JobBatches, &t.Cache, &t.CacheLocks} {
		*f = prefix + *f
	}
	return t
}

// SchemaParams chooses which of Laravel's migrations CreateSchema reproduces.
type SchemaParams struct {
	// LegacyJobsIndex creates the Laravel 5.4 composite (queue, reserved_at) index instead of the
	// 5.5+ single (queue) index.
	LegacyJobsIndex bool
	// FailedJobsWithoutUUID creates the 5.x–7.x failed_jobs table, which has no uuid column.
	FailedJobsWithoutUUID bool
	// SkipBatches and SkipCache leave out job_batches and the cache tables.
	SkipBatches bool
	SkipCache   bool
	// SmallAttempts makes jobs.attempts an unsigned smallint, as the jobs stub of Laravel 13.6+
	// does, instead of a tinyint.
	SmallAttempts bool
}

// CreateSchema creates the tables with the DDL Laravel 8.83's migrations produce for the connection's
// dialect: jobs, failed_jobs, job_batches, cache and cache_locks. It fails if a table already exists.
func CreateSchema(ctx context.Context, c *Conn, p SchemaParams) error {
	for _, stmt := range schemaDDL(c.d, c.tables, p) {
		if _, err := c.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create schema: %s: %w", stmt, c.translate(err))
		}
	}
	c.readAttemptsLimit(ctx)
	return nil
}

// column is one column of a create table statement.
type column struct {
	name     string
	typ      colType
	nullable bool
}

// schemaDDL returns the statements of Laravel's schema builder for the queue and cache tables.
func schemaDDL(d dialect, t Tables, p SchemaParams) []string {
	create := func(table string, cols []column) string {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = d.quote(c.name) + " " + d.columnType(c.typ, c.nullable)
		}
		return "create table " + d.quote(table) + " (" + strings.Join(parts, ", ") + ")" + d.createTableSuffix()
	}
	index := func(table string, cols ...string) string {
		return d.indexDDL(table, table+"_"+strings.Join(cols, "_")+"_index", cols)
	}
	unique := func(table, col string) string { return d.uniqueDDL(table, table+"_"+col+"_unique", col) }
	// A string primary key: created with the table where the dialect declares it inside.
	withPrimary := func(table string, cols []column, col string) []string {
		return d.primaryDDL(create(table, cols), table, col)
	}
	id := column{name: "id", typ: colID}
	str := func(name string) column { return column{name: name, typ: colString} }
	text := func(name string) column { return column{name: name, typ: colText} }
	longText := func(name string) column { return column{name: name, typ: colLongText} }
	integer := func(name string, nullable bool) column { return column{name, colInteger, nullable} }
	uint := func(name string, nullable bool) column { return column{name, colUInt, nullable} }

	var out []string
	attempts := colTinyUInt
	if p.SmallAttempts {
		attempts = colSmallUInt
	}
	out = append(out, create(t.Jobs, []column{
		id, str("queue"), longText("payload"), {name: "attempts", typ: attempts},
		uint("reserved_at", true), uint("available_at", false), uint("created_at", false),
	}))
	if p.LegacyJobsIndex {
		out = append(out, index(t.Jobs, "queue", "reserved_at"))
	} else {
		out = append(out, index(t.Jobs, "queue"))
	}

	failedCols := []column{id}
	if !p.FailedJobsWithoutUUID {
		failedCols = append(failedCols, str("uuid"))
	}
	failedCols = append(failedCols, text("connection"), text("queue"), longText("payload"), longText("exception"),
		column{name: "failed_at", typ: colTimestamp})
	out = append(out, create(t.FailedJobs, failedCols))
	if !p.FailedJobsWithoutUUID {
		out = append(out, unique(t.FailedJobs, "uuid"))
	}

	if !p.SkipBatches {
		out = append(out, withPrimary(t.JobBatches, []column{
			str("id"), str("name"),
			integer("total_jobs", false), integer("pending_jobs", false), integer("failed_jobs", false),
			text("failed_job_ids"), {"options", colMediumText, true},
			integer("cancelled_at", true), integer("created_at", false), integer("finished_at", true),
		}, "id")...)
	}
	if !p.SkipCache {
		out = append(out, withPrimary(t.Cache, []column{
			str("key"), {name: "value", typ: colMediumText}, integer("expiration", false),
		}, "key")...)
		out = append(out, withPrimary(t.CacheLocks, []column{
			str("key"), str("owner"), integer("expiration", false),
		}, "key")...)
	}
	return out
}
