package phpapp

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// LogEntry is one row of interop_log: one run of a job (or of a callback: "batch.then",
// "batch.catch", "batch.finally", "chain.catch", "<class>@failed") and what the runner saw.
type LogEntry struct {
	ID       int64
	Class    string // the job class; raw jobs "Class@method"; closures "Closure"
	UUID     string // the payload uuid of the job being run
	JobID    string // the jobs row id
	Attempts int    // attempts as the runner counted them, including this one
	Queue    string
	Runner   string         // "php", or whatever a Go handler writes
	Props    map[string]any // the job's properties by name (all visibilities), JSON-decoded
	RawProps string         // Props as stored
	At       time.Time
}

// Insert writes a row into interop_log, for Go handlers that want to be compared with PHP's runs.
func (a *App) Insert(ctx context.Context, e LogEntry) error {
	db, err := a.open()
	if err != nil {
		return err
	}
	props := e.RawProps
	if props == "" {
		b, err := json.Marshal(e.Props)
		if err != nil {
			return fmt.Errorf("insert interop_log: %w", err)
		}
		props = string(b)
	}
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	q := "INSERT INTO " + a.Table("interop_log") + " (class, uuid, job_id, attempts, queue, runner, props, logged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
	if a.db.Dialect == "pgsql" {
		q = "INSERT INTO " + a.Table("interop_log") + " (class, uuid, job_id, attempts, queue, runner, props, logged_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
	}
	_, err = db.ExecContext(ctx, q, e.Class, nullString(e.UUID), nullString(e.JobID), e.Attempts,
		nullString(e.Queue), e.Runner, props, at.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert interop_log: %w", err)
	}
	return nil
}

// Log returns every interop_log row in the order written.
func (a *App) Log(ctx context.Context) ([]LogEntry, error) {
	var out []LogEntry
	err := a.query(ctx, "SELECT id, class, uuid, job_id, attempts, queue, runner, props, logged_at FROM "+a.Table("interop_log")+" ORDER BY id",
		func(rows *sql.Rows) error {
			var e LogEntry
			var uuid, jobID, queue sql.NullString
			var at int64
			if err := rows.Scan(&e.ID, &e.Class, &uuid, &jobID, &e.Attempts, &queue, &e.Runner, &e.RawProps, &at); err != nil {
				return err
			}
			e.UUID, e.JobID, e.Queue = uuid.String, jobID.String, queue.String
			e.At = time.UnixMicro(at)
			if err := json.Unmarshal([]byte(e.RawProps), &e.Props); err != nil {
				return fmt.Errorf("row %d: props: %w", e.ID, err)
			}
			out = append(out, e)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read interop_log: %w", err)
	}
	return out, nil
}

// WaitLog polls interop_log until done returns true for its rows, and returns them; it gives up with
// an error, and the last rows, when ctx ends.
func (a *App) WaitLog(ctx context.Context, done func([]LogEntry) bool) ([]LogEntry, error) {
	for {
		entries, err := a.Log(ctx)
		if err == nil && done(entries) {
			return entries, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return entries, fmt.Errorf("wait for interop_log (%d rows so far): %w", len(entries), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DB returns a database/sql handle on the application's database, closed when the test ends.
func (a *App) DB() *sql.DB {
	a.t.Helper()
	db, err := a.open()
	if err != nil {
		a.t.Fatalf("phpapp: %v", err)
	}
	return db
}

func (a *App) open() (*sql.DB, error) {
	a.openOnce.Do(func() {
		dsn := a.db.HelperDSN()
		if a.db.Dialect == "sqlite" {
			// PHP writes to the same file: wait for its locks instead of failing with SQLITE_BUSY.
			dsn = "file:" + dsn + "?_pragma=busy_timeout(10000)"
		}
		a.sqlDB, a.openErr = sql.Open(a.db.Driver, dsn)
		if a.openErr != nil {
			a.openErr = fmt.Errorf("open %s: %w", a.db.Dialect, a.openErr)
		}
	})
	return a.sqlDB, a.openErr
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
