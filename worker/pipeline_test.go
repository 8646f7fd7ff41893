package worker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// On SQLite, a finished job whose delete waits in a group does not hold its slot: while the deletes of
// two jobs wait for the write lock another transaction holds, a worker of two slots starts the next
// two jobs. Each job still runs once and every row is deleted once the lock is let go.
func TestGroupedDeleteFreesTheSlot(t *testing.T) {
	t.Parallel()
	{
		f := newStrategyFixture(t, testenv.SQLite(t), "batch")
		var ids []int64
		for range 6 {
			ids = append(ids, f.push(t, "default", envelope(t, jobClass, "", nil)))
		}
		held := map[int64]bool{ids[2]: true, ids[3]: true} // the jobs whose deletes wait
		arrived := make(chan int64, 6)
		release := make(chan struct{})
		var mu sync.Mutex
		runs := map[int64]int{}
		f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			mu.Lock()
			runs[j.ID]++
			mu.Unlock()
			arrived <- j.ID
			if held[j.ID] {
				<-release
			}
			return nil
		}))
		w := f.worker(t, func(c *Config) { c.Concurrency, c.StopWhenEmpty = 2, true })
		done := make(chan error, 1)
		go func() { _, err := w.Run(bg); done <- err }()

		wait := func(what string, want func(id int64) bool, n int) {
			t.Helper()
			deadline := time.After(30 * time.Second)
			for n > 0 {
				select {
				case id := <-arrived:
					if want(id) {
						n--
					}
				case <-deadline:
					t.Fatalf("%s did not start within 30s", what)
				}
			}
		}
		wait("the jobs whose deletes are held", func(id int64) bool { return held[id] }, 2)

		// Take the write lock, then let the two jobs finish: their grouped delete waits for it.
		lock, err := queuetest.DB(f.Conn).BeginTxx(bg, nil) // BEGIN IMMEDIATE
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Rollback()
		close(release)
		wait("the next two jobs, while the finished jobs' delete waited for the write lock,", func(id int64) bool { return id == ids[4] || id == ids[5] }, 2)
		left := map[int64]bool{}
		for _, r := range f.Rows(t) {
			left[r.ID] = true
		}
		if !left[ids[2]] || !left[ids[3]] {
			t.Fatalf("rows %v while the write lock was held: a held job's delete went through", left)
		}
		if err := lock.Rollback(); err != nil {
			t.Fatal(err)
		}

		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("worker: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the worker did not stop once the queue was empty")
		}
		mu.Lock()
		defer mu.Unlock()
		var twice []string
		for _, id := range ids {
			if runs[id] != 1 {
				twice = append(twice, fmt.Sprintf("job %d ran %d times", id, runs[id]))
			}
		}
		if len(twice) > 0 {
			t.Error(strings.Join(twice, "; "))
		}
		f.wantRows(t, 0, 0)
	}
}
