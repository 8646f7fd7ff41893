package queuetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
)

// failParams returns a failure at 2023-11-14 22:13:20 UTC, to be written in UTC+05:30.
func failParams() *laravel.JobFailParams {
	return &laravel.JobFailParams{
		Connection: "database",
		Queue:      "default",
		Exception:  "RuntimeException: boom in /app/Jobs/Run.php:12\nStack trace:\n#0 {main}",
		FailedAt:   time.Unix(t0, 0).In(time.FixedZone("IST", 5*3600+1800)),
	}
}

// caseFail fails a job into failed_jobs as Laravel 8+ writes it (with a uuid column) or as 5.x-7.x
// does (withoutUUID), and checks the row byte for byte.
func caseFail(withoutUUID bool) func(t *testing.T, s *Setup) {
	return func(t *testing.T, s *Setup) {
		s.Push(t, "other", t0, t0, 1)
		id := s.Push(t, "default", t0, t0, 2)
		j := s.Claim(t, s.Queue, "default", t0, 90)
		if j.ID != id {
			t.Fatalf("claimed %d, want %d", j.ID, id)
		}
		if err := s.Queue.JobFail(bg, j, failParams()); err != nil {
			t.Fatalf("fail: %v", err)
		}
		rows := s.Rows(t)
		if len(rows) != 1 || rows[0].ID == id {
			t.Fatalf("jobs after fail = %+v, want only the other queue's job", rows)
		}
		f := s.FailedRows(t)
		if len(f) != 1 {
			t.Fatalf("%d failed_jobs rows, want 1", len(f))
		}
		want := FailedRow{
			UUID: "00000000-0000-4000-8000-000000000002", Connection: "database", Queue: "default",
			Payload: Payload(2), Exception: failParams().Exception, FailedAt: "2023-11-15 03:43:20",
		}
		if withoutUUID {
			want.UUID = ""
		}
		got := f[0]
		if !withoutUUID {
			// Payloads from before Laravel 8 have no uuid; they still fail, each under a fresh one.
			for range 2 {
				if _, err := s.Queue.JobPush(bg, &laravel.JobPushParams{Queue: "default", Payload: []byte(`{"job":"Old@fire"}`), Now: t0, AvailableAt: t0}); err != nil {
					t.Fatal(err)
				}
				old := s.Claim(t, s.Queue, "default", t0, 90)
				if err := s.Queue.JobFail(bg, old, failParams()); err != nil {
					t.Fatalf("fail a payload without uuid: %v", err)
				}
			}
			if f := s.FailedRows(t); len(f) != 3 || len(f[1].UUID) != 36 || len(f[2].UUID) != 36 || f[1].UUID == f[2].UUID {
				t.Fatalf("failed rows for payloads without uuid: %+v", f)
			}
		}
		if got.UUID != want.UUID || got.Connection != want.Connection || got.Queue != want.Queue ||
			!bytes.Equal(got.Payload, want.Payload) || got.Exception != want.Exception || got.FailedAt != want.FailedAt {
			t.Fatalf("failed_jobs row = %+v\nwant %+v", got, want)
		}
	}
}

// FailedRow is a failed_jobs row; UUID is empty when the table has no uuid column.
type FailedRow struct {
	UUID, Connection, Queue string
	Payload                 []byte
	Exception, FailedAt     string
}

// FailedRows returns the failed_jobs rows in id order, failed_at as Y-m-d H:i:s text.
func (s *Setup) FailedRows(t testing.TB) []FailedRow {
	t.Helper()
	at := map[laravel.Dialect]string{
		laravel.MySQL:    "cast(failed_at as char)",
		laravel.Postgres: "to_char(failed_at, 'YYYY-MM-DD HH24:MI:SS')",
		laravel.SQLite:   "cast(failed_at as text)",
	}[s.Conn.Dialect()]
	rows, err := DB(s.Conn).Queryx("select *, " + at + " as failed_at_text from " + Q(s.Conn, s.Conn.Tables().FailedJobs) + " order by id")
	if err != nil {
		t.Fatalf("select failed_jobs: %v", err)
	}
	defer rows.Close()
	var out []FailedRow
	for rows.Next() {
		m := map[string]any{}
		if err := rows.MapScan(m); err != nil {
			t.Fatalf("scan failed_jobs: %v", err)
		}
		str := func(k string) string {
			switch v := m[k].(type) {
			case []byte:
				return string(v)
			case string:
				return v
			case nil:
				return ""
			default:
				t.Fatalf("failed_jobs.%s is %T", k, v)
				return ""
			}
		}
		out = append(out, FailedRow{
			UUID: str("uuid"), Connection: str("connection"), Queue: str("queue"), Payload: []byte(str("payload")),
			Exception: str("exception"), FailedAt: str("failed_at_text"),
		})
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("select failed_jobs: %v", err)
	}
	return out
}
