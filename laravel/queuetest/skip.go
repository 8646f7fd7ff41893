package queuetest

import (
	"slices"
	"sync"
	"testing"

	"github.com/artisan-go/artisan-go/laravel"
)

// caseClaimSkips: rows a claim's Skip passes over are never reserved, their attempts never spent, in
// the database as in the jobs handed to Left, which hears of each once the claim has committed; the
// other rows are claimed as usual, once each.
func caseClaimSkips(t *testing.T, s *Setup) {
	var ids []int64
	skip := map[int64]bool{}
	for i := range 8 {
		id := s.Push(t, "default", t0, t0, i)
		ids = append(ids, id)
		skip[id] = i%2 == 1
	}
	var mu sync.Mutex
	var claimed, left []int64
	claim := func(queue string, now int64, skipOf func(*laravel.Job) bool) (took, heard []*laravel.Job) {
		t.Helper()
		p := &laravel.JobClaimParams{
			Queue: queue, Now: now, RetryAfter: 90, Limit: 8, ExcludeIDs: slices.Clone(left), Whole: queue != "default",
			Skip: skipOf,
			Left: func(jobs []*laravel.Job) {
				mu.Lock()
				defer mu.Unlock()
				heard = append(heard, jobs...)
			},
		}
		jobs, err := s.Queue.JobClaim(bg, p)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return jobs, heard
	}
	for range 20 {
		took, heard := claim("default", t0, func(j *laravel.Job) bool { return skip[j.ID] })
		if len(took) == 0 && len(heard) == 0 {
			break
		}
		for _, j := range took {
			if skip[j.ID] {
				t.Fatalf("claimed row %d, which Skip passes over", j.ID)
			}
			if j.Attempts != 1 || j.ReservedAt != t0 {
				t.Fatalf("claimed %+v, want attempts 1 reserved_at %d", j, t0)
			}
			claimed = append(claimed, j.ID)
		}
		for _, j := range heard {
			if !skip[j.ID] {
				t.Fatalf("Left heard of row %d, which Skip keeps", j.ID)
			}
			if j.Attempts != 0 || j.ReservedAt != 0 {
				t.Fatalf("Left heard of %+v, want it as it was: attempts 0, not reserved", j)
			}
			left = append(left, j.ID)
		}
	}
	slices.Sort(claimed)
	slices.Sort(left)
	var wantClaimed, wantLeft []int64
	for _, id := range ids {
		if skip[id] {
			wantLeft = append(wantLeft, id)
		} else {
			wantClaimed = append(wantClaimed, id)
		}
	}
	if !slices.Equal(claimed, wantClaimed) || !slices.Equal(left, wantLeft) {
		t.Fatalf("claimed %v and left %v, want %v and %v (each once)", claimed, left, wantClaimed, wantLeft)
	}
	for _, r := range s.Rows(t) {
		switch {
		case skip[r.ID] && (r.Attempts != 0 || r.ReservedAt != nil):
			t.Fatalf("row %d passed over: attempts %d reserved_at %v, want 0 and null", r.ID, r.Attempts, r.ReservedAt)
		case !skip[r.ID] && (r.Attempts != 1 || r.ReservedAt == nil || *r.ReservedAt != t0):
			t.Fatalf("row %d claimed: attempts %d reserved_at %v, want 1 and %d", r.ID, r.Attempts, r.ReservedAt, t0)
		}
	}

	// A reservation that expired and is passed over keeps its attempts, and stays claimable.
	expired := s.Push(t, "other", t0, t0, 9)
	if j := s.Claim(t, s.Queue, "other", t0, 90); j == nil || j.ID != expired {
		t.Fatalf("claim = %+v, want row %d", j, expired)
	}
	left = nil
	took, heard := claim("other", t0+90, func(j *laravel.Job) bool { return j.ID == expired })
	if len(took) != 0 || len(heard) != 1 || heard[0].ID != expired || heard[0].Attempts != 1 {
		t.Fatalf("claim passing over the expired row %d took %d rows, Left heard of %+v", expired, len(took), heard)
	}
	for _, r := range s.Rows(t) {
		if r.ID == expired && r.Attempts != 1 {
			t.Fatalf("expired row passed over: attempts %d, want 1 as before", r.Attempts)
		}
	}
	took, _ = claim("other", t0+90, nil)
	if len(took) != 1 || took[0].ID != expired || took[0].Attempts != 2 {
		t.Fatalf("claim after the pass took %+v, want the expired row %d at attempts 2", took, expired)
	}
}

