package pulse_test

import (
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/pulse"
	"github.com/artisan-go/artisan-go/worker"
)

// BenchmarkRecorderPerJob is what recording one job for Pulse costs before it is written: its
// processing and processed counts in the four periods' buckets, and a slow_job entry (threshold 0).
func BenchmarkRecorderPerJob(b *testing.B) {
	rec := pulse.New(pulse.Params{})
	now := time.Now()
	e := &worker.JobEvent{Connection: "database", Queue: "default", Class: okClass, DisplayName: okClass, Started: now, Finished: now, Outcome: worker.OutcomeProcessed}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		ctx := rec.JobStarted(bg, e)
		rec.JobFinished(ctx, e)
		if n++; n%10000 == 0 {
			b.StopTimer()
			rec = pulse.New(pulse.Params{}) // what a flush does to the buffers
			b.StartTimer()
		}
	}
}
