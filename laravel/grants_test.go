package laravel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestCheckGrantsOptionalTables: the cache and batch tables are checked where they exist and skipped
// where they do not; the jobs and failed_jobs tables must exist.
func TestCheckGrantsOptionalTables(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		s := queuetest.NewSetup(t, db, "batch", queuetest.Options{})
		ctx := context.Background()
		all := laravel.GrantsParams{FailedJobs: true, Cache: true, Batches: true}
		if err := laravel.CheckGrants(ctx, s.Conn, all); err != nil {
			t.Fatalf("every table there: %v", err)
		}
		tb := s.Conn.Tables()
		for _, table := range []string{tb.Cache, tb.CacheLocks, tb.JobBatches} {
			if _, err := queuetest.DB(s.Conn).Exec("drop table " + table); err != nil {
				t.Fatal(err)
			}
		}
		if err := laravel.CheckGrants(ctx, s.Conn, all); err != nil {
			t.Fatalf("without the optional tables: %v", err)
		}
		if _, err := queuetest.DB(s.Conn).Exec("drop table " + tb.FailedJobs); err != nil {
			t.Fatal(err)
		}
		if err := laravel.CheckGrants(ctx, s.Conn, all); !errors.Is(err, laravel.ErrMissingTable) {
			t.Fatalf("without failed_jobs: %v, want ErrMissingTable", err)
		}
	})
}

// TestCheckGrantsBesideSQLiteWriter: on SQLite, which has no privileges, the start-up check only reads
// whether the tables exist, so another process holding the file's write lock does not stop a worker
// at start after the busy timeout.
func TestCheckGrantsBesideSQLiteWriter(t *testing.T) {
	t.Parallel()
	db := testenv.SQLite(t)
	s := queuetest.NewSetup(t, db, "batch", queuetest.Options{})
	ctx := context.Background()
	other, err := laravel.Open(ctx, queuetest.OpenParams(db))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	writer, err := queuetest.DB(other).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if _, err := writer.ExecContext(ctx, "begin immediate"); err != nil {
		t.Fatal(err)
	}
	defer writer.ExecContext(ctx, "rollback")
	check, cancel := context.WithTimeout(ctx, 3*time.Second) // the busy timeout is 10 s
	defer cancel()
	if err := laravel.CheckGrants(check, s.Conn, laravel.GrantsParams{FailedJobs: true, Cache: true, Batches: true}); err != nil {
		t.Fatalf("with another connection holding the write lock: %v", err)
	}
}
