package laravel_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// BenchmarkClaimDelete measures one job's round trip through each strategy: claim (Limit 1) and fenced
// delete, by 4 concurrent workers on one pool, per database. Jobs are pushed outside the timer.
func BenchmarkClaimDelete(b *testing.B) {
	for _, d := range []struct {
		name string
		make func(testing.TB) testenv.Database
	}{{"mysql", testenv.MySQL}, {"pgsql", testenv.Postgres}, {"sqlite", testenv.SQLite}} {
		for _, strategy := range laravel.Strategies() {
			b.Run(d.name+"/"+strategy, func(b *testing.B) {
				s := queuetest.NewSetup(b, d.make(b), strategy, queuetest.Options{})
				ctx := context.Background()
				now := time.Now().Unix()
				for i := range b.N {
					if _, err := s.Queue.JobPush(ctx, &laravel.JobPushParams{Queue: "default", Payload: queuetest.Payload(i), Now: now, AvailableAt: now}); err != nil {
						b.Fatal(err)
					}
				}
				var left atomic.Int64
				left.Store(int64(b.N))
				b.SetParallelism(2) // 2 × GOMAXPROCS workers
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						for {
							jobs, err := s.Queue.JobClaim(ctx, &laravel.JobClaimParams{Queue: "default", Now: now, RetryAfter: 90, Limit: 1})
							if err != nil || len(jobs) == 0 {
								if left.Load() <= 0 {
									return
								}
								continue
							}
							if err := s.Queue.JobDelete(ctx, jobs[0]); err != nil {
								b.Error(err)
								return
							}
							left.Add(-1)
							break
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			})
		}
	}
}
