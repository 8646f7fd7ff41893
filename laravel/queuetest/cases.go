package queuetest

import (
	"bytes"
	"testing"

	"github.com/artisan-go/artisan-go/laravel"
)

func caseFIFOByID(t *testing.T, s *Setup) {
	var ids []int64
	for i := range 5 {
		ids = append(ids, s.Push(t, "default", t0, t0, i))
	}
	s.Push(t, "other", t0, t0, 99)
	for _, want := range ids[:2] {
		j := s.Claim(t, s.Queue, "default", t0, 90)
		if j == nil || j.ID != want {
			t.Fatalf("claimed %+v, want id %d", j, want)
		}
		if j.Attempts != 1 || j.ReservedAt != t0 || j.Queue != "default" {
			t.Fatalf("claimed job = %+v, want attempts 1, reserved_at %d", j, t0)
		}
	}
	jobs, err := s.Queue.JobClaim(bg, &laravel.JobClaimParams{Queue: "default", Now: t0, RetryAfter: 90, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 {
		t.Fatalf("Limit 10 claimed %d jobs, want the 3 left", len(jobs))
	}
	for i, j := range jobs {
		if j.ID != ids[2+i] || j.Attempts != 1 {
			t.Fatalf("job %d = id %d attempts %d, want id %d attempts 1", i, j.ID, j.Attempts, ids[2+i])
		}
	}
	if j := s.Claim(t, s.Queue, "default", t0, 90); j != nil {
		t.Fatalf("claimed %d from an empty queue", j.ID)
	}
}

func caseAvailabilityInclusive(t *testing.T, s *Setup) {
	id := s.Push(t, "default", t0, t0+30, 1)
	if j := s.Claim(t, s.Queue, "default", t0+29, 90); j != nil {
		t.Fatalf("delayed job claimed a second early")
	}
	j := s.Claim(t, s.Queue, "default", t0+30, 90)
	if j == nil || j.ID != id || j.Attempts != 1 {
		t.Fatalf("claim at available_at = %+v, want id %d attempts 1", j, id)
	}
	// Reserved at t0+30 with retry_after 90: expired from t0+120 on, inclusive.
	if j := s.Claim(t, s.Queue, "default", t0+119, 90); j != nil {
		t.Fatalf("reservation re-claimed a second before it expired")
	}
	j2 := s.Claim(t, s.Queue, "default", t0+120, 90)
	if j2 == nil || j2.ID != id || j2.Attempts != 2 || j2.ReservedAt != t0+120 {
		t.Fatalf("re-claim of the expired reservation = %+v, want id %d attempts 2 reserved_at %d", j2, id, t0+120)
	}
}

func caseExpiredIgnoresAvailableAt(t *testing.T, s *Setup) {
	s.Push(t, "default", t0, t0, 1)
	j := s.Claim(t, s.Queue, "default", t0, 60)
	// Laravel's expired branch does not look at available_at.
	if _, err := DB(s.Conn).Exec(Rebind(s.Conn, "update "+Q(s.Conn, s.Conn.Tables().Jobs)+" set available_at = ? where id = ?"), t0+1000, j.ID); err != nil {
		t.Fatal(err)
	}
	if j2 := s.Claim(t, s.Queue, "default", t0+60, 60); j2 == nil || j2.ID != j.ID {
		t.Fatalf("expired reservation with a future available_at was not re-claimed")
	}
}

func caseAttemptsSaturate(t *testing.T, s *Setup) {
	id := s.Push(t, "default", t0, t0, 1)
	top := s.Conn.MaxAttempts()
	if _, err := DB(s.Conn).Exec(Rebind(s.Conn, "update "+Q(s.Conn, s.Conn.Tables().Jobs)+" set attempts = ? where id = ?"), top, id); err != nil {
		t.Fatal(err)
	}
	j := s.Claim(t, s.Queue, "default", t0, 90)
	if j == nil || j.ID != id || j.Attempts != top {
		t.Fatalf("claim at the column's maximum attempts = %+v, want attempts %d", j, top)
	}
	if err := s.Queue.JobDelete(bg, j); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

// caseAttemptsSmallint: Laravel 13.6's stub makes attempts an unsigned smallint, and claims count
// past a tinyint's 255.
func caseAttemptsSmallint(t *testing.T, s *Setup) {
	id := s.Push(t, "default", t0, t0, 1)
	if top := s.Conn.MaxAttempts(); top < 32767 {
		t.Fatalf("MaxAttempts of a smallint attempts column = %d", top)
	}
	if _, err := DB(s.Conn).Exec(Rebind(s.Conn, "update "+Q(s.Conn, s.Conn.Tables().Jobs)+" set attempts = 300 where id = ?"), id); err != nil {
		t.Fatal(err)
	}
	if j := s.Claim(t, s.Queue, "default", t0, 90); j == nil || j.ID != id || j.Attempts != 301 {
		t.Fatalf("claim at attempts 300 = %+v, want attempts 301", j)
	}
}

func caseExcludeIDs(t *testing.T, s *Setup) {
	a := s.Push(t, "default", t0, t0, 1)
	b := s.Push(t, "default", t0, t0, 2)
	c := s.Push(t, "default", t0, t0, 3)
	if j := s.Claim(t, s.Queue, "default", t0, 90, a); j == nil || j.ID != b {
		t.Fatalf("claim excluding %d = %+v, want %d", a, j, b)
	}
	if j := s.Claim(t, s.Queue, "default", t0, 90, a, c); j != nil {
		t.Fatalf("claim excluding every available id returned %d", j.ID)
	}
	if j := s.Claim(t, s.Queue, "default", t0, 90); j == nil || j.ID != a {
		t.Fatalf("claim without exclusions = %+v, want %d", j, a)
	}
}

func casePush(t *testing.T, s *Setup) {
	id1 := s.Push(t, "default", t0, t0+5, 1)
	id2 := s.Push(t, "emails", t0+1, t0+1, 2)
	if id1 <= 0 || id2 <= id1 {
		t.Fatalf("push ids %d, %d: want positive and increasing", id1, id2)
	}
	rows := s.Rows(t)
	want := []Row{
		{ID: id1, Queue: "default", Payload: Payload(1), AvailableAt: t0 + 5, CreatedAt: t0},
		{ID: id2, Queue: "emails", Payload: Payload(2), AvailableAt: t0 + 1, CreatedAt: t0 + 1},
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for i, r := range rows {
		w := want[i]
		if r.ID != w.ID || r.Queue != w.Queue || !bytes.Equal(r.Payload, w.Payload) || r.Attempts != 0 ||
			r.ReservedAt != nil || r.AvailableAt != w.AvailableAt || r.CreatedAt != w.CreatedAt {
			t.Fatalf("row %d = %+v\nwant %+v", i, r, w)
		}
	}
}

func caseDeleteFenced(t *testing.T, s *Setup) {
	first, second := claimTwice(t, s)
	wantLost(t, "delete", s.Queue.JobDelete(bg, first))
	wantUntouched(t, s, second)
	if err := s.Queue.JobDelete(bg, second); err != nil {
		t.Fatalf("delete by the current claimer: %v", err)
	}
	if n := len(s.Rows(t)); n != 0 {
		t.Fatalf("%d rows after delete, want 0", n)
	}
	wantLost(t, "second delete", s.Queue.JobDelete(bg, second))
}

func caseRelease(t *testing.T, s *Setup) {
	s.Push(t, "default", t0, t0, 1)
	j := s.Claim(t, s.Queue, "default", t0+2, 90)
	if err := s.Queue.JobRelease(bg, j, &laravel.JobReleaseParams{Now: t0 + 10, Delay: 30}); err != nil {
		t.Fatalf("release: %v", err)
	}
	rows := s.Rows(t)
	if len(rows) != 1 {
		t.Fatalf("%d rows after release, want 1", len(rows))
	}
	r := rows[0]
	if r.ID <= j.ID || !bytes.Equal(r.Payload, j.Payload) || !bytes.Equal(r.Payload, Payload(1)) ||
		r.Attempts != 1 || r.ReservedAt != nil || r.AvailableAt != t0+40 || r.CreatedAt != t0+10 || r.Queue != "default" {
		t.Fatalf("released row = %+v; want a new id > %d, the same payload bytes, attempts 1, reserved_at NULL, available_at %d, created_at %d", r, j.ID, t0+40, t0+10)
	}
	wantLost(t, "second release", s.Queue.JobRelease(bg, j, &laravel.JobReleaseParams{Now: t0 + 10}))
	if n := len(s.Rows(t)); n != 1 {
		t.Fatalf("a refused release changed the table: %d rows", n)
	}
}

// caseReleaseFarFuture releases with a delay past what available_at holds (PostgreSQL's integer ends in
// 2038): the release is written, not refused, and the row waits at least until then.
func caseReleaseFarFuture(t *testing.T, s *Setup) {
	s.Push(t, "default", t0, t0, 1)
	j := s.Claim(t, s.Queue, "default", t0+2, 90)
	if err := s.Queue.JobRelease(bg, j, &laravel.JobReleaseParams{Now: t0 + 10, Delay: 5_000_000_000}); err != nil {
		t.Fatalf("release with a delay of 5e9 s: %v", err)
	}
	rows := s.Rows(t)
	if len(rows) != 1 || rows[0].ReservedAt != nil || rows[0].AvailableAt < 1<<31-1 {
		t.Fatalf("rows after release %+v; want one, unreserved, available_at at 2^31-1 or later", rows)
	}
	if j := s.Claim(t, s.Queue, "default", t0+1_000_000, 90); j != nil {
		t.Fatalf("claimed job %d long before its available_at", j.ID)
	}
}

func caseReleaseFenced(t *testing.T, s *Setup) {
	first, second := claimTwice(t, s)
	wantLost(t, "release", s.Queue.JobRelease(bg, first, &laravel.JobReleaseParams{Now: t0 + 100}))
	wantUntouched(t, s, second)
}

func caseFailFenced(t *testing.T, s *Setup) {
	first, second := claimTwice(t, s)
	wantLost(t, "fail", s.Queue.JobFail(bg, first, failParams()))
	wantUntouched(t, s, second)
	if n := s.Count(t, s.Conn.Tables().FailedJobs); n != 0 {
		t.Fatalf("a refused fail wrote %d failed_jobs rows", n)
	}
}

func caseRenewFenced(t *testing.T, s *Setup) {
	first, second := claimTwice(t, s)
	wantLost(t, "renew", s.Queue.JobRenew(bg, first, t0+120))
	wantUntouched(t, s, second)
}

func caseReturnFenced(t *testing.T, s *Setup) {
	first, second := claimTwice(t, s)
	wantLost(t, "return", s.Queue.JobReturn(bg, []*laravel.Job{first}))
	wantUntouched(t, s, second)
}

func caseRenew(t *testing.T, s *Setup) {
	s.Push(t, "default", t0, t0, 1)
	j := s.Claim(t, s.Queue, "default", t0, 90)
	// Renewing within the same second must not look like a lost claim.
	if err := s.Queue.JobRenew(bg, j, t0); err != nil {
		t.Fatalf("renew in the same second: %v", err)
	}
	if err := s.Queue.JobRenew(bg, j, t0+80); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if j.ReservedAt != t0+80 {
		t.Fatalf("ReservedAt after renew = %d, want %d", j.ReservedAt, t0+80)
	}
	if j2 := s.Claim(t, s.Queue, "default", t0+90, 90); j2 != nil {
		t.Fatalf("a renewed reservation was re-claimed at its original expiry")
	}
	if err := s.Queue.JobDelete(bg, j); err != nil {
		t.Fatalf("delete after renew: %v", err)
	}
}

func caseReturn(t *testing.T, s *Setup) {
	a := s.Push(t, "default", t0, t0, 1)
	b := s.Push(t, "default", t0, t0, 2)
	jobs, err := s.Queue.JobClaim(bg, &laravel.JobClaimParams{Queue: "default", Now: t0, RetryAfter: 90, Limit: 2})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("claim 2: %d jobs, %v", len(jobs), err)
	}
	if err := s.Queue.JobReturn(bg, jobs); err != nil {
		t.Fatalf("return: %v", err)
	}
	for _, r := range s.Rows(t) {
		if r.Attempts != 0 || r.ReservedAt != nil {
			t.Fatalf("returned row = %+v, want attempts 0 and reserved_at NULL", r)
		}
	}
	if j := s.Claim(t, s.Queue, "default", t0, 90); j == nil || j.ID != a || j.Attempts != 1 {
		t.Fatalf("claim after return = %+v, want id %d attempts 1", j, a)
	}
	_ = b
}

func caseDeleteAndPush(t *testing.T, s *Setup) {
	first, second := claimTwice(t, s)
	next := []*laravel.JobPushParams{
		{Queue: "chain", Payload: Payload(7), Now: t0 + 100, AvailableAt: t0 + 100},
		{Queue: "chain", Payload: Payload(8), Now: t0 + 100, AvailableAt: t0 + 105},
	}
	if _, err := s.Queue.JobDeleteAndPush(bg, first, next, nil); err == nil {
		t.Fatalf("delete-and-push by a stale claim succeeded")
	} else {
		wantLost(t, "delete-and-push", err)
	}
	wantUntouched(t, s, second)
	ids, err := s.Queue.JobDeleteAndPush(bg, second, next, nil)
	if err != nil {
		t.Fatalf("delete-and-push: %v", err)
	}
	rows := s.Rows(t)
	if len(ids) != 2 || len(rows) != 2 || rows[0].ID != ids[0] || rows[1].ID != ids[1] ||
		!bytes.Equal(rows[1].Payload, Payload(8)) || rows[1].AvailableAt != t0+105 || rows[0].Queue != "chain" {
		t.Fatalf("after delete-and-push: ids %v, rows %+v", ids, rows)
	}
}

// caseDeleteCountsBatch: a job's success is counted in its batch in the transaction that deletes it,
// with the jobs the step adds; a stale claim counts nothing, and a batch that is gone counts nothing
// without failing the delete.
func caseDeleteCountsBatch(t *testing.T, s *Setup) {
	if err := s.Conn.BatchCreate(bg, &laravel.BatchCreateParams{ID: "b-1", Name: "b", TotalJobs: 2, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	var seen []*laravel.Batch
	step := func(id string) *laravel.BatchStep {
		return &laravel.BatchStep{ID: id, JobUUID: "u-1", Then: func(b *laravel.Batch) ([]*laravel.JobPushParams, error) {
			seen = append(seen, b)
			if b == nil || b.PendingJobs != 0 {
				return nil, nil
			}
			return []*laravel.JobPushParams{{Queue: "callbacks", Payload: Payload(9), Now: t0 + 100, AvailableAt: t0 + 100}}, nil
		}}
	}
	pending := func() int {
		b, err := s.Conn.BatchFind(bg, "b-1")
		if err != nil {
			t.Fatal(err)
		}
		return b.PendingJobs
	}
	first, second := claimTwice(t, s)
	if _, err := s.Queue.JobDeleteAndPush(bg, first, nil, step("b-1")); err == nil {
		t.Fatalf("delete by a stale claim succeeded")
	} else {
		wantLost(t, "delete-and-count", err)
	}
	if n := pending(); n != 2 {
		t.Fatalf("a stale claim's delete left pending_jobs %d, want 2 (nothing counted)", n)
	}
	if _, err := s.Queue.JobDeleteAndPush(bg, second, nil, step("b-1")); err != nil {
		t.Fatalf("delete and count: %v", err)
	}
	if n := pending(); n != 1 || len(s.Rows(t)) != 0 {
		t.Fatalf("after the delete: pending_jobs %d, %d rows; want 1 and none", n, len(s.Rows(t)))
	}
	s.Push(t, "default", t0, t0, 1)
	last := s.Claim(t, s.Queue, "default", t0, 90)
	ids, err := s.Queue.JobDeleteAndPush(bg, last, nil, step("b-1"))
	if err != nil || len(ids) != 1 {
		t.Fatalf("the batch's last job: ids %v, %v; want the step's job inserted", ids, err)
	}
	if b, err := s.Conn.BatchFind(bg, "b-1"); err != nil || b.PendingJobs != 0 || b.FinishedAt == nil {
		t.Fatalf("the batch after its last job: %+v (%v), want pending 0 and finished", b, err)
	}
	if rows := s.Rows(t); len(rows) != 1 || rows[0].ID != ids[0] || rows[0].Queue != "callbacks" {
		t.Fatalf("rows %+v, want the step's job", rows)
	}
	s.Push(t, "default", t0, t0, 1)
	gone := s.Claim(t, s.Queue, "default", t0, 90)
	if _, err := s.Queue.JobDeleteAndPush(bg, gone, nil, step("pruned")); err != nil {
		t.Fatalf("a job of a pruned batch: %v, want it deleted", err)
	}
	if n := len(seen); n < 3 || seen[n-1] != nil {
		t.Fatalf("Then saw %v, want the pruned batch as nil last", seen)
	}
}

// caseFailCountsBatch: a job's failure is counted in its batch in the transaction that fails it, with
// the jobs Push adds, and the first failure cancels the batch when the step says so; a stale claim
// counts and inserts nothing.
func caseFailCountsBatch(t *testing.T, s *Setup) {
	if err := s.Conn.BatchCreate(bg, &laravel.BatchCreateParams{ID: "b-2", Name: "b", TotalJobs: 3, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	params := func() *laravel.JobFailParams {
		p := failParams()
		p.Push = []*laravel.JobPushParams{{Queue: "hooks", Payload: Payload(8), Now: t0 + 100, AvailableAt: t0 + 100}}
		p.Batch = &laravel.BatchStep{ID: "b-2", JobUUID: "u-2", Failed: true,
			CancelOnFailure: func(*laravel.Batch) bool { return true },
			Then: func(b *laravel.Batch) ([]*laravel.JobPushParams, error) {
				return []*laravel.JobPushParams{{Queue: "callbacks", Payload: Payload(9), Now: t0 + 100, AvailableAt: t0 + 100}}, nil
			}}
		return p
	}
	first, second := claimTwice(t, s)
	wantLost(t, "fail", s.Queue.JobFail(bg, first, params()))
	if b, err := s.Conn.BatchFind(bg, "b-2"); err != nil || b.FailedJobs != 0 || b.CancelledAt != nil {
		t.Fatalf("a stale claim's fail changed the batch: %+v (%v)", b, err)
	}
	if err := s.Queue.JobFail(bg, second, params()); err != nil {
		t.Fatalf("fail: %v", err)
	}
	b, err := s.Conn.BatchFind(bg, "b-2")
	if err != nil || b.FailedJobs != 1 || b.PendingJobs != 3 || len(b.FailedJobIDs) != 1 || b.FailedJobIDs[0] != "u-2" || b.CancelledAt == nil {
		t.Fatalf("the batch after the failure: %+v (%v); want failed 1 (u-2), pending 3, cancelled", b, err)
	}
	if rows := s.Rows(t); len(rows) != 2 || rows[0].Queue != "hooks" || rows[1].Queue != "callbacks" || s.Count(t, s.Conn.Tables().FailedJobs) != 1 {
		t.Fatalf("rows %+v, want only the pushed job and the step's, and one failed_jobs row", rows)
	}
}

// caseClaimFromMinID: a claim with MinID leaves out the rows below it.
func caseClaimFromMinID(t *testing.T, s *Setup) {
	first := s.Push(t, "default", t0, t0, 1)
	s.Push(t, "default", t0, t0, 2)
	s.Push(t, "default", t0, t0, 3)
	jobs, err := s.Queue.JobClaim(bg, &laravel.JobClaimParams{Queue: "default", Now: t0, RetryAfter: 90, Limit: 3, MinID: first + 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) == 0 || jobs[0].ID != first+1 {
		t.Fatalf("claim from id %d took %+v, want the rows from it on", first+1, jobs)
	}
	for _, j := range jobs {
		if j.ID < first+1 {
			t.Fatalf("claim from id %d took row %d", first+1, j.ID)
		}
	}
}

func caseExpiresMidJob(t *testing.T, s *Setup) {
	s.Push(t, "default", t0, t0, 1)
	other := s.NewQueue(t, Open(t, s.Params))
	slow := s.Claim(t, s.Queue, "default", t0, 60)
	// The slow worker is still running when retry_after passes; a second worker takes the job over.
	fast := s.Claim(t, other, "default", t0+60, 60)
	if fast == nil || fast.ID != slow.ID || fast.Attempts != 2 {
		t.Fatalf("second claimer got %+v, want the expired job with attempts 2", fast)
	}
	if err := other.JobDelete(bg, fast); err != nil {
		t.Fatalf("second claimer's delete: %v", err)
	}
	wantLost(t, "the first claimer's delete", s.Queue.JobDelete(bg, slow))
}

// claimTwice pushes a job, claims it at t0 and claims it again after retry_after from a second Conn, as
// a second worker would. It returns both claims.
func claimTwice(t *testing.T, s *Setup) (first, second *laravel.Job) {
	t.Helper()
	s.Push(t, "default", t0, t0, 1)
	first = s.Claim(t, s.Queue, "default", t0, 90)
	other := s.NewQueue(t, Open(t, s.Params))
	second = s.Claim(t, other, "default", t0+90, 90)
	if first == nil || second == nil || second.ID != first.ID || second.Attempts != 2 {
		t.Fatalf("claims = %+v, %+v; want the same job with attempts 1 then 2", first, second)
	}
	return first, second
}

// wantUntouched asserts the only row still carries the claim j.
func wantUntouched(t *testing.T, s *Setup, j *laravel.Job) {
	t.Helper()
	rows := s.Rows(t)
	if len(rows) != 1 || rows[0].ID != j.ID || rows[0].Attempts != j.Attempts || rows[0].ReservedAt == nil ||
		*rows[0].ReservedAt != j.ReservedAt || !bytes.Equal(rows[0].Payload, j.Payload) {
		t.Fatalf("rows = %+v, want only job %d still claimed with attempts %d at %d", rows, j.ID, j.Attempts, j.ReservedAt)
	}
}
