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
}

// CreateSchema creates the tables with the DDL Laravel 8.83's migrations produce for the connection's
// dialect: jobs, failed_jobs, job_batches, cache and cache_locks. It fails if a table already exists.
func CreateSchema(ctx context.Context, c *Conn, p SchemaParams) error {
	for _, stmt := range schemaDDL(c.dialect, c.tables, p) {
		if _, err := c.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create schema: %s: %w", stmt, c.translate(err))
		}
	}
	return nil
}

// schemaDDL returns the statements of Laravel's schema builder for the queue and cache tables.
func schemaDDL(d Dialect, t Tables, p SchemaParams) []string {
	q := func(s string) string { return quoteIdent(d, s) }
	type col struct{ name, mysql, pgsql, sqlite string }
	create := func(table string, cols []col) string {
		parts := make([]string, len(cols))
		for i, c := range cols {
			typ := map[Dialect]string{MySQL: c.mysql, Postgres: c.pgsql, SQLite: c.sqlite}[d]
			parts[i] = strings.TrimSpace(q(c.name) + " " + typ)
		}
		s := "create table " + q(table) + " (" + strings.Join(parts, ", ")
		if d == MySQL {
			return s + ") default character set utf8mb4 collate 'utf8mb4_unicode_ci'"
		}
		return s + ")"
	}
	index := func(table string, cols ...string) string {
		name := table + "_" + strings.Join(cols, "_") + "_index"
		quoted := make([]string, len(cols))
		for i, c := range cols {
			quoted[i] = q(c)
		}
		if d == MySQL {
			return fmt.Sprintf("alter table %s add index %s(%s)", q(table), q(name), strings.Join(quoted, ", "))
		}
		return fmt.Sprintf("create index %s on %s (%s)", q(name), q(table), strings.Join(quoted, ", "))
	}
	unique := func(table, column string) string {
		name := table + "_" + column + "_unique"
		switch d {
		case MySQL:
			return fmt.Sprintf("alter table %s add unique %s(%s)", q(table), q(name), q(column))
		case Postgres:
			return fmt.Sprintf("alter table %s add constraint %s unique (%s)", q(table), q(name), q(column))
		}
		return fmt.Sprintf("create unique index %s on %s (%s)", q(name), q(table), q(column))
	}
	// In SQLite a string primary key is declared inside create table; the others add it afterwards.
	withPrimary := func(table string, cols []col, column string) []string {
		stmt := create(table, cols)
		if d == SQLite {
			return []string{strings.TrimSuffix(stmt, ")") + ", primary key (" + q(column) + "))"}
		}
		if d == MySQL {
			return []string{stmt, fmt.Sprintf("alter table %s add primary key %s(%s)", q(table), q(table+"_"+column+"_primary"), q(column))}
		}
		return []string{stmt, fmt.Sprintf("alter table %s add primary key (%s)", q(table), q(column))}
	}

	id := col{"id", "bigint unsigned not null auto_increment primary key", "bigserial primary key not null", "integer not null primary key autoincrement"}
	str := func(name string) col {
		return col{name, "varchar(255) not null", "varchar(255) not null", "varchar not null"}
	}
	text := func(name string) col { return col{name, "text not null", "text not null", "text not null"} }
	longText := func(name string) col { return col{name, "longtext not null", "text not null", "text not null"} }
	// SQLite's grammar writes nothing for a nullable column; the others write "null".
	liteNull := func(null string) string { return strings.TrimPrefix(null, "null") }
	uint := func(name, null string) col {
		return col{name, "int unsigned " + null, "integer " + null, "integer " + liteNull(null)}
	}
	integer := func(name, null string) col {
		return col{name, "int " + null, "integer " + null, "integer " + liteNull(null)}
	}

	var out []string
	jobs := create(t.Jobs, []col{
		id, str("queue"), longText("payload"),
		{"attempts", "tinyint unsigned not null", "smallint not null", "integer not null"},
		uint("reserved_at", "null"), uint("available_at", "not null"), uint("created_at", "not null"),
	})
	out = append(out, jobs)
	if p.LegacyJobsIndex {
		out = append(out, index(t.Jobs, "queue", "reserved_at"))
	} else {
		out = append(out, index(t.Jobs, "queue"))
	}

	failedCols := []col{id}
	if !p.FailedJobsWithoutUUID {
		failedCols = append(failedCols, str("uuid"))
	}
	failedCols = append(failedCols, text("connection"), text("queue"), longText("payload"), longText("exception"),
		col{"failed_at", "timestamp default CURRENT_TIMESTAMP not null",
			"timestamp(0) without time zone default CURRENT_TIMESTAMP not null",
			"datetime default CURRENT_TIMESTAMP not null"})
	out = append(out, create(t.FailedJobs, failedCols))
	if !p.FailedJobsWithoutUUID {
		out = append(out, unique(t.FailedJobs, "uuid"))
	}

	if !p.SkipBatches {
		out = append(out, withPrimary(t.JobBatches, []col{
			str("id"), str("name"),
			integer("total_jobs", "not null"), integer("pending_jobs", "not null"), integer("failed_jobs", "not null"),
			text("failed_job_ids"),
			{"options", "mediumtext null", "text null", "text"},
			integer("cancelled_at", "null"), integer("created_at", "not null"), integer("finished_at", "null"),
		}, "id")...)
	}
	if !p.SkipCache {
		out = append(out, withPrimary(t.Cache, []col{
			str("key"), {"value", "mediumtext not null", "text not null", "text not null"}, integer("expiration", "not null"),
		}, "key")...)
		out = append(out, withPrimary(t.CacheLocks, []col{
			str("key"), str("owner"), integer("expiration", "not null"),
		}, "key")...)
	}
	for i, s := range out {
		out[i] = strings.TrimSpace(s)
	}
	return out
}

// quoteIdent quotes a validated identifier for the dialect.
func quoteIdent(d Dialect, name string) string {
	if d == MySQL {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}
