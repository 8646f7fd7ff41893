// Package pulse writes, for the jobs a worker runs, the rows Laravel Pulse's Queues and SlowJobs
// recorders write for the jobs PHP runs, so that Pulse's dashboard shows both.
//
// Pulse's Queues recorder counts Laravel's queue events per "connection:queue" key, in pulse_aggregates
// only (no pulse_entries rows): "processing" when a job starts, "processed" when its handler returned
// (also when it released or failed itself), "released" when it is released after an exception, and
// "failed". Its SlowJobs recorder writes a "slow_job" pulse_entries row keyed by the job's name
// (displayName) with the milliseconds from processing to the first completion event, when they reach
// the threshold, and its max and count aggregates. Aggregates go to the buckets of Pulse's four periods
// (60, 360, 1440 and 10080, in minutes; a bucket starts at floor(timestamp / period) * period), and are
// added to what is stored as Pulse's DatabaseStorage does, so PHP and Go rows land in the same rows.
//
// Rows are kept in memory, pre-aggregated, and written in one transaction every flush interval.
// Pulse's sample rates and ignore lists are PHP configuration the worker does not read: every job is
// recorded.
package pulse

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/worker"
)

// Periods are Pulse's aggregation periods, in minutes (an hour, 6 hours, 24 hours, 7 days).
var Periods = []int64{60, 360, 1440, 10080}

// DefaultSlowJobThreshold is Pulse's default SlowJobs threshold.
const DefaultSlowJobThreshold = time.Second

// Params configures a Recorder.
type Params struct {
	Conn   *laravel.Conn
	Schema laravel.PulseSchema // from Conn.PulseInspect
	// SlowJobThreshold is the SlowJobs recorder's threshold; a job that takes at least this long is
	// recorded. 0 records every job.
	SlowJobThreshold time.Duration
	// Clock gives the timestamps Pulse would record (Carbon's now); nil is time.Now.
	Clock  func() time.Time
	Logger *slog.Logger // nil discards
}

// Recorder is a worker.Observer that records the worker's jobs for Pulse. Flush writes what it
// recorded.
type Recorder struct {
	conn      *laravel.Conn
	schema    laravel.PulseSchema
	threshold int64 // milliseconds
	clock     func() time.Time
	log       *slog.Logger

	mu      sync.Mutex
	entries []laravel.PulseEntry
	aggs    map[aggKey]*laravel.PulseAggregate
	keys    map[[2]string]string // "connection:queue" by connection and queue, built once
}

type aggKey struct {
	bucket, period      int64
	typ, aggregate, key string
}

