package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// BenchmarkWorker measures end-to-end throughput: b.N real 8.83-style jobs claimed, decoded, run by a
// trivial handler and deleted, on each database, at several concurrencies.
func BenchmarkWorker(b *testing.B) {
	for _, d := range []struct {
		name string
		open func(testing.TB) testenv.Database
	}{{"mysql", testenv.MySQL}, {"pgsql", testenv.Postgres}, {"sqlite", testenv.SQLite}} {
		for _, conc := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/concurrency=%d", d.name, conc), func(b *testing.B) {
				f := newFixture(b, d.open(b))
				f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error { return nil }))
				body := envelope(b, jobClass, "", nil)
				now := f.clock.Unix()
				for range b.N {
					if _, err := f.Queue.JobPush(bg, &laravel.JobPushParams{Queue: "default", Payload: body, Now: now, AvailableAt: now}); err != nil {
						b.Fatal(err)
					}
				}
				cfg := Defaults()
				cfg.Concurrency, cfg.StopWhenEmpty, cfg.Sleep, cfg.Timeout = conc, true, 0, 0
				w, err := New(Params{Queue: f.Queue, Conn: f.Conn, Registry: f.reg, Config: cfg, Clock: f.clock.Now})
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				start := time.Now()
				if _, err := w.Run(bg); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(w.Stats().Processed)/time.Since(start).Seconds(), "jobs/s")
			})
		}
	}
}
