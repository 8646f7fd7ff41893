package laravel

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestDeleteGroupFlushesWhenFull: a group whose jobs are never settled (claimed rows wait in a
// prefetch buffer that no free slot can take) commits as soon as flushAt deletes wait, not after its
// linger, which here is an hour.
func TestDeleteGroupFlushesWhenFull(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var groups [][]int64
	g := groupOfThree(func(_ context.Context, jobs []*Job) ([]*Job, error) {
		ids := make([]int64, len(jobs))
		for i, j := range jobs {
			ids[i] = j.ID
		}
		mu.Lock()
		groups = append(groups, ids)
		mu.Unlock()
		return nil, nil
	})
	deadline := time.After(time.Minute)
	for wave := range int64(2) { // each wave fills one group
		errs := make(chan error, 3)
		for n := range int64(3) {
			go func() { errs <- g.delete(context.Background(), &Job{ID: 3*wave + n + 1}, nil) }()
		}
		for range 3 {
			select {
			case err := <-errs:
				if err != nil {
					t.Fatal(err)
				}
			case <-deadline:
				t.Fatal("the deletes still wait after a minute: the group lingered instead of committing when full")
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, ids := range groups {
		if len(ids) != 3 {
			t.Errorf("a group of %d deletes (%v), want 3: a group commits once full", len(ids), ids)
		}
		n += len(ids)
	}
	if n != 6 {
		t.Errorf("%d deletes in the groups %v, want 6", n, groups)
	}
}

// TestDeleteGroupRefusalStaysWithItsJob: when the server refuses a group's transaction for one job's
// sake (here a check constraint on job 2's batch row), each job goes again alone, and only job 2's
// delete fails; before, every job of the group had its completion refused with it.
func TestDeleteGroupRefusalStaysWithItsJob(t *testing.T) {
	t.Parallel()
	refusal := &pgconn.PgError{Code: "23514", Message: "new row violates check constraint"}
	g := groupOfThree(func(_ context.Context, jobs []*Job) ([]*Job, error) {
		for _, j := range jobs {
			if j.ID == 2 {
				return nil, refusal
			}
		}
		return nil, nil
	})
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() { errs[i] = g.delete(context.Background(), &Job{ID: int64(i + 1)}, nil) })
	}
	wg.Wait()
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], refusal) {
		t.Fatalf("errors %v, want only job 2's delete refused", errs)
	}
}

// groupOfThree is a group whose jobs are never settled, so that it commits once three deletes wait
// (its linger is an hour), deleting with run.
func groupOfThree(run func(context.Context, []*Job) ([]*Job, error)) *deleteGroup {
	return &deleteGroup{settled: func() bool { return false }, wake: make(chan struct{}, 1), flushAt: 3, lingerFor: time.Hour, run: run}
}
