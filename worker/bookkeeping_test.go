package worker

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

func fixture883(t *testing.T, name string) []byte {
	t.Helper()
	f, ok := fixtures.Laravel883()[name]
	if !ok {
		t.Fatalf("no fixture %q", name)
	}
	return f.Payload
}

func TestChainContinues(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var seqs []int64
		f.reg.Register(`App\Jobs\Noop`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			v, _ := j.Command.Get("seq")
			seqs = append(seqs, v.(int64))
			return nil
		}))
		head := fixture883(t, "chain")
		headEnv, _ := payload.ParseEnvelope(head)
		f.push(t, "default", head)
		w := f.worker(t, nil)
		queued := &queuedRecorder{}
		w.obs = queued
		runOnce(t, w)

		row := f.onlyRow(t)
		env, err := payload.ParseEnvelope(row.Payload)
		if err != nil {
			t.Fatalf("next link payload: %v\n%s", err, row.Payload)
		}
		if env.UUID == "" || env.UUID == headEnv.UUID || env.CommandName != `App\Jobs\Noop` || env.DisplayName != `App\Jobs\Noop` {
			t.Fatalf("next link envelope %+v", env)
		}
		if row.Queue != "default" || row.Attempts != 0 || row.ReservedAt != nil {
			t.Fatalf("next link row %+v", row)
		}
		cmd, err := payload.DecodeCommand(env, nil)
		if err != nil {
			t.Fatal(err)
		}
		seq, _ := cmd.Get("seq")
		chained, _ := cmd.Get("chained")
		chainQueue, _ := cmd.Get("chainQueue")
		queue, _ := cmd.Get("queue")
		if seq != int64(2) || chained.(*payload.Array).Len() != 1 || chainQueue != "default" || queue != "default" {
			t.Fatalf("next link command seq=%v chained=%d chainQueue=%v queue=%v", seq, chained.(*payload.Array).Len(), chainQueue, queue)
		}
		// The rest of the chain runs to the end.
		runOnce(t, w)
		runOnce(t, w)
		f.wantRows(t, 0, 0)
		if len(seqs) != 3 || seqs[0] != 1 || seqs[1] != 2 || seqs[2] != 3 {
			t.Fatalf("chain ran %v, want [1 2 3]", seqs)
		}
		if s := w.Stats(); s.ChainDispatched != 2 || s.Processed != 3 {
			t.Fatalf("stats %+v", s)
		}
		// Laravel raises JobQueued for each link pushed, which Pulse's Queues recorder counts.
		if got := strings.Join(queued.list(), " "); got != `database:default:App\Jobs\Noop database:default:App\Jobs\Noop` {
			t.Fatalf("queued = %s", got)
		}
	})
}

// queuedRecorder is an Observer that records the jobs the worker pushes.
type queuedRecorder struct {
	nopObserver
	mu     sync.Mutex
	queued []string
}

func (o *queuedRecorder) JobQueued(connection, queue, class string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queued = append(o.queued, connection+":"+queue+":"+class)
}

func (o *queuedRecorder) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.queued)
}

func TestChainStopsOnFailure(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\Noop`, failing(&calls, errors.New("broken link")))
		f.push(t, "default", fixture883(t, "chain"))
		runOnce(t, f.worker(t, func(c *Config) { c.Tries = 1 }))
		f.wantRows(t, 0, 1)
	})
}

// insertBatch creates a job_batches row for the 8.83 batch fixture.
func (f *fixture) insertBatch(t *testing.T, id string, total int, options string) {
	t.Helper()
	f.exec(t, "insert into "+queuetest.Q(f.Conn, f.Conn.Tables().JobBatches)+
		" (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, created_at) values (?, ?, ?, ?, 0, '[]', ?, ?)",
		id, "demo", total, total, options, f.clock.Unix())
}

const fixtureBatchID = "a346ab68-af16-4dcc-adb9-10c0f54940f0"

func TestBatchSuccessFinishes(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\BatchPart`, ok(&calls))
		f.insertBatch(t, fixtureBatchID, 1, "a:0:{}")
		f.push(t, "default", fixture883(t, "batch"))
		runOnce(t, f.worker(t, nil))
		b, err := f.Conn.BatchFind(bg, fixtureBatchID)
		if err != nil {
			t.Fatal(err)
		}
		if b.PendingJobs != 0 || b.FailedJobs != 0 || b.FinishedAt == nil || b.CancelledAt != nil {
			t.Fatalf("batch %+v, want pending 0 and finished", b)
		}
	})
}

// TestHandlerReadsAndCancelsBatch gives a handler its job's batch, as $this->batch() does, and lets
// it cancel the batch as $this->batch()->cancel() does.
func TestHandlerReadsAndCancelsBatch(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var seen []*handlers.Batch
		f.reg.Register(`App\Jobs\BatchPart`, handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
			b, err := job.Batch(ctx)
			if err != nil {
				return err
			}
			seen = append(seen, b)
			if b != nil && !b.Cancelled() {
				return job.CancelBatch(ctx)
			}
			return nil
		}))
		start := f.clock.Unix()
		f.insertBatch(t, fixtureBatchID, 3, "a:0:{}")
		w := f.worker(t, nil)
		for range 2 {
			f.push(t, "default", fixture883(t, "batch"))
			runOnce(t, w)
		}
		// The fixture's clock is a real one: a second may pass during the test.
		within := func(at *time.Time) bool { return at != nil && at.Unix() >= start && at.Unix() <= f.clock.Unix() }
		if len(seen) != 2 || seen[0] == nil || seen[1] == nil {
			t.Fatalf("the handler saw batches %v, want the batch twice", seen)
		}
		if b := seen[0]; b.ID != fixtureBatchID || b.Name != "demo" || b.TotalJobs != 3 || b.PendingJobs != 3 || b.Cancelled() || b.Finished() || !within(&b.CreatedAt) {
			t.Errorf("first run saw %+v, want the new batch", b)
		}
		if b := seen[1]; !b.Cancelled() || !b.Finished() || !within(b.CancelledAt) || b.PendingJobs != 2 {
			t.Errorf("second run saw %+v, want it cancelled by the first (and finished, as Batch::cancel sets both), one job counted", b)
		}
		// A batch that is gone reads as none.
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().JobBatches))
		f.push(t, "default", fixture883(t, "batch"))
		runOnce(t, w)
		if len(seen) != 3 || seen[2] != nil {
			t.Fatalf("with the batch pruned the handler saw %v, want nil", seen[len(seen)-1])
		}
	})
}

func TestBatchFailureCancelsUnlessAllowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, options string
		cancelled     bool
	}{
		{"cancel", "a:0:{}", true},
		{"allowFailures", `a:1:{s:13:"allowFailures";b:1;}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachStrategy(t, func(t *testing.T, f *fixture) {
				var calls atomic.Int32
				f.reg.Register(`App\Jobs\BatchPart`, failing(&calls, errors.New("part failed")))
				f.insertBatch(t, fixtureBatchID, 2, tc.options)
				f.push(t, "default", fixture883(t, "batch"))
				runOnce(t, f.worker(t, func(c *Config) { c.Tries = 1 }))
				b, err := f.Conn.BatchFind(bg, fixtureBatchID)
				if err != nil {
					t.Fatal(err)
				}
				if b.PendingJobs != 2 || b.FailedJobs != 1 || len(b.FailedJobIDs) != 1 || b.FailedJobIDs[0] != "5ccbb060-b32a-40dc-9b87-364339873f82" {
					t.Fatalf("batch %+v, want failed 1 with the job's uuid and pending unchanged", b)
				}
				if (b.CancelledAt != nil) != tc.cancelled {
					t.Fatalf("cancelled_at = %v, want cancelled %v", b.CancelledAt, tc.cancelled)
				}
			})
		})
	}
}

// TestBatchFailedIDsFull fails a batch member when failed_job_ids, Laravel 8's TEXT column on MySQL,
// holds as many uuids as fit: the job is failed and counted, its uuid left out of the list with a
// warning that names the fix. The write used to be refused (Data too long), the row left reserved to
// fail the same way after every retry_after. A LONGTEXT column lists it.
func TestBatchFailedIDsFull(t *testing.T) {
	t.Parallel()
	const full = 1680 // 1,680 quoted uuids and their commas take 65,521 of TEXT's 65,535 bytes
	for _, longtext := range []bool{false, true} {
		t.Run(fmt.Sprintf("longtext=%v", longtext), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, testenv.MySQL(t))
			var calls atomic.Int32
			f.reg.Register(`App\Jobs\BatchPart`, failing(&calls, errors.New("part failed")))
			batches := f.Conn.Tables().JobBatches
			if longtext {
				f.exec(t, "alter table "+batches+" modify failed_job_ids longtext not null")
			}
			f.insertBatch(t, fixtureBatchID, 2*full, `a:1:{s:13:"allowFailures";b:1;}`)
			ids := make([]string, full)
			for i := range ids {
				ids[i] = fmt.Sprintf(`"00000000-0000-0000-0000-%012d"`, i)
			}
			f.exec(t, "update "+batches+" set failed_jobs = ?, failed_job_ids = ?", full, "["+strings.Join(ids, ",")+"]")
			logged := f.failBatchMember(t)
			b, err := f.Conn.BatchFind(bg, fixtureBatchID)
			if err != nil {
				t.Fatal(err)
			}
			const uuid = "5ccbb060-b32a-40dc-9b87-364339873f82"
			listed := slices.Contains(b.FailedJobIDs, uuid)
			if b.FailedJobs != full+1 || b.PendingJobs != 2*full || listed != longtext {
				t.Fatalf("batch failed_jobs %d, pending %d, the job's uuid listed %v; want %d, %d, %v", b.FailedJobs, b.PendingJobs, listed, full+1, 2*full, longtext)
			}
			warned := strings.Contains(logged.String(), "modify failed_job_ids longtext")
			if warned == longtext {
				t.Fatalf("warned %v with longtext %v:\n%s", warned, longtext, logged.String())
			}
		})
	}
}

// failBatchMember pushes the 8.83 batch member and runs it once with tries 1 (the handler the test
// registered fails it), checks that it was failed, and returns what the worker logged.
func (f *fixture) failBatchMember(t *testing.T) *lockedLog {
	t.Helper()
	f.push(t, "default", fixture883(t, "batch"))
	w := f.worker(t, func(c *Config) { c.Tries = 1 })
	logged := new(lockedLog)
	w.log = slog.New(slog.NewTextHandler(logged, nil))
	runOnce(t, w)
	f.wantRows(t, 0, 1)
	return logged
}

// TestBatchCountRefusedStillFails fails a batch member whose batch row the database refuses to
// change (here a check constraint, or a trigger on SQLite): the job is failed into failed_jobs without
// the count, as PHP's Job::fail does when its failed() path throws, with an error logged. Before, the
// row stayed reserved, to fail the same way after every retry_after.
func TestBatchCountRefusedStillFails(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\BatchPart`, failing(&calls, errors.New("part failed")))
		f.insertBatch(t, fixtureBatchID, 2, `a:1:{s:13:"allowFailures";b:1;}`)
		batches := queuetest.Q(f.Conn, f.Conn.Tables().JobBatches)
		if db.Dialect == "sqlite" {
			f.exec(t, "create trigger refuse_count before update on "+batches+" begin select raise(abort, 'counts are frozen'); end")
		} else {
			f.exec(t, "alter table "+batches+" add constraint counts_frozen check (failed_jobs < 1)")
		}
		logged := f.failBatchMember(t)
		if b, err := f.Conn.BatchFind(bg, fixtureBatchID); err != nil || b.FailedJobs != 0 || b.PendingJobs != 2 {
			t.Fatalf("batch %+v (%v), want it unchanged", b, err)
		}
		if !strings.Contains(logged.String(), "failed without them") {
			t.Fatalf("no error logged:\n%s", logged.String())
		}
	})
}

