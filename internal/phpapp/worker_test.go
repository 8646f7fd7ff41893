package phpapp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestWorkerStopAndRestart runs PHP's worker as a daemon: it picks up a job dispatched while it runs,
// exits on `queue:restart` (the signal kept in the cache store), and a second one stops on SIGTERM.
func TestWorkerStopAndRestart(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		app := phpapp.New(t, db)
		w := app.StartWorker(ctx, "--sleep=1")
		d := app.MustDispatch(ctx, "plain")
		entries, err := app.WaitLog(ctx, func(e []phpapp.LogEntry) bool { return len(e) == 1 })
		if err != nil {
			t.Fatalf("%v\nworker output:\n%s", err, w.Output())
		}
		if entries[0].UUID != d.Jobs[0].UUID {
			t.Errorf("worker ran %s, want %s", entries[0].UUID, d.Jobs[0].UUID)
		}

		if _, err := app.Artisan(ctx, "queue:restart"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.Done():
		case <-time.After(20 * time.Second):
			t.Fatalf("the worker did not exit after queue:restart\n%s", w.Output())
		}
		if err := w.Wait(); err != nil {
			t.Errorf("worker exit after restart: %v", err)
		}

		// The second worker has booted (and installed its signal handlers) once it has run a job.
		w2 := app.StartWorker(ctx, "--sleep=1")
		d2 := app.MustDispatch(ctx, "plain")
		entries, err = app.WaitLog(ctx, func(e []phpapp.LogEntry) bool { return len(e) == 2 })
		if err != nil {
			t.Fatalf("%v\nworker output:\n%s", err, w2.Output())
		}
		if entries[1].UUID != d2.Jobs[0].UUID {
			t.Errorf("second worker ran %s, want %s", entries[1].UUID, d2.Jobs[0].UUID)
		}
		if err := w2.Stop(); err != nil {
			t.Errorf("worker stop: %v", err)
		}
	})
}

// BenchmarkPHPWorker measures PHP's own `queue:work --stop-when-empty` on App\Jobs\Noop jobs, the
// baseline artisan-go is compared with. It reports jobs per second.
func BenchmarkPHPWorker(b *testing.B) {
	for _, d := range []struct {
		name string
		make func(testing.TB) testenv.Database
	}{{"mysql", testenv.MySQL}, {"pgsql", testenv.Postgres}, {"sqlite", testenv.SQLite}} {
		b.Run(d.name, func(b *testing.B) {
			ctx := context.Background()
			app := phpapp.New(b, d.make(b))
			n := max(b.N, 200)
			if _, err := app.BenchEnqueue(ctx, n, ""); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			if out, err := app.Artisan(ctx, "queue:work", "database", "--stop-when-empty"); err != nil {
				b.Fatal(err, out)
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "jobs/s")
		})
	}
}

// ExampleDispatched_UUIDs lists the uuids of the rows a dispatch queued.
func ExampleDispatched_UUIDs() {
	d := phpapp.Dispatched{Jobs: []phpapp.QueuedJob{{ID: 1, UUID: "9b1d…"}, {ID: 2, UUID: "c3a7…"}}}
	fmt.Println(d.UUIDs())
	// Output: [9b1d… c3a7…]
}
