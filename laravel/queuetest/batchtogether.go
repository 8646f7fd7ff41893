package queuetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/artisan-go/artisan-go/laravel"
)

func init() {
	register("DeleteCountsBatchTogether", Options{}, caseDeleteCountsBatchTogether)
}

// caseDeleteCountsBatchTogether: the members of two batches completed at the same time, some with a
// chain's next job, leave the counts, the Then calls and the inserted rows that as many completions
// one after the other would (however the strategy groups them): every member's Then sees a pending
// count of its own, the batch's last one sees 0 and adds its job once, and a stale claim among them
// counts and inserts nothing.
func caseDeleteCountsBatchTogether(t *testing.T, s *Setup) {
	sizes := map[string]int{"b-3": 40, "b-4": 10}
	for id, n := range sizes {
		if err := s.Conn.BatchCreate(bg, &laravel.BatchCreateParams{ID: id, Name: "b", TotalJobs: n, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	stale, held := claimTwice(t, s)
	for i := range 50 {
		s.Push(t, "default", t0, t0, 100+i)
	}
	var jobs []*laravel.Job
	for range 50 {
		j := s.Claim(t, s.Queue, "default", t0+90, 90)
		if j == nil {
			t.Fatalf("claimed %d of 50 jobs", len(jobs))
		}
		jobs = append(jobs, j)
	}

	var mu sync.Mutex
	seen := map[string]int{} // batch/uuid → the pending count its Then saw
	step := func(batch, uuid string) *laravel.BatchStep {
		return &laravel.BatchStep{ID: batch, JobUUID: uuid, Then: func(b *laravel.Batch) ([]*laravel.JobPushParams, error) {
			// Called again when a transaction is retried: the last call of each step is kept.
			mu.Lock()
			defer mu.Unlock()
			seen[batch+"/"+uuid] = b.PendingJobs
			if b.PendingJobs != 0 {
				return nil, nil
			}
			return []*laravel.JobPushParams{{Queue: "callbacks", Payload: Payload(9), Now: t0 + 100, AvailableAt: t0 + 100}}, nil
		}}
	}
	type result struct {
		ids []int64
		err error
	}
	results := make([]result, len(jobs)+1)
	var wg sync.WaitGroup
	for i, j := range append(slices.Clone(jobs), stale) {
		batch := "b-3"
		if i >= 40 {
			batch = "b-4"
		}
		var push []*laravel.JobPushParams
		if i%5 == 0 {
			push = []*laravel.JobPushParams{{Queue: "chain", Payload: Payload(i), Now: t0 + 100, AvailableAt: t0 + 100}}
		}
		uuid := fmt.Sprintf("u-%d", i)
		if j == stale {
			batch, uuid = "b-3", "stale"
		}
		wg.Go(func() {
			ids, err := s.Queue.JobDeleteAndPush(bg, j, push, step(batch, uuid))
			results[i] = result{ids, err}
		})
	}
	wg.Wait()

	wantLost(t, "a stale claim's delete-and-count among others", results[len(jobs)].err)
	for i, r := range results[:len(jobs)] {
		want := 0
		if i%5 == 0 {
			want++
		}
		batch := "b-3"
		if i >= 40 {
			batch = "b-4"
		}
		if pending, ok := seen[fmt.Sprintf("%s/u-%d", batch, i)]; !ok {
			t.Fatalf("member %d's Then was not called", i)
		} else if pending == 0 {
			want++
		}
		if r.err != nil || len(r.ids) != want {
			t.Fatalf("member %d: ids %v, %v; want %d inserted", i, r.ids, r.err, want)
		}
	}
	if _, ok := seen["b-3/stale"]; ok {
		t.Errorf("a stale claim's step was counted")
	}
	for id, n := range sizes {
		var got []int
		for k, pending := range seen {
			if strings.HasPrefix(k, id+"/") {
				got = append(got, pending)
			}
		}
		slices.Sort(got)
		for want := range n {
			if want >= len(got) || got[want] != want {
				t.Fatalf("batch %s: Then saw pending %v, want each of 0..%d once", id, got, n-1)
			}
		}
		b, err := s.Conn.BatchFind(bg, id)
		if err != nil || b.PendingJobs != 0 || b.FailedJobs != 0 || b.FinishedAt == nil || b.CancelledAt != nil {
			t.Fatalf("batch %s after its members: %+v (%v), want pending 0 and finished", id, b, err)
		}
	}
	byQueue := map[string]int{}
	for _, r := range s.Rows(t) {
		byQueue[r.Queue]++
		if r.Queue == "default" && r.ID != held.ID {
			t.Errorf("row %d of the default queue left, want only the re-claimed job %d", r.ID, held.ID)
		}
	}
	if byQueue["callbacks"] != 2 || byQueue["chain"] != 10 || byQueue["default"] != 1 {
		t.Fatalf("rows by queue %v, want 2 callbacks, 10 chain links and the re-claimed job", byQueue)
	}
}
