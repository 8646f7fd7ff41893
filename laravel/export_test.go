package laravel

import (
	"context"
	"time"
)

// WaitFloorProbes waits for the probes below the claims' lower bounds (see idFloors) running on c, so
// that a test sees their outcome at a known point.
func WaitFloorProbes(c *Conn) { c.floors.wait() }

// QueryRowScan runs a query that returns one row on c and scans it into dest, for tests that read
// the server's own views.
func QueryRowScan(c *Conn, query string, dest ...any) error {
	return c.db.QueryRowContext(context.Background(), query).Scan(dest...)
}

// SetIdleTxTimeout sets the timeout Open gives the pool's idle transactions (see idleTxTimeout) until
// the returned function restores it, for a test that waits for the server to end one.
func SetIdleTxTimeout(d time.Duration) (restore func()) {
	old := idleTxTimeout.Swap(int64(d))
	return func() { idleTxTimeout.Store(old) }
}
