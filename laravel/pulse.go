package laravel

import (
	"context"
	"crypto/md5"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
)

// Laravel Pulse's tables, as its migration names them.
const (
	PulseEntries    = "pulse_entries"
	PulseAggregates = "pulse_aggregates"
	PulseValues     = "pulse_values"
)

// pulseTable is Pulse's table name behind the connection's table prefix, as Pulse's DatabaseStorage
// names it through the query builder.
func (c *Conn) pulseTable(name string) string { return c.tablePrefix + name }

// PulseSchema is what PulseInspect found.
type PulseSchema struct {
	// Present says pulse_entries and pulse_aggregates exist.
	Present bool
	// KeyHashGenerated says key_hash is a generated column (Pulse's migration on MySQL, MariaDB and
	// PostgreSQL): it is left to the server. Otherwise (SQLite, or after Pulse's 2026 migration that
	// made it plain) it is written as the generated column computes it.
	KeyHashGenerated bool
}

// PulseInspect reads whether the app has Pulse's tables and how key_hash is filled.
func (c *Conn) PulseInspect(ctx context.Context) (PulseSchema, error) {
	var s PulseSchema
	q := c.rebind(c.d.pulse().keyHashSQL)
	rows, err := c.db.QueryContext(ctx, q, c.pulseTable(PulseEntries), c.pulseTable(PulseAggregates))
	if err != nil {
		return s, fmt.Errorf("inspect Pulse's tables: %w", c.translate(err))
	}
	defer rows.Close()
	found, generated := 0, 0
	for rows.Next() {
		var table, expr string
		if err := rows.Scan(&table, &expr); err != nil {
			return s, fmt.Errorf("inspect Pulse's tables: %w", err)
		}
		found++
		if expr != "" {
			generated++
		}
	}
	if err := rows.Err(); err != nil {
		return s, fmt.Errorf("inspect Pulse's tables: %w", c.translate(err))
	}
	s.Present = found == 2
	s.KeyHashGenerated = s.Present && generated == 2
	return s, nil
}

// PulseEntry is one pulse_entries row.
type PulseEntry struct {
	Timestamp int64
	Type      string
	Key       string
	Value     int64
}

// PulseAggregate is one pulse_aggregates row to add: a count is added to the stored value, a max
// replaces it when greater.
type PulseAggregate struct {
	Bucket    int64
	Period    int64
	Type      string
	Aggregate string // "count" or "max"
	Key       string
	Value     int64
}

// PulseRecordParams are the rows PulseRecord writes.
type PulseRecordParams struct {
	Schema     PulseSchema
	Entries    []PulseEntry
	Aggregates []PulseAggregate
}

// pulseChunk bounds the rows of one insert statement (Pulse's pulse.storage.database.chunk).
const pulseChunk = 500

// PulseRecord writes the rows in one transaction, as Pulse's DatabaseStorage::store does: entries are
// inserted, aggregates upserted on (bucket, period, type, aggregate, key_hash).
func (c *Conn) PulseRecord(ctx context.Context, p *PulseRecordParams) error {
	if len(p.Entries) == 0 && len(p.Aggregates) == 0 {
		return nil
	}
	hash := !p.Schema.KeyHashGenerated
	// Three tries on a deadlock, as Pulse's DatabaseStorage::store runs its transaction: flushes of
	// several workers upsert the same aggregate rows.
	err := c.retry(ctx, 3, func() error { return c.pulseRecordTx(ctx, p, hash) })
	if err != nil {
		return fmt.Errorf("record Pulse rows: %w", err)
	}
	return nil
}

