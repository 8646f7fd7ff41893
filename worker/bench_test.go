package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// benchDatabases are the databases the benchmarks run on.
var benchDatabases = []struct {
	name string
	open func(testing.TB) testenv.Database
}{{"mysql", testenv.MySQL}, {"pgsql", testenv.Postgres}, {"sqlite", testenv.SQLite}}

// BenchmarkWorker measures end-to-end throughput: b.N real 8.83-style jobs claimed, decoded, run by a
// trivial handler and deleted, per claim strategy, database and concurrency.
func BenchmarkWorker(b *testing.B) {
	for _, strategy := range laravel.Strategies() {
		for _, d := range benchDatabases {
			for _, conc := range []int{1, 8} {
				b.Run(fmt.Sprintf("%s/%s/concurrency=%d", strategy, d.name, conc), func(b *testing.B) {
					f := newFixture(b, d.open(b))
					q, err := laravel.NewQueue(f.Conn, laravel.QueueParams{Strategy: strategy})
					if err != nil {
						b.Fatal(err)
					}
					f.reg.Register(jobClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error { return nil }))
					body := envelope(b, jobClass, "", nil)
					now := f.clock.Unix()
					for range b.N {
						if _, err := q.JobPush(bg, &laravel.JobPushParams{Queue: "default", Payload: body, Now: now, AvailableAt: now}); err != nil {
							b.Fatal(err)
						}
					}
					benchDrain(b, f, q, conc)
				})
			}
		}
	}
}

// benchDrain runs a worker at concurrency over q until it is empty, timed, and reports its rate.
func benchDrain(b *testing.B, f *fixture, q laravel.Queue, concurrency int) {
	cfg := Defaults()
	cfg.Concurrency, cfg.StopWhenEmpty, cfg.Sleep, cfg.Timeout = concurrency, true, 0, 0
	w, err := New(Params{Queue: q, Conn: f.Conn, Registry: f.reg, Config: cfg, Clock: f.clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	if _, err := w.Run(bg); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(w.Stats().Processed)/time.Since(start).Seconds(), "jobs/s")
	b.StopTimer()
}

// BenchmarkBatchMembers measures b.N members of one Laravel 8.83 batch claimed, run by a trivial
// handler, deleted and counted in the batch, by one worker at queue:work's default concurrency: every
// completion updates the batch's row under its lock, which the batch strategy does once per grouped
// delete.
func BenchmarkBatchMembers(b *testing.B) {
	for _, d := range benchDatabases {
		b.Run(d.name, func(b *testing.B) {
			f := newFixture(b, d.open(b))
			// queue:work's pool: eight connections (cli's maxPoolSize), kept open.
			p := f.Params
			p.MaxOpenConns = 8
			f.Conn = queuetest.Open(b, p)
			q, err := laravel.NewQueue(f.Conn, laravel.QueueParams{Strategy: "batch"})
			if err != nil {
				b.Fatal(err)
			}
			f.reg.Register(`App\Jobs\BatchPart`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error { return nil }))
			if err := f.Conn.BatchCreate(bg, &laravel.BatchCreateParams{ID: fixtureBatchID, Name: "demo", TotalJobs: b.N}); err != nil {
				b.Fatal(err)
			}
			body := fixtures.Laravel883()["batch"].Payload
			now := f.clock.Unix()
			for range b.N {
				if _, err := q.JobPush(bg, &laravel.JobPushParams{Queue: "default", Payload: body, Now: now, AvailableAt: now}); err != nil {
					b.Fatal(err)
				}
			}
			benchDrain(b, f, q, 256) // queue:work's default concurrency (config.DefaultConcurrency)
			if bt, err := f.Conn.BatchFind(bg, fixtureBatchID); err != nil || bt.PendingJobs != 0 || bt.FinishedAt == nil {
				b.Fatalf("batch after the drain: %+v (%v), want pending 0 and finished", bt, err)
			}
		})
	}
}

// BenchmarkVersusPHP runs the same b.N App\Jobs\Noop jobs, enqueued by PHP's Queue::bulk, once through
// `php artisan queue:work --stop-when-empty` (one process, as Laravel runs it; its boot time is
// included) and once through the Go worker at concurrency 8, and reports both rates.
func BenchmarkVersusPHP(b *testing.B) {
	for _, d := range benchDatabases {
		b.Run(d.name, func(b *testing.B) {
			app := phpapp.New(b, d.open(b))
			db := app.Database()
			conn, err := laravel.Open(bg, laravel.OpenParams{Dialect: laravel.Dialect(db.Dialect), DSN: db.DSN, CachePrefix: app.Getenv("CACHE_PREFIX")})
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			q, err := laravel.NewQueue(conn, laravel.QueueParams{})
			if err != nil {
				b.Fatal(err)
			}
			reg := handlers.NewRegistry()
			reg.Register(`App\Jobs\Noop`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error { return nil }))
			ctx := context.Background()
			if _, err := app.BenchEnqueue(ctx, b.N, ""); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			if _, err := app.Work(ctx, "--sleep=0"); err != nil {
				b.Fatal(err)
			}
			php := float64(b.N) / time.Since(start).Seconds()
			b.StopTimer()
			if _, err := app.BenchEnqueue(ctx, b.N, ""); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			cfg := Defaults()
			cfg.Concurrency, cfg.StopWhenEmpty, cfg.Sleep = 8, true, 0
			w, err := New(Params{Queue: q, Conn: conn, Registry: reg, Config: cfg})
			if err != nil {
				b.Fatal(err)
			}
			start = time.Now()
			if _, err := w.Run(ctx); err != nil {
				b.Fatal(err)
			}
			goRate := float64(w.Stats().Processed) / time.Since(start).Seconds()
			b.ReportMetric(php, "php_jobs/s")
			b.ReportMetric(goRate, "go_jobs/s")
		})
	}
}
