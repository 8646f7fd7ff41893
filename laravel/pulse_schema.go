package laravel

import (
	"context"
	"fmt"
	"strings"
)

// CreatePulseTables creates pulse_values, pulse_entries and pulse_aggregates with the DDL that
// Laravel's schema builder produces from Pulse's migration (2023_06_07_000001_create_pulse_tables):
// key_hash is a virtual column unhex(md5(key)) on MySQL and MariaDB, a stored md5(key)::uuid on
// PostgreSQL, and a plain string that Pulse fills itself on SQLite. It is for tests and demos; an app
// creates them with `php artisan migrate`. Behind a table prefix, the tables and their indexes are
// named with it, as with prefix_indexes.
func CreatePulseTables(ctx context.Context, c *Conn) error {
	for _, stmt := range c.d.pulse().ddl {
		stmt = strings.ReplaceAll(stmt, "pulse_", c.pulseTable("pulse_"))
		if _, err := c.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create Pulse tables: %s: %w", stmt, c.translate(err))
		}
	}
	return nil
}