// pulseRecordTx writes the rows in one transaction.
func (c *Conn) pulseRecordTx(ctx context.Context, p *PulseRecordParams, hash bool) error {
	return c.InTx(ctx, func(tx *sqlx.Tx) error {
		for chunk := range chunks(p.Entries, pulseChunk) {
			cols := []string{"timestamp", "type", "key"}
			if hash {
				cols = append(cols, "key_hash")
			}
			cols = append(cols, "value")
			args := make([]any, 0, len(chunk)*len(cols))
			for _, e := range chunk {
				args = append(args, e.Timestamp, e.Type, e.Key)
				if hash {
					args = append(args, c.pulseKeyHash(e.Key))
				}
				args = append(args, e.Value)
			}
			if _, err := tx.ExecContext(ctx, c.insertRowsSQL(c.pulseTable(PulseEntries), cols, len(chunk)), args...); err != nil {
				return err
			}
		}
		for _, agg := range []string{"count", "max"} {
			var rows []PulseAggregate
			for _, a := range p.Aggregates {
				if a.Aggregate == agg {
					rows = append(rows, a)
				}
			}
			for chunk := range chunks(rows, pulseChunk) {
				if err := c.pulseUpsert(ctx, tx, agg, hash, chunk); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// pulseUpsert adds one chunk of aggregates of one kind.
func (c *Conn) pulseUpsert(ctx context.Context, tx *sqlx.Tx, agg string, hash bool, rows []PulseAggregate) error {
	cols := []string{"bucket", "period", "type", "aggregate", "key"}
	if hash {
		cols = append(cols, "key_hash")
	}
	cols = append(cols, "value")
	args := make([]any, 0, len(rows)*len(cols))
	for _, a := range rows {
		args = append(args, a.Bucket, a.Period, a.Type, a.Aggregate, a.Key)
		if hash {
			args = append(args, c.pulseKeyHash(a.Key))
		}
		args = append(args, a.Value)
	}
	set := c.d.pulse().addSQL
	if agg == "max" {
		set = c.d.pulse().maxSQL
	}
	table := c.pulseTable(PulseAggregates)
	set = strings.ReplaceAll(set, "{table}", c.quote(table))
	_, err := tx.ExecContext(ctx, c.insertRowsSQL(table, cols, len(rows))+set, args...)
	return err
}

// pulseKeyHash is what Pulse's key_hash holds for key.
func (c *Conn) pulseKeyHash(key string) any {
	sum := md5.Sum([]byte(key))
	return c.d.pulse().keyHash(sum)
}

// insertRowsSQL returns an insert of n rows of cols into table, rebound.
func (c *Conn) insertRowsSQL(table string, cols []string, n int) string {
	row := "(" + placeholders(len(cols)) + ")"
	return c.rebind("insert into " + c.quote(table) + " (" + quoteAll(c.d, cols) + ") values " + strings.TrimSuffix(strings.Repeat(row+", ", n), ", "))
}

// chunks yields s in slices of at most n.
func chunks[T any](s []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}

// pulseSQL is what Laravel Pulse's tables differ in between dialects.
type pulseSQL struct {
	// keyHashSQL reads (table name, "" or a generation expression) for the key_hash columns of the
	// two tables named by its ? placeholders, in the current database or schema.
	keyHashSQL string
	// addSQL and maxSQL end an insert into pulse_aggregates so that an existing row adds the new
	// value, or keeps the greater one, as Pulse's DatabaseStorage upserts do; {table} stands for the
	// table's quoted name.
	addSQL, maxSQL string
	// keyHash is the value key_hash holds for a key whose MD5 is sum.
	keyHash func(sum [16]byte) any
	// ddl creates the tables as Pulse's migration does (see CreatePulseTables).
	ddl []string
}

// conflictUpdate is the portable ON CONFLICT clause of pulse_aggregates' upserts; fn combines the
// stored and the new value.
func conflictUpdate(fn string) string {
	stored, excluded := `{table}."value"`, `excluded."value"`
	expr := stored + " + " + excluded
	if fn != "" {
		expr = fn + "(" + stored + ", " + excluded + ")"
	}
	return ` on conflict ("bucket", "period", "type", "aggregate", "key_hash") do update set "value" = ` + expr
}