// caseMoveUnclaimed: a row a claim passed over moves to another queue byte for byte, its attempts as
// they were, in one transaction that writes nothing when a claim took the row since it was read; an
// expired reservation passed over moves only while its reservation is the one read.
func caseMoveUnclaimed(t *testing.T, s *Setup) {
	id := s.Push(t, "default", t0, t0, 1)
	var heard []*laravel.Job
	jobs, err := s.Queue.JobClaim(bg, &laravel.JobClaimParams{
		Queue: "default", Now: t0, RetryAfter: 90, Limit: 4,
		Skip: func(*laravel.Job) bool { return true },
		Left: func(jobs []*laravel.Job) { heard = append(heard, jobs...) },
	})
	if err != nil || len(jobs) != 0 || len(heard) != 1 || heard[0].ID != id {
		t.Fatalf("claim passing over row %d: took %d, Left heard %+v, err %v", id, len(jobs), heard, err)
	}
	move := func(j *laravel.Job) bool {
		t.Helper()
		moved, err := s.Conn.JobMoveUnclaimed(bg, []*laravel.Job{j}, "php", t0+1)
		if err != nil {
			t.Fatal(err)
		}
		return len(moved) == 1 && moved[0] == j
	}
	if !move(heard[0]) {
		t.Fatalf("row %d, untouched since it was passed over, was not moved", id)
	}
	rows := s.Rows(t)
	if len(rows) != 1 || rows[0].ID == id || rows[0].Queue != "php" || string(rows[0].Payload) != string(Payload(1)) || rows[0].Attempts != 0 || rows[0].ReservedAt != nil {
		t.Fatalf("rows after the move %+v, want one new unreserved row on php with the payload, attempts 0", rows)
	}
	if move(heard[0]) || len(s.Rows(t)) != 1 {
		t.Fatalf("moving row %d a second time wrote something", id)
	}

	// Claimed by another worker since it was read: not moved, its claim untouched.
	other := s.Push(t, "other", t0, t0, 2)
	read := &laravel.Job{ID: other, Queue: "other", Payload: Payload(2)}
	if j := s.Claim(t, s.Queue, "other", t0, 90); j == nil || j.ID != other {
		t.Fatalf("claim = %+v, want row %d", j, other)
	}
	if move(read) {
		t.Fatalf("row %d claimed since it was read was moved", other)
	}
	// Its reservation expired and read as such: moved, attempts kept.
	read.Attempts, read.ReservedAt = 1, t0
	if !move(read) {
		t.Fatalf("expired reservation of row %d read as it is was not moved", other)
	}
	for _, r := range s.Rows(t) {
		if r.ID == other || (r.Queue == "php" && string(r.Payload) == string(Payload(2)) && r.Attempts != 1) {
			t.Fatalf("row after moving the expired reservation %+v", r)
		}
	}

	// Of several rows moved at once, the one claimed since is left with its claim; the others move.
	var many []*laravel.Job
	for i := range 3 {
		id := s.Push(t, "many", t0, t0, 10+i)
		many = append(many, &laravel.Job{ID: id, Queue: "many", Payload: Payload(10 + i)})
	}
	// Another worker's claim (the batch strategy's claim here would take all three, prefetching).
	taken := many[1]
	claimSQL := Rebind(s.Conn, "update "+Q(s.Conn, s.Conn.Tables().Jobs)+" set reserved_at = ?, attempts = 1 where id = ?")
	if _, err := DB(s.Conn).Exec(claimSQL, t0, taken.ID); err != nil {
		t.Fatal(err)
	}
	moved, err := s.Conn.JobMoveUnclaimed(bg, many, "php", t0+1)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 2 || moved[0].ID == taken.ID || moved[1].ID == taken.ID {
		t.Fatalf("moved %d of 3 rows, row %d claimed since they were read; want the other 2", len(moved), taken.ID)
	}
	onMany := 0
	for _, r := range s.Rows(t) {
		if r.Queue == "many" {
			onMany++
			if r.ID != taken.ID || r.Attempts != 1 || r.ReservedAt == nil {
				t.Fatalf("row left on many %+v, want the claimed row %d as claimed", r, taken.ID)
			}
		}
	}
	if onMany != 1 {
		t.Fatalf("%d rows on many, want the claimed one", onMany)
	}
}
