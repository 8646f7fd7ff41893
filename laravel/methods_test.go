package laravel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestJobTableAndLists writes jobs through the caller's transaction and reads them, and the failed
// ones, back through the listing methods, on every database.
func TestJobTableAndLists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		c := openTables(t, queuetest.OpenParams(db))
		push := func(queue string, n byte) *laravel.JobPushParams {
			return &laravel.JobPushParams{Queue: queue, Payload: []byte(`{"uuid":"00000000-0000-4000-8000-00000000000` + string('0'+n) + `"}`), Now: 100, AvailableAt: 100 + int64(n)}
		}
		rollback := errors.New("roll back")
		err := c.InTx(ctx, func(tx *sqlx.Tx) error {
			if _, err := c.JobTable().JobInsert(ctx, tx, push("a", 1)); err != nil {
				return err
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatalf("rolled back insert: %v", err)
		}
		if jobs, err := c.JobList(ctx, &laravel.JobListParams{}); err != nil || len(jobs) != 0 {
			t.Fatalf("jobs after a rolled back insert: %d, %v", len(jobs), err)
		}
		var first int64
		if err := c.InTx(ctx, func(tx *sqlx.Tx) (err error) {
			first, err = c.JobTable().JobInsert(ctx, tx, push("a", 1))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		other, err := laravel.NewJobTable(c.Dialect(), c.Tables().Jobs)
		if err != nil {
			t.Fatal(err)
		}
		second, err := other.JobInsert(ctx, queuetest.DB(c), push("b", 2))
		if err != nil || second <= first {
			t.Fatalf("insert through the pool: id %d after %d, %v", second, first, err)
		}
		jobs, err := c.JobList(ctx, &laravel.JobListParams{})
		if err != nil || len(jobs) != 2 || jobs[0].ID != first || jobs[1].ID != second {
			t.Fatalf("JobList = %v, %v; want ids %d, %d", jobs, err, first, second)
		}
		if j := jobs[1]; j.Queue != "b" || j.Attempts != 0 || j.ReservedAt != 0 || j.AvailableAt != 102 || j.CreatedAt != 100 || !bytes.Equal(j.Payload, push("b", 2).Payload) {
			t.Fatalf("second row = %+v", j)
		}
		if jobs, err := c.JobList(ctx, &laravel.JobListParams{Queue: "b"}); err != nil || len(jobs) != 1 || jobs[0].ID != second {
			t.Fatalf("JobList of queue b = %v, %v", jobs, err)
		}

		q, err := laravel.NewQueue(c, laravel.QueueParams{})
		if err != nil {
			t.Fatal(err)
		}
		for _, queue := range []string{"a", "b"} {
			claimed, err := q.JobClaim(ctx, &laravel.JobClaimParams{Queue: queue, Now: 200, RetryAfter: 90, Limit: 1})
			if err != nil || len(claimed) != 1 {
				t.Fatalf("claim %s: %v, %v", queue, claimed, err)
			}
			// A NUL in the text, which a Go handler's message can hold: PostgreSQL's text refuses it.
			if err := q.JobFail(ctx, claimed[0], &laravel.JobFailParams{Connection: "database", Queue: queue, Exception: "E: " + queue + "\x00 more", FailedAt: time.Unix(1700000000, 0).UTC()}); err != nil {
				t.Fatal(err)
			}
		}
		failed, err := c.FailedJobList(ctx, &laravel.FailedJobListParams{})
		if err != nil || len(failed) != 2 {
			t.Fatalf("FailedJobList = %v, %v", failed, err)
		}
		wantException := "E: b\x00 more"
		if c.Dialect() == laravel.Postgres {
			wantException = "E: b? more"
		}
		if f := failed[0]; f.Queue != "b" || f.UUID != "00000000-0000-4000-8000-000000000002" || f.Connection != "database" ||
			f.Exception != wantException || f.FailedAt != "2023-11-14 22:13:20" || !bytes.Equal(f.Payload, push("b", 2).Payload) {
			t.Fatalf("newest failed job = %+v", f)
		}
		if f, err := c.FailedJobList(ctx, &laravel.FailedJobListParams{Queue: "a", WithoutPayload: true}); err != nil || len(f) != 1 || f[0].Payload != nil && len(f[0].Payload) != 0 || f[0].Exception != "" {
			t.Fatalf("failed jobs of queue a without payload = %+v, %v", f, err)
		}
	})
	if _, err := laravel.NewJobTable("oracle", "jobs"); !errors.Is(err, laravel.ErrInvalid) {
		t.Errorf("NewJobTable of an unknown dialect: %v, want ErrInvalid", err)
	}
	if _, err := laravel.NewJobTable(laravel.MariaDB, "jobs; drop"); !errors.Is(err, laravel.ErrInvalid) {
		t.Errorf("NewJobTable of a bad name: %v, want ErrInvalid", err)
	}
}

// TestBatchCreateAndCacheLocks creates a batch and takes cache locks as Laravel's database stores do,
// on every database.
func TestBatchCreateAndCacheLocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		now := time.Unix(1700000000, 0)
		p := queuetest.OpenParams(db)
		p.Clock = func() time.Time { return now }
		p.CachePrefix = "laravel_cache"
		c := openTables(t, p)

		if err := c.BatchCreate(ctx, &laravel.BatchCreateParams{ID: "b1", Name: "import", TotalJobs: 3}); err != nil {
			t.Fatal(err)
		}
		b, err := c.BatchFind(ctx, "b1")
		if err != nil || b.Name != "import" || b.TotalJobs != 3 || b.PendingJobs != 3 || b.FailedJobs != 0 || len(b.FailedJobIDs) != 0 ||
			string(b.Options) != "a:0:{}" || b.CreatedAt != now.Unix() || b.CancelledAt != nil || b.FinishedAt != nil {
			t.Fatalf("created batch = %+v, %v", b, err)
		}
		if err := c.BatchCreate(ctx, &laravel.BatchCreateParams{ID: "b1"}); !errors.Is(err, laravel.ErrDuplicate) {
			t.Fatalf("a second batch with the same id: %v, want ErrDuplicate", err)
		}

		lock := func(owner string, ttl time.Duration) bool {
			t.Helper()
			ok, err := c.CacheLockAcquire(ctx, &laravel.CacheLockParams{Key: "k", Owner: owner, TTL: ttl})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if !lock("php", time.Minute) || lock("go", time.Minute) || !lock("php", time.Minute) {
			t.Fatal("a lock is taken once, refused to another owner, and taken again by its owner")
		}
		if owner, held, err := c.CacheLockOwner(ctx, "k"); err != nil || !held || owner != "php" {
			t.Fatalf("owner = %q, %v, %v", owner, held, err)
		}
		now = now.Add(time.Minute)
		if !lock("go", 0) {
			t.Fatal("an expired lock is not taken over")
		}
		if owner, _, _ := c.CacheLockOwner(ctx, "k"); owner != "go" {
			t.Fatalf("owner after the takeover = %q", owner)
		}
		if err := c.CacheLockForceRelease(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if _, held, err := c.CacheLockOwner(ctx, "k"); held || err != nil {
			t.Fatalf("released lock: held %v, %v", held, err)
		}
	})
}

