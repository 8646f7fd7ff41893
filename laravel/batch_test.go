package laravel_test

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// insertBatch writes a job_batches row as Laravel's DatabaseBatchRepository::store does.
func insertBatch(t *testing.T, c *laravel.Conn, id string, jobs int) {
	t.Helper()
	options := `a:1:{s:13:"allowFailures";b:0;}`
	if c.Dialect() == laravel.Postgres {
		options = base64.StdEncoding.EncodeToString([]byte(options))
	}
	q := queuetest.Rebind(c, "insert into "+queuetest.Q(c, c.Tables().JobBatches)+" (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, created_at, cancelled_at, finished_at) values (?, ?, ?, ?, 0, '[]', ?, ?, null, null)")
	if _, err := queuetest.DB(c).Exec(q, id, "import", jobs, jobs, options, int64(1700000000)); err != nil {
		t.Fatalf("insert batch: %v", err)
	}
}

func TestBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		s := queuetest.NewSetup(t, db, laravel.DefaultStrategy, queuetest.Options{})
		c := s.Conn
		const id = "9a6f1c52-8c3e-4b7e-9d1a-3f2b1c0d4e5f"
		insertBatch(t, c, id, 3)

		b, err := c.BatchFind(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if b.Name != "import" || b.TotalJobs != 3 || b.PendingJobs != 3 || len(b.FailedJobIDs) != 0 ||
			string(b.Options) != `a:1:{s:13:"allowFailures";b:0;}` || b.CreatedAt != 1700000000 || b.FinishedAt != nil || b.CancelledAt != nil {
			t.Fatalf("found %+v", b)
		}
		if _, err := c.BatchFind(ctx, "nope"); !errors.Is(err, laravel.ErrBatchNotFound) {
			t.Fatalf("missing batch: err = %v, want ErrBatchNotFound", err)
		}

		// Job a fails, then succeeds on retry; b fails for good; c succeeds.
		steps := []struct {
			success          bool
			uuid             string
			pending, failed  int
			ids              []string
			finished, ranAll bool
		}{
			{false, "a", 3, 1, []string{"a"}, false, false},
			{false, "a", 3, 2, []string{"a"}, false, false},
			{false, "b/é", 3, 3, []string{"a", "b/é"}, false, true},
			{true, "a", 2, 3, []string{"b/é"}, false, false},
			{true, "c", 1, 3, []string{"b/é"}, false, false},
			{true, "d", 0, 3, []string{"b/é"}, true, false},
		}
		for i, st := range steps {
			var counts *laravel.BatchCounts
			if st.success {
				counts, err = c.BatchRecordSuccess(ctx, id, st.uuid)
			} else {
				counts, err = c.BatchRecordFailure(ctx, id, st.uuid)
			}
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if counts.PendingJobs != st.pending || counts.FailedJobs != st.failed || counts.AllJobsHaveRanExactlyOnce() != st.ranAll {
				t.Fatalf("step %d: counts %+v, want pending %d failed %d", i, counts, st.pending, st.failed)
			}
			b, err := c.BatchFind(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(b.FailedJobIDs, st.ids) || (b.FinishedAt != nil) != st.finished {
				t.Fatalf("step %d: batch %+v, want failed ids %v finished %v", i, b, st.ids, st.finished)
			}
		}
		var raw string
		if err := queuetest.DB(c).QueryRow(queuetest.Rebind(c, "select failed_job_ids from "+queuetest.Q(c, c.Tables().JobBatches)+" where id = ?"), id).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if raw != `["b\/\u00e9"]` {
			t.Fatalf("failed_job_ids = %s, want PHP's json_encode form", raw)
		}
		if _, err := c.BatchRecordSuccess(ctx, "nope", "x"); !errors.Is(err, laravel.ErrBatchNotFound) {
			t.Fatalf("success on a missing batch: err = %v", err)
		}

		insertBatch(t, c, "other", 2)
		if err := c.BatchCancel(ctx, "other", 1700000100); err != nil {
			t.Fatal(err)
		}
		o, err := c.BatchFind(ctx, "other")
		if err != nil || o.CancelledAt == nil || *o.CancelledAt != 1700000100 || o.FinishedAt == nil || *o.FinishedAt != 1700000100 {
			t.Fatalf("cancelled batch = %+v, %v", o, err)
		}
	})
}