// New returns a Recorder.
func New(p Params) *Recorder {
	r := &Recorder{
		conn: p.Conn, schema: p.Schema, threshold: p.SlowJobThreshold.Milliseconds(), clock: p.Clock,
		log: p.Logger, aggs: map[aggKey]*laravel.PulseAggregate{}, keys: map[[2]string]string{},
	}
	if r.clock == nil {
		r.clock = time.Now
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// Claimed implements worker.Observer; Pulse records no claims.
func (r *Recorder) Claimed(string, int, time.Duration, error) {}

// JobStarted records Pulse's "processing".
func (r *Recorder) JobStarted(ctx context.Context, e *worker.JobEvent) context.Context {
	ts := r.clock().Unix()
	r.mu.Lock()
	r.add(ts, "processing", "count", r.queueKey(e), 1)
	r.mu.Unlock()
	return ctx
}

// JobFinished records the completion events Laravel's worker raises for the outcome, and the job when
// it was slow.
func (r *Recorder) JobFinished(_ context.Context, e *worker.JobEvent) {
	if e.Started.IsZero() {
		return // never processed: left for PHP, moved, or unreadable
	}
	var types []string
	switch e.Outcome {
	case worker.OutcomeProcessed, worker.OutcomeDeleted:
		types = []string{"processed"}
	case worker.OutcomeReleased:
		types = []string{"processed"}
		if e.Threw {
			types = []string{"released"}
		}
	case worker.OutcomeFailed:
		// A job its handler failed is also "processed": Laravel raises JobProcessed after it. Not after
		// an exception, a timeout, or the attempts check that fails a job before it runs (PHP's worker
		// throws there, and JobProcessed is never raised; checked with PHP's events).
		types = []string{"failed"}
		if !e.Threw && !e.Reported {
			types = append(types, "processed")
		}
	default:
		return // no completion applied: the row is another worker's, or waits for retry_after
	}
	ts := r.clock().Unix()
	ms := e.Finished.Sub(e.Started).Milliseconds()
	r.mu.Lock()
	defer r.mu.Unlock()
	key := r.queueKey(e)
	for _, t := range types {
		r.add(ts, t, "count", key, 1)
	}
	if ms >= r.threshold {
		r.entries = append(r.entries, laravel.PulseEntry{Timestamp: ts, Type: "slow_job", Key: e.DisplayName, Value: ms})
		r.add(ts, "slow_job", "max", e.DisplayName, ms)
		r.add(ts, "slow_job", "count", e.DisplayName, 1)
	}
}

// queueKey is the Queues recorder's key; r.mu is held.
func (r *Recorder) queueKey(e *worker.JobEvent) string {
	k := [2]string{e.Connection, e.Queue}
	key, ok := r.keys[k]
	if !ok {
		key = e.Connection + ":" + e.Queue
		r.keys[k] = key
	}
	return key
}

// add folds one value into the aggregate of each period's bucket; r.mu is held.
func (r *Recorder) add(ts int64, typ, aggregate, key string, v int64) {
	for _, period := range Periods {
		k := aggKey{bucket: ts / period * period, period: period, typ: typ, aggregate: aggregate, key: key}
		a := r.aggs[k]
		if a == nil {
			r.aggs[k] = &laravel.PulseAggregate{Bucket: k.bucket, Period: period, Type: typ, Aggregate: aggregate, Key: key, Value: v}
			continue
		}
		if aggregate == "max" {
			a.Value = max(a.Value, v)
		} else {
			a.Value += v
		}
	}
}

// JobQueued records a job the worker pushed (a chain's next link) as Pulse's Queues recorder records
// JobQueued: a "queued" count for connection:queue.
func (r *Recorder) JobQueued(connection, queue, _ string) {
	ts := r.clock().Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(ts, "queued", "count", connection+":"+queue, 1)
}

// Flush writes the rows recorded since the last flush in one transaction, tried again on a deadlock
// as Pulse's DatabaseStorage tries its own three times. Rows that still fail to be written are
// dropped, as Pulse drops what it fails to store.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	entries, aggs := r.entries, r.aggs
	r.entries, r.aggs = nil, make(map[aggKey]*laravel.PulseAggregate, len(aggs))
	r.mu.Unlock()
	if len(entries) == 0 && len(aggs) == 0 {
		return nil
	}
	rows := make([]laravel.PulseAggregate, 0, len(aggs))
	for _, a := range aggs {
		rows = append(rows, *a)
	}
	// In one order for every worker, so that two flushes lock the same rows in the same order and do
	// not deadlock each other.
	slices.SortFunc(rows, func(a, b laravel.PulseAggregate) int {
		return cmp.Or(cmp.Compare(a.Bucket, b.Bucket), cmp.Compare(a.Period, b.Period), cmp.Compare(a.Type, b.Type),
			cmp.Compare(a.Aggregate, b.Aggregate), cmp.Compare(a.Key, b.Key))
	})
	return r.conn.PulseRecord(ctx, &laravel.PulseRecordParams{Schema: r.schema, Entries: entries, Aggregates: rows})
}

// Run flushes every interval until ctx ends, then once more. A failing write is logged as a warning
// once, and again only after a write worked, so that a missing grant does not fill the log.
func (r *Recorder) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	// A write is not cut short by the stop: the rows it carries would be lost.
	flush := func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err := r.Flush(fctx)
		switch {
		case err == nil:
			failing = false
		case !failing:
			failing = true
			r.log.Warn("write Pulse rows; they are dropped, as Pulse drops what it cannot store", "error", err)
		default:
			r.log.Debug("write Pulse rows", "error", err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			flush()
			return
		case <-t.C:
			flush()
		}
	}
}