// TestBatchFailedIDsCut completes a batch member whose batch's failed_job_ids was cut short to fit the
// column, as MySQL leaves it when PHP appends past TEXT's size without strict mode ('strict' => false
// in config/database.php): the count is made and the list written back whole with the uuids it held
// whole. The completion used to be refused, for every member of the batch.
func TestBatchFailedIDsCut(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		f := newFixture(t, db)
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\BatchPart`, ok(&calls))
		f.insertBatch(t, fixtureBatchID, 3, `a:1:{s:13:"allowFailures";b:1;}`)
		f.exec(t, "update "+queuetest.Q(f.Conn, f.Conn.Tables().JobBatches)+` set failed_jobs = 2, failed_job_ids = '["00000000-0000-0000-0000-000000000001","00000000-0000-0000-00'`)
		f.push(t, "default", fixture883(t, "batch"))
		runOnce(t, f.worker(t, nil))
		f.wantRows(t, 0, 0)
		b, err := f.Conn.BatchFind(bg, fixtureBatchID)
		if err != nil {
			t.Fatal(err)
		}
		if b.PendingJobs != 2 || b.FailedJobs != 2 || !slices.Equal(b.FailedJobIDs, []string{"00000000-0000-0000-0000-000000000001"}) {
			t.Fatalf("batch %+v, want pending 2, failed 2 and the whole uuid listed", b)
		}
		var ids string
		if err := queuetest.DB(f.Conn).QueryRow("select failed_job_ids from " + queuetest.Q(f.Conn, f.Conn.Tables().JobBatches)).Scan(&ids); err != nil || ids != `["00000000-0000-0000-0000-000000000001"]` {
			t.Fatalf("failed_job_ids %q (%v), want the list written back whole", ids, err)
		}
	})
}

// lockCount counts the cache_locks rows with a key.
func (f *fixture) lockCount(t *testing.T, key string) int {
	t.Helper()
	var n int
	q := queuetest.Rebind(f.Conn, "select count(*) from "+queuetest.Q(f.Conn, f.Conn.Tables().CacheLocks)+" where "+queuetest.Q(f.Conn, "key")+" = ?")
	if err := queuetest.DB(f.Conn).QueryRow(q, key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) insertLock(t *testing.T, key string) {
	t.Helper()
	f.exec(t, "insert into "+queuetest.Q(f.Conn, f.Conn.Tables().CacheLocks)+" ("+queuetest.Q(f.Conn, "key")+", owner, expiration) values (?, ?, ?)",
		key, "owner", f.clock.Unix()+3600)
}

// uniqueID is a handler that supplies the uniqueId the PHP class computes in a method.
type uniqueID struct{ calls atomic.Int32 }

func (u *uniqueID) Handle(ctx context.Context, j *handlers.Job) error { u.calls.Add(1); return nil }

func (u *uniqueID) UniqueID(j *handlers.Job) string {
	v, _ := j.Command.Get("reportId")
	return phpString(v)
}

func TestUniqueLockReleased(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		f.reg.Register(`App\Jobs\UniqueReport`, &uniqueID{})
		key := "laravel_cache" + `laravel_unique_job:App\Jobs\UniqueReport77`
		other := "laravel_cache" + `laravel_unique_job:App\Jobs\UniqueReport78`
		f.insertLock(t, key)
		f.insertLock(t, other)
		f.push(t, "default", fixture883(t, "unique"))
		runOnce(t, f.worker(t, nil))
		if f.lockCount(t, key) != 0 || f.lockCount(t, other) != 1 {
			t.Fatalf("locks: %d for the job (want 0), %d for another id (want 1)", f.lockCount(t, key), f.lockCount(t, other))
		}
	})
}

func TestUniqueLockKeptWhenReleased(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\UniqueReport`, failing(&calls, errors.New("retry me")))
		key := "laravel_cache" + `laravel_unique_job:App\Jobs\UniqueReport`
		f.insertLock(t, key)
		f.push(t, "default", fixture883(t, "unique"))
		w := f.worker(t, nil)
		runOnce(t, w) // released after the exception: the lock stays
		if f.lockCount(t, key) != 1 {
			t.Fatal("lock released when the job was released")
		}
		runOnce(t, w)
		runOnce(t, w) // third attempt fails: failed() releases the lock
		f.wantRows(t, 0, 1)
		if f.lockCount(t, key) != 0 {
			t.Fatal("lock kept after the job failed")
		}
	})
}

