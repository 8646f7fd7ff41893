package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/metrics"
	"github.com/artisan-go/artisan-go/worker"
)

// BenchmarkCollectorPerJob is what the metrics hooks cost one job: a claim, its start and its
// finish, on one goroutine and on all of them at once.
func BenchmarkCollectorPerJob(b *testing.B) {
	c := metrics.New(metrics.Params{Classes: []string{okClass}})
	now := time.Now()
	perJob := func(e *worker.JobEvent) {
		c.Claimed(e.Queue, 1, time.Millisecond, nil)
		ctx := c.JobStarted(bg, e)
		e.Outcome, e.Finished = worker.OutcomeProcessed, now
		c.JobFinished(ctx, e)
	}
	event := func() *worker.JobEvent {
		return &worker.JobEvent{ID: 1, Connection: "database", Queue: "default", Class: okClass, DisplayName: okClass,
			Attempts: 1, AvailableAt: now.Unix(), Claimed: now, Started: now}
	}
	b.Run("serial", func(b *testing.B) {
		e := event()
		b.ReportAllocs()
		for b.Loop() {
			perJob(e)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			e := event()
			for pb.Next() {
				perJob(e)
			}
		})
	})
}

// BenchmarkWorkerWithMetrics runs b.N no-op jobs through a worker on SQLite with and without the
// collector, so the hooks' share of a job's whole cost can be read from the two ns/op.
func BenchmarkWorkerWithMetrics(b *testing.B) {
	for _, observed := range []bool{false, true} {
		name := "without"
		if observed {
			name = "with"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, testenv.SQLite(b))
			e.push(b, okClass, "default", b.N, time.Now().Unix(), 0)
			reg := handlers.NewRegistry()
			reg.Register(okClass, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
			cfg := worker.Defaults()
			cfg.Concurrency, cfg.StopWhenEmpty, cfg.Sleep, cfg.Timeout = 8, true, 0, 0
			p := worker.Params{Queue: e.queue, Conn: e.conn, Registry: reg, Config: cfg}
			if observed {
				p.Observer = metrics.New(metrics.Params{Classes: []string{okClass}})
			}
			w, err := worker.New(p)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if _, err := w.Run(bg); err != nil {
				b.Fatal(err)
			}
			if got := w.Stats().Processed; got != int64(b.N) {
				b.Fatalf("processed %d of %d", got, b.N)
			}
		})
	}
}
