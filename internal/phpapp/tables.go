package phpapp

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// JobRow is a row of the jobs table.
type JobRow struct {
	ID          int64
	Queue       string
	Payload     string
	Attempts    int
	ReservedAt  *int64
	AvailableAt int64
	CreatedAt   int64
}

// UUID returns the payload's uuid, or "" when the payload has none or is not JSON.
func (r JobRow) UUID() string { return payloadUUID(r.Payload) }

// FailedRow is a row of the failed_jobs table (the database-uuids provider's layout).
type FailedRow struct {
	ID         int64
	UUID       string
	Connection string
	Queue      string
	Payload    string
	Exception  string
	FailedAt   string
}

// Table returns name behind the application's DB_PREFIX, the table prefix of the connections in
// testdata/laravel's config/database.php.
func (a *App) Table(name string) string { return a.Getenv("DB_PREFIX") + name }

// Jobs returns the rows of the jobs table (DB_QUEUE_TABLE, default jobs) in id order.
func (a *App) Jobs(ctx context.Context) ([]JobRow, error) {
	table := a.Getenv("DB_QUEUE_TABLE")
	if table == "" {
		table = "jobs"
	}
	table = a.Table(table)
	var out []JobRow
	err := a.query(ctx, "SELECT id, queue, payload, attempts, reserved_at, available_at, created_at FROM "+table+" ORDER BY id",
		func(rows *sql.Rows) error {
			var r JobRow
			var reserved sql.NullInt64
			if err := rows.Scan(&r.ID, &r.Queue, &r.Payload, &r.Attempts, &reserved, &r.AvailableAt, &r.CreatedAt); err != nil {
				return err
			}
			if reserved.Valid {
				r.ReservedAt = &reserved.Int64
			}
			out = append(out, r)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read jobs: %w", err)
	}
	return out, nil
}

// FailedJobs returns the rows of the failed_jobs table in id order.
func (a *App) FailedJobs(ctx context.Context) ([]FailedRow, error) {
	var out []FailedRow
	err := a.query(ctx, "SELECT id, uuid, connection, queue, payload, exception, failed_at FROM "+a.Table("failed_jobs")+" ORDER BY id",
		func(rows *sql.Rows) error {
			var r FailedRow
			var failedAt any
			if err := rows.Scan(&r.ID, &r.UUID, &r.Connection, &r.Queue, &r.Payload, &r.Exception, &failedAt); err != nil {
				return err
			}
			r.FailedAt = fmt.Sprint(failedAt)
			if b, ok := failedAt.([]byte); ok {
				r.FailedAt = string(b)
			}
			out = append(out, r)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read failed_jobs: %w", err)
	}
	return out, nil
}

func (a *App) query(ctx context.Context, q string, scan func(*sql.Rows) error) error {
	db, err := a.open()
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func payloadUUID(payload string) string {
	var p struct {
		UUID string `json:"uuid"`
	}
	_ = json.Unmarshal([]byte(payload), &p)
	return p.UUID
}

// UniqueLockKey returns the cache key under which Laravel 8.x holds the lock of a ShouldBeUnique job:
// the cache prefix, "laravel_unique_job:", the class and the unique id, with no separator between the
// last two.
func (a *App) UniqueLockKey(class, uniqueID string) string {
	return a.Getenv("CACHE_PREFIX") + "laravel_unique_job:" + class + uniqueID
}

// LockHeld reports whether the database cache store's cache_locks table holds key (see
// UniqueLockKey). Locks in Redis (WithRedisCache) are not visible here.
func (a *App) LockHeld(ctx context.Context, key string) (bool, error) {
	q := `SELECT COUNT(*) FROM ` + a.Table("cache_locks") + ` WHERE "key" = ?`
	switch a.db.Dialect {
	case "mysql", "mariadb":
		q = "SELECT COUNT(*) FROM " + a.Table("cache_locks") + " WHERE `key` = ?"
	case "pgsql":
		q = `SELECT COUNT(*) FROM ` + a.Table("cache_locks") + ` WHERE "key" = $1`
	}
	db, err := a.open()
	if err != nil {
		return false, err
	}
	var n int
	if err := db.QueryRowContext(ctx, q, key).Scan(&n); err != nil {
		return false, fmt.Errorf("read cache_locks: %w", err)
	}
	return n > 0, nil
}