func TestUniqueLockFromHiddenContext(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, ok(&calls))
		const key = `laravel_unique_job:App\Jobs\Work:42`
		ctxKey := `"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:8:\"database\";","laravel_unique_job_key":"s:` +
			itoa(int64(len(key))) + `:\"` + strings.ReplaceAll(key, `\`, `\\`) + `\";"}}`
		f.push(t, "default", envelope(t, jobClass, ctxKey, nil))
		w := f.worker(t, func(c *Config) { c.LaravelVersion = "11.40" })
		f.insertLock(t, "laravel_cache"+key) // the test connection's cache prefix
		runOnce(t, w)
		if f.lockCount(t, "laravel_cache"+key) != 0 {
			t.Fatal("the lock named by laravel_unique_job_key was not released")
		}
	})
}

func TestUnhandledLeave(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		closure := f.push(t, "default", fixture883(t, "closure"))
		raw := f.push(t, "default", fixture883(t, "raw"))
		w := f.worker(t, nil)
		// Each claim passes over the rows it reads (optimistic reads both at once), and then none.
		for range 2 {
			if !runOnce(t, w) {
				break
			}
		}
		if w.Stats().LeftForPHP != 2 || runOnce(t, w) {
			t.Fatalf("left %d, and then claimed again: want both left, and none claimed after", w.Stats().LeftForPHP)
		}
		rows := f.Rows(t)
		if len(rows) != 2 || rows[0].ID != closure || rows[1].ID != raw {
			t.Fatalf("rows %+v", rows)
		}
		for _, r := range rows {
			if r.Attempts != 0 || r.ReservedAt != nil {
				t.Fatalf("handed-back row %d: attempts %d reserved_at %v, want untouched", r.ID, r.Attempts, r.ReservedAt)
			}
		}
		// A worker that has the handler (standing in for a PHP worker) takes it.
		var calls atomic.Int32
		f.reg.Register(`App\Handlers\Legacy`, ok(&calls))
		other := f.worker(t, nil)
		runOnce(t, other) // the closure: still handed back
		runOnce(t, other)
		if calls.Load() != 1 {
			t.Fatalf("second worker ran the raw job %d times, want 1", calls.Load())
		}
		if s := w.Stats(); s.LeftForPHP != 2 {
			t.Fatalf("stats %+v", s)
		}
	})
}

// TestLeftBeyondRemembered: with more rows left for PHP ahead of the worker than it remembers, its
// claims bring the forgotten ones back; it pauses as on an empty queue instead of claiming and handing
// them back without end (which ran thousands of hand-backs a second and slowed PHP's workers). The
// bound counts hand-backs in a window of 1.5 s; without the pause there were far more.
func TestLeftBeyondRemembered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	for range 40 {
		f.push(t, "default", fixture883(t, "closure"))
	}
	w := f.worker(t, func(c *Config) { c.ExcludeLimit = 4; c.Sleep = 300 * time.Millisecond })
	var logged lockedLog
	w.log = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithTimeout(bg, 1500*time.Millisecond) // the window measured, not a wait
	defer cancel()
	if _, err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if left := w.stats.left.Load(); left <= 4 || left > 1000 {
		t.Fatalf("%d hand-backs of 40 rows in 1.5 s; want more than the 4 remembered, and no more than 1,000", left)
	}
	// The first row of the class is logged at info, the others at debug.
	if n, left := strings.Count(logged.String(), "Left for PHP"), w.stats.left.Load(); n != 1 {
		t.Fatalf("%d info lines for %d hand-backs of 40 rows of one class, want one", n, left)
	}
	if rows := f.Rows(t); len(rows) != 40 {
		t.Fatalf("%d rows left, want the 40", len(rows))
	}
}

// TestLeftBeyondLongMemory: the same with more rows left for PHP than the 64 × ExcludeLimit ids the
// worker once remembered to tell a row left again (65,536 at the defaults): its claims then went round
// the whole backlog without end, each row seeming new, and the worker never paused (hundreds of claims
// a second on an idle queue: 6,000 hand-backs of these 600 rows in the 3 s window).
func TestLeftBeyondLongMemory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	pushClosures(t, f, 600)
	w := f.worker(t, func(c *Config) { c.ExcludeLimit = 4; c.Sleep = 300 * time.Millisecond; c.Concurrency = 16 })
	ctx, cancel := context.WithTimeout(bg, 3*time.Second) // the window measured, not a wait
	defer cancel()
	if _, err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// The first walk through the backlog leaves each row once, and some twice (the claims exclude
	// only the last 4); each pause then costs a claim of 16 rows.
	if left := w.stats.left.Load(); left > 1200 {
		t.Fatalf("%d hand-backs of 600 rows in 3 s; want no more than 1,200", left)
	}
	t.Logf("%d hand-backs of 600 rows", w.stats.left.Load())
	if rows := f.Rows(t); len(rows) != 600 {
		t.Fatalf("%d rows left, want the 600", len(rows))
	}
}

// TestStopWhenEmptyBeyondRemembered: with more rows left for PHP than the worker remembers, it still
// reaches its own jobs behind them (before, its claims went round the forgotten rows and never got
// there), and --stop-when-empty stops once every row a claim could take is one it left (before, it
// claimed and handed back the forgotten rows until killed).
func TestStopWhenEmptyBeyondRemembered(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		for range 40 {
			f.push(t, "default", fixture883(t, "closure"))
		}
		var calls atomic.Int32
		f.reg.Register(jobClass, ok(&calls))
		for range 3 {
			f.push(t, "default", envelope(t, jobClass, "", nil))
		}
		w := f.worker(t, func(c *Config) { c.ExcludeLimit = 4; c.Sleep = 50 * time.Millisecond; c.StopWhenEmpty = true })
		ctx, cancel := context.WithTimeout(bg, time.Minute) // a bound on a hang
		defer cancel()
		if _, err := w.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatalf("--stop-when-empty still ran after a minute: %d hand-backs, stats %+v", w.stats.left.Load(), w.Stats())
		}
		if calls.Load() != 3 || len(f.Rows(t)) != 40 {
			t.Fatalf("ran %d of its 3 jobs, %d rows left; want 3 and the 40 left for PHP", calls.Load(), len(f.Rows(t)))
		}
	})
}

// TestStopWhenEmptyBehindLongBacklog: the same behind 2,000 rows left for PHP, many times the rows it
// remembers (before, the claims skipped at most 4,096 rows once per pause and went round the ones
// they forgot between).
func TestStopWhenEmptyBehindLongBacklog(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	pushClosures(t, f, 2000)
	var calls atomic.Int32
	f.reg.Register(jobClass, ok(&calls))
	for range 3 {
		f.push(t, "default", envelope(t, jobClass, "", nil))
	}
	w := f.worker(t, func(c *Config) {
		c.ExcludeLimit = 64
		c.Sleep = 50 * time.Millisecond
		c.StopWhenEmpty = true
		c.Concurrency = 64
	})
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute) // a bound on a hang
	defer cancel()
	if _, err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("--stop-when-empty still ran after two minutes: %d hand-backs, stats %+v", w.stats.left.Load(), w.Stats())
	}
	if calls.Load() != 3 || len(f.Rows(t)) != 2000 {
		t.Fatalf("ran %d of its 3 jobs, %d rows left; want 3 and the 2,000 left for PHP", calls.Load(), len(f.Rows(t)))
	}
	t.Logf("%d hand-backs of 2,000 rows", w.stats.left.Load())
	// The rows left count once each, however often the claims passed over them.
	if left := w.Stats().LeftForPHP; left != 2000 {
		t.Fatalf("Stats().LeftForPHP = %d after %d hand-backs of 2,000 rows, want 2,000", left, w.stats.left.Load())
	}
}

// TestOwnJobBehindPHPBacklog: a worker behind thousands of rows left for PHP reads past them without
// claiming them and runs its job after passing over a claim's worth of them: with one slot, with 256,
// and on the second of two queues behind more rows than one read ahead takes. Before, its claims
// walked the backlog a claim at a time, passing over every row (3,001 hand-backs, 8 to 11 s with one
// slot); with 256 slots on MariaDB, and on every database with two queues (an empty claim on the
// first queue sent the walk back to the head), it did not reach the job within a minute.
func TestOwnJobBehindPHPBacklog(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		for _, c := range []struct {
			slots, rows int
			queues      []string
		}{
			{1, 3000, []string{"default"}},
			{256, 3000, []string{"default"}}, // the CLI's default concurrency
			{256, lookAhead + 1000, []string{"high", "default"}},
		} {
			f := newFixture(t, db)
			pushClosures(t, f, c.rows)
			ran := make(chan struct{}, 1)
			f.reg.Register(jobClass, handlers.HandlerFunc(func(context.Context, *handlers.Job) error {
				ran <- struct{}{}
				return nil
			}))
			f.push(t, "default", envelope(t, jobClass, "", nil))
			w := f.worker(t, func(cfg *Config) { cfg.Concurrency, cfg.Queues = c.slots, c.queues })
			ctx, cancel := context.WithTimeout(bg, time.Minute) // a bound on a hang
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = w.Run(ctx)
			}()
			reached := false
			select {
			case <-ran:
				reached = true
			case <-ctx.Done():
			}
			left := w.stats.left.Load() // the hand-backs before the job ran, and maybe a claim's more
			cancel()
			<-done
			if !reached || left > 1000 {
				t.Fatalf("%d slots, queues %v: job ran: %v, after %d hand-backs of the %d rows ahead; want it run after no more than 1,000", c.slots, c.queues, reached, left, c.rows)
			}
		}
	})
}

func TestUnhandledMoveAndFail(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		body := fixture883(t, "welcome")
		f.push(t, "default", body)
		runOnce(t, f.worker(t, func(c *Config) { c.Unhandled = "move:php" }))
		row := f.onlyRow(t)
		if row.Queue != "php" || string(row.Payload) != string(body) || row.Attempts != 0 || row.ReservedAt != nil {
			t.Fatalf("moved row %+v", row)
		}
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))

		f.push(t, "default", body)
		runOnce(t, f.worker(t, func(c *Config) { c.Unhandled = "fail" }))
		fr := f.onlyFailed(t)
		if !strings.HasPrefix(fr.Exception, NoHandlerClass+`: No Go handler is registered for App\Jobs\SendWelcomeEmail`) || string(fr.Payload) != string(body) {
			t.Fatalf("failed row %+v", fr)
		}
	})
}

func TestChainNextKeepsOwnQueueAndDelay(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, ok(&calls))
		next := payload.NewObject(`App\Jobs\Next`).Set("connection", nil).Set("queue", "q2").
			Set("chainConnection", nil).Set("chainQueue", nil).Set("delay", int64(30)).Set("chained", payload.NewList())
		nextSer, err := payload.Serialize(next)
		if err != nil {
			t.Fatal(err)
		}
		f.push(t, "chainq", envelope(t, jobClass, "", map[string]payload.Value{
			"chainQueue": "chainq", "chainConnection": nil, "chainCatchCallbacks": payload.NewList(),
		}))
		// envelope sets an empty chain; put the next link in.
		row := f.onlyRow(t)
		env, _ := payload.ParseEnvelope(row.Payload)
		cmd, _ := payload.DecodeCommand(env, nil)
		cmd.Set("chained", payload.NewList(string(nextSer)))
		ser, _ := payload.Serialize(cmd)
		body, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "12.54", SerializedCommand: string(ser), CommandName: jobClass})
		if err != nil {
			t.Fatal(err)
		}
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
		f.push(t, "chainq", body)

		w := f.worker(t, func(c *Config) { c.Queues = []string{"chainq"}; c.LaravelVersion = "12.54" })
		now := f.clock.Unix()
		runOnce(t, w)
		got := f.onlyRow(t)
		if got.Queue != "q2" || got.AvailableAt < now+30 || got.AvailableAt > now+31 {
			t.Fatalf("next link row queue %q available in %d s, want q2 in 30 s", got.Queue, got.AvailableAt-now)
		}
		nenv, err := payload.ParseEnvelope(got.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if nenv.CreatedAt == nil || nenv.Delay == nil || *nenv.Delay != 30 {
			t.Fatalf("12.54 envelope lacks createdAt/delay: %s", got.Payload)
		}
		ncmd, _ := payload.DecodeCommand(nenv, nil)
		if q, _ := ncmd.Get("chainQueue"); q != "chainq" {
			t.Fatalf("chainQueue %v, want chainq", q)
		}
	})
}

// encryptedNoop is a handler whose class is ShouldBeEncrypted.
type encryptedNoop struct{ handlers.Handler }

func (encryptedNoop) ShouldBeEncrypted() bool { return true }

// TestChainLinkEncrypted writes the next link of a chain encrypted when its class's handler says the
// class is ShouldBeEncrypted, as PHP encrypts it, and the worker reads it back.
func TestChainLinkEncrypted(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		f.reg.Register(`App\Jobs\Noop`, encryptedNoop{handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil })})
		f.push(t, "default", fixture883(t, "chain"))
		w := f.worker(t, nil)
		runOnce(t, w)
		env, err := payload.ParseEnvelope(f.onlyRow(t).Payload)
		if err != nil {
			t.Fatal(err)
		}
		if !env.CommandEncrypted() {
			t.Fatalf("next link written in clear: %.80s", env.Command)
		}
		runOnce(t, w)
		if s := w.Stats(); s.Processed != 2 || s.Failed != 0 {
			t.Errorf("stats %+v, want the encrypted link read and run", s)
		}
	})
}

// TestEncryptedUnderAnotherKey: a job encrypted with a key the worker does not have fails as PHP's
// worker fails it, with the Encrypter's DecryptException (its message is checked against PHP's in
// payload's tests), once its tries are used.
func TestEncryptedUnderAnotherKey(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, ok(&calls))
		other, err := payload.NewKeyring("base64:"+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32)), nil, "AES-256-CBC")
		if err != nil {
			t.Fatal(err)
		}
		cmd := payload.NewObject(jobClass).Set("connection", nil).Set("queue", nil).Set("chained", payload.NewList())
		ct, err := payload.EncryptCommand(cmd, other)
		if err != nil {
			t.Fatal(err)
		}
		cls, _ := json.Marshal(jobClass)
		f.push(t, "default", fmt.Appendf(nil, `{"uuid":%q,"displayName":%s,"job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":1,"data":{"commandName":%s,"command":%q}}`,
			testUUID(), cls, cls, ct))
		runOnce(t, f.worker(t, nil))
		failed := f.FailedRows(t)
		if calls.Load() != 0 || len(failed) != 1 {
			t.Fatalf("handler ran %d times, %d failed rows; want 0 and 1", calls.Load(), len(failed))
		}
		want := payload.DecryptExceptionClass + ": " + payload.DecryptMACInvalid + " in "
		if !strings.HasPrefix(failed[0].Exception, want) {
			t.Fatalf("exception %.200q, want it to start %q", failed[0].Exception, want)
		}
	})
}

// TestEncryptedWithoutUsableKey: with no APP_KEY, or one the cipher cannot use, an encrypted job fails
// with the exception PHP's encrypter throws before it reads the command (texts of Laravel 8.83's
// worker, seen in failed_jobs beside it), and a command that is not Laravel's encryption at all with
// DecryptException's "The payload is invalid.".
func TestEncryptedWithoutUsableKey(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, ok(&calls))
		kr, err := payload.NewKeyring(fixtureAppKey, nil, "AES-256-CBC")
		if err != nil {
			t.Fatal(err)
		}
		cmd := payload.NewObject(jobClass).Set("connection", nil).Set("queue", nil).Set("chained", payload.NewList())
		ct, err := payload.EncryptCommand(cmd, kr)
		if err != nil {
			t.Fatal(err)
		}
		cls, _ := json.Marshal(jobClass)
		push := func(command string) {
			f.push(t, "default", fmt.Appendf(nil, `{"uuid":%q,"displayName":%s,"job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":1,"data":{"commandName":%s,"command":%q}}`,
				testUUID(), cls, cls, command))
		}
		for i, tt := range []struct {
			name    string
			command string
			pmod    func(*Params)
			want    string
		}{
			{"no APP_KEY", ct, func(p *Params) { p.Keyring = nil }, `Illuminate\Encryption\MissingAppKeyException: No application encryption key has been specified. in `},
			{"an APP_KEY of 3 bytes", ct, func(p *Params) { p.Keyring, p.KeyringErr = nil, payload.ErrKey },
				"RuntimeException: Unsupported cipher or incorrect key length. Supported ciphers are: aes-128-cbc, aes-256-cbc, aes-128-gcm, aes-256-gcm. in "},
			{"a truncated command", ct[:20], nil, payload.DecryptExceptionClass + ": " + payload.DecryptPayloadInvalid + " in "},
		} {
			push(tt.command)
			runOnce(t, f.workerWith(t, nil, tt.pmod))
			failed := f.FailedRows(t)
			if calls.Load() != 0 || len(failed) != i+1 {
				t.Fatalf("%s: handler ran %d times, %d failed rows; want 0 and %d", tt.name, calls.Load(), len(failed), i+1)
			}
			if !strings.HasPrefix(failed[i].Exception, tt.want) {
				t.Errorf("%s: exception %.200q, want it to start %q", tt.name, failed[i].Exception, tt.want)
			}
		}
	})
}

// TestChainCatchCallbacksLeftForPHP: a link of a chain with catch callbacks (PHP closures) is left to
// PHP when no companion can run them, as a job of a batch with callbacks is, passed over inside the
// claim (never reserved); with the failed-hooks companion, or the "run" policy, it runs here.
func TestChainCatchCallbacksLeftForPHP(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(jobClass, ok(&calls))
		catch := payload.NewList(payload.NewObject(`Illuminate\Queue\SerializableClosure`))
		push := func() {
			f.push(t, "default", envelope(t, jobClass, "", map[string]payload.Value{"chainCatchCallbacks": catch}))
		}
		push()
		w := f.worker(t, nil)
		runOnce(t, w)
		if calls.Load() != 0 || w.Stats().LeftForPHP != 1 || w.Stats().Claimed != 0 {
			t.Fatalf("ran %d times, stats %+v: want it left for PHP, passed over by the claim", calls.Load(), w.Stats())
		}
		if r := f.onlyRow(t); r.Attempts != 0 || r.ReservedAt != nil {
			t.Fatalf("left row: attempts %d reserved_at %v, want untouched", r.Attempts, r.ReservedAt)
		}
		runOnce(t, f.worker(t, func(c *Config) { c.FailedCompanion = `App\Jobs\RunFailedHooks` }))
		push()
		runOnce(t, f.worker(t, func(c *Config) { c.BatchCallbacks = BatchCallbacksRun }))
		if calls.Load() != 2 || len(f.Rows(t)) != 0 {
			t.Fatalf("ran %d times with a companion and with the run policy, %d rows left; want 2 and 0", calls.Load(), len(f.Rows(t)))
		}
	})
}

// companionCallbacks returns the callbacks list of each batch-callbacks companion in the jobs table,
// and deletes those rows.
func (f *fixture) companionCallbacks(t *testing.T, class string) [][]string {
	t.Helper()
	var out [][]string
	for _, r := range f.Rows(t) {
		env, err := payload.ParseEnvelope([]byte(r.Payload))
		if err != nil {
			t.Fatal(err)
		}
		if env.DisplayName != class {
			continue
		}
		cmd, err := payload.DecodeCommand(env, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := cmd.Get("callbacks")
		list, _ := v.(*payload.Array)
		var names []string
		for _, e := range list.Values() {
			names = append(names, fmt.Sprint(e))
		}
		out = append(out, names)
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs)+" where id = ?", r.ID)
	}
	return out
}

// TestBatchCallbackKindsByVersion queues the batch callbacks each Laravel version's
// Batch::recordSuccessfulJob and recordFailedJob run: progress at every success from 10.37.2, and at a
// failure when the batch allows failures (allowFailures === true, not 1), then from 12.32 the failure
// callbacks, before catch and finally.
func TestBatchCallbackKindsByVersion(t *testing.T) {
	t.Parallel()
	const companion = `App\Jobs\RunBatchCallbacks`
	cb := `a:1:{i:0;s:1:"x";}`
	every := `s:4:"then";` + cb + `s:5:"catch";` + cb + `s:7:"finally";` + cb + `s:8:"progress";` + cb + `s:7:"failure";` + cb
	for _, tc := range []struct {
		name, version, options string
		success, failure       string
	}{
		{"8.83", "8.83", `a:6:{s:13:"allowFailures";b:1;` + every + `}`, "", "catch"},
		{"10.37", "10.37", `a:6:{s:13:"allowFailures";b:1;` + every + `}`, "progress", "progress catch"},
		{"10.37.1", "10.37.1", `a:6:{s:13:"allowFailures";b:1;` + every + `}`, "", "catch"},
		{"12.32", "12.32", `a:6:{s:13:"allowFailures";b:1;` + every + `}`, "progress", "progress failure catch"},
		{"12.32 not allowed", "12.32", `a:5:{` + every + `}`, "progress", "catch"},
		{"12.32 allowFailures 1", "12.32", `a:6:{s:13:"allowFailures";i:1;` + every + `}`, "progress", "catch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				f := newFixture(t, db)
				var fail atomic.Bool
				f.reg.Register(`App\Jobs\BatchPart`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
					if fail.Load() {
						return errors.New("part failed")
					}
					return nil
				}))
				f.insertBatch(t, fixtureBatchID, 3, tc.options)
				w := f.worker(t, func(c *Config) { c.LaravelVersion, c.BatchCompanion, c.Tries = tc.version, companion, 1 })
				for _, want := range []string{tc.success, tc.failure} {
					f.push(t, "default", fixture883(t, "batch"))
					runOnce(t, w)
					got := f.companionCallbacks(t, companion)
					var names []string
					for _, g := range got {
						names = append(names, strings.Join(g, " "))
					}
					if strings.Join(names, "|") != want {
						t.Errorf("failing %v: companions %q, want %q", fail.Load(), names, want)
					}
					fail.Store(true)
				}
			})
		})
	}
}

// TestBatchMembersPassedOver: once the worker has read that a batch has PHP callbacks and no companion
// runs them, its claims pass over the batch's other members inside their own transaction (no attempt
// spent, whenever the worker dies) instead of claiming and handing back each one.
func TestBatchMembersPassedOver(t *testing.T) {
	t.Parallel()
	eachStrategy(t, func(t *testing.T, f *fixture) {
		var calls atomic.Int32
		f.reg.Register(`App\Jobs\BatchPart`, ok(&calls))
		f.insertBatch(t, fixtureBatchID, 5, `a:1:{s:4:"then";a:1:{i:0;s:1:"x";}}`)
		for range 5 {
			f.push(t, "default", fixture883(t, "batch"))
		}
		w := f.worker(t, func(c *Config) { c.Concurrency, c.StopWhenEmpty = 1, true })
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		if s := w.Stats(); calls.Load() != 0 || s.LeftForPHP != 5 || s.Claimed != 1 {
			t.Fatalf("ran %d, stats %+v: want none run, 5 left for PHP, only the first claimed (the rest passed over)", calls.Load(), s)
		}
		for _, r := range f.Rows(t) {
			if r.Attempts != 0 || r.ReservedAt != nil {
				t.Fatalf("member %d: attempts %d reserved_at %v, want untouched", r.ID, r.Attempts, r.ReservedAt)
			}
		}
	})
}

// pushClosures queues n rows of a closure job, which only PHP runs.
func pushClosures(t *testing.T, f *fixture, n int) {
	closure := fixture883(t, "closure")
	for range n {
		f.push(t, "default", closure)
	}
}

// TestChainLinkDelayAndConnection dispatches a chain's next link as Laravel's Dispatcher does: a delay
// that is a date makes it available then (a past one too), an interval from now; 13.x's envelope
// carries the link's deleteWhenMissingModels; and a link that names no connection, on an application
// whose default queue connection is another, is pushed here with a warning, as one naming another is.
func TestChainLinkDelayAndConnection(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	var calls atomic.Int32
	f.reg.Register(jobClass, ok(&calls))
	date := func(at time.Time) *payload.Object {
		return payload.NewObject(`Illuminate\Support\Carbon`).Set("date", at.UTC().Format("2006-01-02 15:04:05.000000")).
			Set("timezone_type", int64(3)).Set("timezone", "UTC")
	}
	interval := payload.NewObject("DateInterval").Set("y", int64(0)).Set("m", int64(0)).Set("d", int64(1)).Set("h", int64(0)).
		Set("i", int64(5)).Set("s", int64(0)).Set("f", 0.0).Set("invert", int64(0)).Set("days", false).Set("from_string", false)
	now := f.clock.Now().Truncate(time.Second)
	for _, tc := range []struct {
		name  string
		delay payload.Value
		at    int64 // available_at, from now
		key   int   // the envelope's delay
	}{
		{"a date", date(now.Add(300 * time.Second)), 300, 300},
		{"a past date", date(now.Add(-60 * time.Second)), -60, 0},
		{"an interval", interval, 86400 + 300, 86400 + 300},
		{"seconds", int64(45), 45, 45},
		{"a numeric string", "20", 20, 20}, // PHP's addRealSeconds('20')
		{"an inverted interval", payload.NewObject("DateInterval").Set("y", int64(0)).Set("m", int64(0)).Set("d", int64(0)).Set("h", int64(0)).
			Set("i", int64(1)).Set("s", int64(0)).Set("f", 0.0).Set("invert", int64(1)).Set("days", false), -60, 0},
	} {
		next := payload.NewObject(`App\Jobs\Next`).Set("connection", nil).Set("queue", nil).Set("delay", tc.delay).
			Set("deleteWhenMissingModels", true).Set("chained", payload.NewList())
		ser, err := payload.Serialize(next)
		if err != nil {
			t.Fatal(err)
		}
		head := payload.NewObject(jobClass).Set("chained", payload.NewList(string(ser)))
		body, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "13.0", Command: head})
		if err != nil {
			t.Fatal(err)
		}
		f.push(t, "default", body)
		var logged bytes.Buffer
		w := f.worker(t, func(c *Config) { c.LaravelVersion = "13.0"; c.DefaultConnection = "redis" })
		w.log = slog.New(slog.NewTextHandler(&logged, nil))
		start := f.clock.Unix()
		runOnce(t, w)
		row := f.onlyRow(t)
		o, date := tc.delay.(*payload.Object)
		date = date && o.Class != "DateInterval"
		if date {
			// A date is a time of its own, made from now before the worker ran: the clock may have
			// passed a second since.
			if row.AvailableAt != now.Unix()+tc.at {
				t.Errorf("%s: the link is available at %d, want %d", tc.name, row.AvailableAt, now.Unix()+tc.at)
			}
		} else if got := row.AvailableAt - start; got < tc.at || got > tc.at+1 {
			t.Errorf("%s: the link is available in %d s, want %d", tc.name, got, tc.at)
		}
		env, err := payload.ParseEnvelope(row.Payload)
		if err != nil {
			t.Fatal(err)
		}
		lo := tc.key
		if date && lo > 0 {
			lo-- // the seconds until the date, from the worker's now, a second later maybe
		}
		if env.Delay == nil && tc.key != 0 || env.Delay != nil && (*env.Delay < lo || *env.Delay > tc.key+1) {
			t.Errorf("%s: the envelope's delay is %v, want %d", tc.name, env.Delay, tc.key)
		}
		if env.DeleteWhenMissingModels == nil || !*env.DeleteWhenMissingModels {
			t.Errorf("%s: the envelope's deleteWhenMissingModels is %v, want true", tc.name, env.DeleteWhenMissingModels)
		}
		if !strings.Contains(logged.String(), "application's default queue connection is another") || !strings.Contains(logged.String(), "connection=redis") {
			t.Errorf("%s: no warning that the link goes to this connection, not redis:\n%s", tc.name, logged.String())
		}
		f.exec(t, "delete from "+queuetest.Q(f.Conn, f.Conn.Tables().Jobs))
	}
}

// TestNoCacheLocksTable runs jobs of classes that might be unique on an application whose cache store
// has no cache_locks table (one upgraded from Laravel 7): they run, and the missing table is said once,
// not for each class or job.
func TestNoCacheLocksTable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	f.exec(t, "drop table "+f.Conn.Tables().CacheLocks)
	var calls atomic.Int32
	for _, class := range []string{`App\Jobs\A`, `App\Jobs\B`} {
		f.reg.Register(class, ok(&calls))
		for range 2 {
			f.push(t, "default", envelope(t, class, "", nil))
		}
	}
	w := f.worker(t, func(c *Config) { c.StopWhenEmpty = true; c.Concurrency = 1 })
	var logged lockedLog
	w.log = slog.New(slog.NewTextHandler(&logged, nil))
	if _, err := w.Run(bg); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 4 || strings.Count(logged.String(), "lock table does not exist") != 1 || strings.Contains(logged.String(), "look for a unique job lock") {
		t.Errorf("%d jobs ran; log:\n%s\nwant 4 and one warning", calls.Load(), logged.String())
	}
}
