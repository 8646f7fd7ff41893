package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/worker"
)

// TestOtherVersionEnvelopes runs the payloads other Laravel versions write (payload/testdata/envelopes,
// written by PHP's own json_encode and serialize) through a Go worker configured for that version:
// each completes, or fails into failed_jobs where PHP's queue:failed lists it.
func TestOtherVersionEnvelopes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, version string
		handlerFails  bool
		failed        string // "" when the job completes, else the start of the failed_jobs exception
	}{
		{"5.5", "5.5", false, `Illuminate\Queue\MaxAttemptsExceededException: App\Jobs\SendInvoice has been attempted too many times or run too long`}, // timeoutAt passed
		{"6.x", "6.20", false, ""},
		{"7.x", "7.30", false, `Illuminate\Queue\MaxAttemptsExceededException`}, // timeoutAt passed
		{"7.x-raw", "7.30", false, ""},
		{"8.0", "8.0", false, `Illuminate\Queue\MaxAttemptsExceededException`}, // retryUntil passed
		{"11.x", "11.45", false, ""},
		{"12.x", "12.54", false, ""},
		{"13.x", "13.0", true, "RuntimeException: invoice 7 refused"}, // maxTries 1
		{"13.x-raw", "13.0", false, ""},
	}
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		s := newSide(t, db)
		var calls []string
		invoice := func(ctx context.Context, job *handlers.Job) error {
			calls = append(calls, job.Queue)
			id, _ := job.Command.Get("invoiceId")
			locale, _ := job.Command.Get("locale")
			note, _ := job.Command.Get("note")
			if id != int64(7) || locale != "de" || note != "ünï/€" {
				return errors.New("the command was not decoded")
			}
			if job.Queue == "13.x" {
				return errors.New("invoice 7 refused")
			}
			return nil
		}
		s.reg.Register(`App\Jobs\SendInvoice`, handlers.HandlerFunc(invoice))
		s.reg.Register(`App\Legacy`, handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
			calls = append(calls, job.Queue)
			if job.Method != "fire" {
				return errors.New("method " + job.Method)
			}
			return nil
		}))
		s.reg.Register(`App\Handlers\Import`, handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
			calls = append(calls, job.Queue)
			if string(job.Data) != "[1,2,3]" || job.Method != "handle" {
				return errors.New("raw data " + string(job.Data))
			}
			return nil
		}))
		// The 11.x payload names its unique lock in Laravel's hidden context.
		lock := queuetest.Rebind(s.conn, "insert into cache_locks ("+queuetest.Q(s.conn, "key")+", owner, expiration) values (?, ?, ?)")
		if _, err := queuetest.DB(s.conn).ExecContext(ctx, lock, s.cfg.Cache.Prefix+"k", "owner", 2000000000); err != nil {
			t.Fatal(err)
		}

		q, err := laravel.NewQueue(s.conn, laravel.QueueParams{})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			raw, err := os.ReadFile(filepath.Join("..", "..", "payload", "testdata", "envelopes", c.file+".json"))
			if err != nil {
				t.Fatal(err)
			}
			// The hand-made envelopes share one uuid, which failed_jobs keeps unique: give each its own.
			raw = []byte(strings.Replace(string(raw), "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", fmt.Sprintf("9b1deb4d-3b7d-4bad-9bdd-%012d", i), 1))
			now := int64(1763700000)
			if _, err := q.JobPush(ctx, &laravel.JobPushParams{Queue: c.file, Payload: raw, Now: now, AvailableAt: now}); err != nil {
				t.Fatal(err)
			}
			st := s.drain(t, ctx, func(w *worker.Config) { w.Queues = []string{c.file}; w.LaravelVersion = c.version; w.Tries = 0 })
			if st.Claimed != 1 {
				t.Errorf("%s: Go stats %+v, want one job claimed", c.file, st)
			}
		}

		failed := map[string]string{}
		for _, f := range s.failed(t, ctx) {
			failed[f.Queue] = f.Exception
		}
		ran := strings.Join(calls, " ")
		for _, c := range cases {
			switch {
			case c.failed == "" && failed[c.file] != "":
				t.Errorf("%s failed: %s", c.file, firstLine(failed[c.file]))
			case c.failed != "" && !strings.HasPrefix(failed[c.file], c.failed):
				t.Errorf("%s: failed_jobs exception %q, want it to start with %q", c.file, firstLine(failed[c.file]), c.failed)
			}
			if deadline := strings.Contains(c.failed, "MaxAttempts"); deadline == strings.Contains(" "+ran+" ", " "+c.file+" ") {
				t.Errorf("%s: handler called %v, want %v (calls: %s)", c.file, !deadline, deadline, ran)
			}
		}
		if rows := s.jobs(t, ctx); len(rows) != 0 {
			t.Errorf("jobs left: %+v", rows)
		}
		var locks int
		if err := queuetest.DB(s.conn).QueryRowContext(ctx, "select count(*) from cache_locks").Scan(&locks); err != nil {
			t.Fatal(err)
		}
		if locks != 0 {
			t.Errorf("the 11.x job's unique lock was not released")
		}
		out := s.artisan(t, ctx, "queue:failed")
		if n := strings.Count(out, `App\Jobs\SendInvoice`); n != 4 {
			t.Errorf("queue:failed lists %d SendInvoice failures, want 4:\n%s", n, out)
		}
	})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
