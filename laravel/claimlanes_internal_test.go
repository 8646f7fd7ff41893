package laravel

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestLanesShareSlotsAndClaims: the batch strategy in two lanes splits the workers' slots and the
// claim size between them, hands out rows from both, sends each job's completion to the lane that
// handed it out, and keeps no more rows reserved than the slots, prefetched rows included.
func TestLanesShareSlotsAndClaims(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		c, tables := openTables(t, db, "lanes", OpenParams{}, SchemaParams{})
		for batch, want := range map[int][2]int{9: {5, 4}, 8: {4, 4}} {
			qi, err := NewQueue(c, QueueParams{Strategy: "batch", Batch: batch, Lanes: 2})
			if err != nil {
				t.Fatal(err)
			}
			q := qi.(*laneQueue)
			q.AddSlots(8)
			if got := [2]int{q.lanes[0].size, q.lanes[1].size}; got != want {
				t.Errorf("claim sizes %v for a claim batch of %d in two lanes, want %v", got, batch, want)
			}
		}
		qi, err := NewQueue(c, QueueParams{Strategy: "batch", Batch: 8, Lanes: 2})
		if err != nil {
			t.Fatal(err)
		}
		q := qi.(*laneQueue)
		q.AddSlots(8)
		if got := []int{q.lanes[0].slots, q.lanes[1].slots}; got[0] != 4 || got[1] != 4 {
			t.Errorf("slots %v for 8 in two lanes, want [4 4]", got)
		}
		for range 40 {
			if _, err := q.JobPush(ctx, &JobPushParams{Queue: "default", Payload: []byte("{}"), Now: 100, AvailableAt: 100}); err != nil {
				t.Fatal(err)
			}
		}
		reserved := func() int {
			t.Helper()
			var n int
			if err := c.db.QueryRowContext(ctx, "select count(*) from "+c.quote(tables.Jobs)+" where reserved_at is not null").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		claim := func(n int) []*Job {
			t.Helper()
			jobs, err := q.JobClaim(ctx, &JobClaimParams{Queue: "default", Now: 100, RetryAfter: 90, Limit: n})
			if err != nil {
				t.Fatal(err)
			}
			return jobs
		}
		jobs := claim(8)
		if len(jobs) != 8 {
			t.Fatalf("claimed %d jobs for 8 free slots, want 8", len(jobs))
		}
		for i, l := range q.lanes {
			if n := len(l.out); n != 4 {
				t.Errorf("lane %d handed out %d jobs, want 4", i, n)
			}
		}
		// A release goes to its own lane, whose slot is free again; the other lane's stay taken.
		first := jobs[0]
		owner := q.laneOf(first)
		if err := q.JobRelease(ctx, first, &JobReleaseParams{Now: 100, Delay: 3600}); err != nil {
			t.Fatal(err)
		}
		for _, l := range q.lanes {
			want := 0
			if l == owner {
				want = 1
			}
			if got := l.free(); got != want {
				t.Errorf("a lane has %d free slots after one of its jobs was released, want %d", got, want)
			}
		}
		jobs = append(jobs[1:], claim(1)...)
		// Every job finishes at once: each lane deletes its own in one group and claims the next rows
		// for the slots the group frees, in the same transaction.
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Go(func() {
				if err := q.JobDelete(ctx, j); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := reserved(); n > 8 {
			t.Errorf("%d rows reserved after the deletes with 8 slots, want at most 8", n)
		}
		seen := map[int64]bool{first.ID: true}
		for _, j := range jobs {
			seen[j.ID] = true
		}
		for left := 40 - len(seen); left > 0; {
			batch := claim(8)
			if len(batch) == 0 {
				t.Fatalf("claim came back empty with %d rows left", left)
			}
			if n := reserved(); n > 8 {
				t.Errorf("%d rows reserved with 8 slots, want at most 8", n)
			}
			for _, j := range batch {
				if seen[j.ID] {
					t.Errorf("job %d handed out twice", j.ID)
				}
				seen[j.ID] = true
				left--
			}
			for _, j := range batch {
				wg.Go(func() {
					if err := q.JobDelete(ctx, j); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		if err := q.JobReturnPrefetched(ctx); err != nil {
			t.Fatal(err)
		}
		if n := reserved(); n != 0 {
			t.Errorf("%d rows left reserved after the prefetched rows were given back, want 0", n)
		}
		q.AddSlots(-8)
		if got := []int{q.lanes[0].slots, q.lanes[1].slots}; got[0] != 0 || got[1] != 0 {
			t.Errorf("slots %v after the worker left, want [0 0]", got)
		}
	})
}

// TestLanesFollowSlots: the batch strategy runs one lane unless asked for more; with lanes, a worker
// never has more of them running than it runs jobs at once (RunOnce: one), and the slots are spread
// evenly over the running ones.
func TestLanesFollowSlots(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		c, _ := openTables(t, db, "lanesslots", OpenParams{}, SchemaParams{})
		for _, lanes := range []int{0, 1} {
			q, err := NewQueue(c, QueueParams{Strategy: "batch", Lanes: lanes})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := q.(*batchQueue); !ok {
				t.Errorf("Lanes %d: the batch strategy is a %T, want one lane", lanes, q)
			}
		}
		qi, err := NewQueue(c, QueueParams{Strategy: "batch", Lanes: 4})
		if err != nil {
			t.Fatal(err)
		}
		q := qi.(*laneQueue)
		for _, tc := range []struct {
			slots int
			want  []int
		}{{1, []int{1, 0, 0, 0}}, {3, []int{1, 1, 1, 0}}, {10, []int{3, 3, 2, 2}}, {0, []int{0, 0, 0, 0}}} {
			q.AddSlots(tc.slots - q.slots)
			var got []int
			for _, l := range q.lanes {
				got = append(got, l.slots)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%d slots in four lanes: %v, want %v", tc.slots, got, tc.want)
			}
			if n := q.LanesFor(tc.slots); n != max(min(4, tc.slots), 1) {
				t.Errorf("LanesFor(%d) = %d", tc.slots, n)
			}
		}
	})
}