// openTables opens the database with p and creates Laravel's queue and cache tables in it.
func openTables(t *testing.T, p laravel.OpenParams) *laravel.Conn {
	t.Helper()
	c := queuetest.Open(t, p)
	if err := laravel.CreateSchema(context.Background(), c, laravel.SchemaParams{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestJobFailIntoUTF8MB3 fails a job into a failed_jobs table of Laravel 5.3's utf8mb3 charset, which
// holds no emoji: the row is written (PHP's worker loses such a job), its payload with the emoji as
// JSON escapes of the same value and its exception with U+FFFD, and the change is reported; queue:doctor
// names the table.
func TestJobFailIntoUTF8MB3(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openTables(t, queuetest.OpenParams(testenv.MySQL(t)))
	if _, err := queuetest.DB(c).ExecContext(ctx, "alter table "+c.Tables().FailedJobs+" convert to character set utf8mb3"); err != nil {
		t.Fatal(err)
	}
	q, err := laravel.NewQueue(c, laravel.QueueParams{})
	if err != nil {
		t.Fatal(err)
	}
	payload := `{"uuid":"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d","data":{"command":"O:1:\"A\":1:{s:1:\"m\";s:4:\"🙂\";}"},"note":"ü 🙂"}`
	if _, err := q.JobPush(ctx, &laravel.JobPushParams{Queue: "default", Payload: []byte(payload), Now: 100, AvailableAt: 100}); err != nil {
		t.Fatal(err)
	}
	jobs, err := q.JobClaim(ctx, &laravel.JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90, Limit: 1})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %d jobs, %v", len(jobs), err)
	}
	var said string
	if err := q.JobFail(ctx, jobs[0], &laravel.JobFailParams{Connection: "database", Queue: "default", Exception: "RuntimeException: no 🙂 today",
		FailedAt: time.Unix(100, 0), Rewritten: func(s string) { said = s }}); err != nil {
		t.Fatal(err)
	}
	failed, err := c.FailedJobList(ctx, &laravel.FailedJobListParams{})
	if err != nil || len(failed) != 1 {
		t.Fatalf("failed jobs: %d, %v", len(failed), err)
	}
	var got, want any
	if err := json.Unmarshal(failed[0].Payload, &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(payload), &want)
	if !reflect.DeepEqual(got, want) || bytes.ContainsRune(failed[0].Payload, '🙂') {
		t.Errorf("payload %s, want the same JSON with the emoji escaped", failed[0].Payload)
	}
	if failed[0].Exception != "RuntimeException: no \uFFFD today" || !strings.Contains(said, "utf8mb4") {
		t.Errorf("exception %q, report %q", failed[0].Exception, said)
	}
	findings, err := laravel.Diagnose(ctx, c, laravel.DoctorParams{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(findings, func(f laravel.Finding) bool {
		return f.Code == "narrow-charset" && strings.Contains(f.Message, c.Tables().FailedJobs+".payload (utf8mb3), exception (utf8mb3)")
	}) || slices.ContainsFunc(findings, func(f laravel.Finding) bool {
		return f.Code == "narrow-charset" && strings.Contains(f.Message, c.Tables().Jobs+".")
	}) {
		t.Errorf("queue:doctor findings %+v; want narrow-charset for %s alone", findings, c.Tables().FailedJobs)
	}
}
