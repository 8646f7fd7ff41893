package laravel

import (
	"context"
	"fmt"
	"math"
	"time"
)

// MaxClockSkew is the clock difference between a worker and its database server that is reported.
const MaxClockSkew = time.Second

// ClockSkewParams is the worker's idea of now, to compare with the database server's.
type ClockSkewParams struct {
	Now func() time.Time // nil is time.Now
}

// clockSQL reads the server's clock as Unix seconds with a fraction, by server family. SQLite runs in
// the worker's own process, on its clock, and has none of its own.
var clockSQL = map[Dialect]string{
	MySQL:    "select unix_timestamp(now(6))",
	MariaDB:  "select unix_timestamp(now(6))",
	Postgres: "select extract(epoch from clock_timestamp())::float8",
}

// ClockSkew returns how far the worker's clock is ahead of the database server's (negative: behind),
// measured against the middle of the round trip. Claims compare reserved_at and available_at with
// the claiming worker's clock, as Laravel's do, so workers whose clocks disagree take each other's
// jobs early (before retry_after) or late. SQLite reports 0.
func ClockSkew(ctx context.Context, c *Conn, p ClockSkewParams) (time.Duration, error) {
	q, ok := clockSQL[c.Dialect()]
	if !ok {
		return 0, nil
	}
	now := p.Now
	if now == nil {
		now = time.Now
	}
	sent := time.Now()
	var server float64
	if err := c.db.QueryRowxContext(ctx, q).Scan(&server); err != nil {
		return 0, fmt.Errorf("read the database clock: %w", c.translate(err))
	}
	rtt := time.Since(sent)
	// The server read its clock about half a round trip before the answer arrived.
	workerAt := now().Add(-rtt / 2)
	sec, frac := math.Modf(server)
	return workerAt.Sub(time.Unix(int64(sec), int64(frac*1e9))), nil
}
