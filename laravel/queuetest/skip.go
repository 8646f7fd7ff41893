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
