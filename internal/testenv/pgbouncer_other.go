//go:build !linux

package testenv

import "testing"

// PgBouncer is a pgbouncer process in front of a PostgreSQL server (Linux only here).
type PgBouncer struct {
	Port int
	Mode string
}

// StartPgBouncer needs Linux: the test is skipped as missing a component elsewhere.
func StartPgBouncer(t testing.TB, host string, port int, user, mode string, poolSize int) *PgBouncer {
	t.Helper()
	Missing(t, "the tests start pgbouncer on Linux only")
	return nil
}

// PostgresPooled needs Linux, as StartPgBouncer.
func PostgresPooled(t testing.TB, mode string) Database {
	t.Helper()
	Missing(t, "the tests start pgbouncer on Linux only")
	return Database{}
}

// Start needs Linux, as StartPgBouncer.
func (b *PgBouncer) Start(t testing.TB) {
	t.Helper()
	Missing(t, "the tests start pgbouncer on Linux only")
}

// Kill needs Linux, as StartPgBouncer.
func (b *PgBouncer) Kill(t testing.TB) {
	t.Helper()
	Missing(t, "the tests start pgbouncer on Linux only")
}
