// Package metrics exposes what a worker does in Prometheus's text format, with health and readiness
// endpoints beside it. Collector is a worker.Observer: it counts jobs by connection, queue and class
// (classes outside an allow-list count as "other", so a stray class cannot grow the series without
// bound), times them, and reads the worker's and the connection's own counters when scraped. A
// Sampler reads each queue's depth and head age from the database every few seconds, never on the
// scrape.
package metrics

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/worker"
)

// Namespace prefixes every metric name.
const Namespace = "artisan_go"

// OtherClass is the class label of jobs whose class is not in the allow-list.
const OtherClass = "other"

// Buckets of the histograms, in seconds (durations) and rows (claim batches).
var (
	DurationBuckets   = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	WaitBuckets       = []float64{.01, .05, .1, .25, .5, 1, 2, 5, 10, 30, 60, 300, 900, 3600}
	ClaimBatchBuckets = []float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
	ClaimTimeBuckets  = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5}
)

// Params configures a Collector.
type Params struct {
	// Classes are the job classes (commandName, or displayName for Laravel's wrapper jobs) that get
	// their own class label; every other class is counted as "other".
	Classes []string
	// Clock is the worker's clock, which the wait is measured on; nil is time.Now.
	Clock func() time.Time
}

// Collector is a worker.Observer that keeps Prometheus metrics. Register it (it is a
// prometheus.Collector) and pass it as worker.Params.Observer.
type Collector struct {
	classes map[string]bool
	clock   func() time.Time

	processed, failed, released, left *prometheus.CounterVec
	duration, wait                    *prometheus.HistogramVec
	claims, claimErrors               *prometheus.CounterVec
	claimBatch, claimTime             *prometheus.HistogramVec
	depth, headAge, sampled           *prometheus.GaugeVec
	funcs                             []prometheus.Collector

	mu     sync.RWMutex
	series map[seriesKey]*jobSeries

	claimMu      sync.Mutex
	lastClaimOK  time.Time
	lastClaimErr error
}

type seriesKey struct{ connection, queue, class string }

// jobSeries are one label set's metrics, resolved once so that a job costs no label lookup.
type jobSeries struct {
	processed, failed, released, left prometheus.Counter
	duration, wait                    prometheus.Observer
}

// New returns a Collector.
func New(p Params) *Collector {
	jobLabels := []string{"connection", "queue", "class"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, jobLabels)
	}
	c := &Collector{
		classes:   map[string]bool{},
		clock:     p.Clock,
		series:    map[seriesKey]*jobSeries{},
		processed: counter("jobs_processed_total", "Jobs whose handler completed: done, or deleted by the handler."),
		failed:    counter("jobs_failed_total", "Jobs written to failed_jobs."),
		released:  counter("jobs_released_total", "Jobs put back on their queue, by their handler or after an exception."),
		left:      counter("jobs_left_for_php_total", "Rows left for PHP workers (passed over by a claim, or handed back) and moves to the queue they work, of jobs without a Go handler; a row left twice counts twice."),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "job_duration_seconds",
			Help: "Time from the start of processing to the applied completion, per job that started.", Buckets: DurationBuckets}, jobLabels),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "job_wait_seconds",
			Help: "Time from available_at (whole seconds) to the start of processing.", Buckets: WaitBuckets}, jobLabels[:2]),
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "claims_total",
			Help: "Claim calls on a queue (the batch strategy answers some from rows it already holds)."}, []string{"queue"}),
		claimErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "claim_errors_total",
			Help: "Claim calls that failed (deadlock victims and busy databases included)."}, []string{"queue"}),
		claimBatch: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "claim_batch_size",
			Help: "Rows one claim call returned.", Buckets: ClaimBatchBuckets}, []string{"queue"}),
		claimTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "claim_duration_seconds",
			Help: "How long one claim call took, its transaction and retries included.", Buckets: ClaimTimeBuckets}, []string{"queue"}),
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "queue_depth",
			Help: "Available jobs of the queue, those a claim could take now: PHP's and a paused queue's too (sampled, counted up to a limit)."}, []string{"connection", "queue"}),
		headAge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "queue_oldest_available_age_seconds",
			Help: "Age of the queue's head, its oldest available job, PHP's too (sampled; 0 when empty)."}, []string{"connection", "queue"}),
		sampled: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "queue_sampled_timestamp_seconds",
			Help: "When the queue gauges were last sampled (Unix time): they keep their values while sampling fails."}, []string{"connection"}),
	}
	if c.clock == nil {
		c.clock = time.Now
	}
	for _, class := range p.Classes {
		c.classes[class] = true
	}
	c.lastClaimOK = time.Now()
	return c
}

// Watch adds the counters a worker and its connection keep themselves, and its slots, read when
// scraped.
func (c *Collector) Watch(w *worker.Worker, conn *laravel.Conn) {
	for _, q := range w.Config().Queues {
		// At 0 from the start, so that rate() and increase() see the first claim, the first job and
		// the first failure of each class with a label of its own, and of the others.
		c.claims.WithLabelValues(q)
		c.claimErrors.WithLabelValues(q)
		c.seriesOf(seriesKey{w.Config().Connection, q, OtherClass})
		for class := range c.classes {
			c.seriesOf(seriesKey{w.Config().Connection, q, class})
		}
	}
	counter := func(name, help string, read func() int64) {
		c.funcs = append(c.funcs, prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help},
			func() float64 { return float64(read()) }))
	}
	counter("jobs_claimed_total", "Rows claimed.", func() int64 { return w.Stats().Claimed })
	counter("jobs_timed_out_total", "Handlers that ran past their timeout.", func() int64 { return w.Stats().TimedOut })
	counter("jobs_returned_total", "Claimed jobs given back at shutdown.", func() int64 { return w.Stats().Returned })
	counter("chain_links_dispatched_total", "Next links of chains pushed.", func() int64 { return w.Stats().ChainDispatched })
	counter("reservation_renewals_total", "Reservations of long-running jobs renewed.", func() int64 { return w.Stats().Renewed })
	counter("reservations_lost_total", "Completions and renewals that found the reservation taken by another worker.", func() int64 { return w.Stats().Lost })
	counter("completions_reapplied_total", "Completions kept while the database did not answer and applied once it did.", func() int64 { return w.Stats().Reapplied })
	counter("completions_unapplied_total", "Completions given up after the database stayed unreachable: their jobs run again after retry_after.", func() int64 { return w.Stats().Unapplied })
	counter("completions_refused_total", "Completions the database refused (a revoked grant, a dropped table): their rows stay reserved until the cause is fixed.", func() int64 { return w.Stats().Refused })
	counter("db_deadlocks_total", "Statements aborted as deadlock victims or serialization failures.", func() int64 { return conn.Stats().Deadlocks })
	counter("db_busy_total", "Lock wait timeouts and SQLITE_BUSY.", func() int64 { return conn.Stats().Busy })
	counter("db_retries_total", "Operations retried after a deadlock.", func() int64 { return conn.Stats().Retries })
	c.funcs = append(c.funcs,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "completions_waiting", Help: "Finished jobs whose completion waits for the database to answer."},
			func() float64 { return float64(w.Stats().Waiting) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "jobs_in_flight", Help: "Jobs running now, and finished ones whose completion waits for the database."},
			func() float64 { busy, _ := w.Slots(); return float64(busy) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "free_slots", Help: "Jobs that could start now (--concurrency minus those in flight)."},
			func() float64 { busy, total := w.Slots(); return float64(total - busy) }))
	if l, ok := w.Queue().(interface{ Lanes() int }); ok {
		c.funcs = append(c.funcs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "claim_lanes",
			Help: "Claim-and-delete cycles the batch strategy runs side by side now (--claim-lanes; at 0, two in the one process that leads its jobs table)."},
			func() float64 { return float64(l.Lanes()) }))
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.all() {
		m.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.all() {
		m.Collect(ch)
	}
}

func (c *Collector) all() []prometheus.Collector {
	return append([]prometheus.Collector{c.processed, c.failed, c.released, c.left, c.duration, c.wait,
		c.claims, c.claimErrors, c.claimBatch, c.claimTime, c.depth, c.headAge, c.sampled}, c.funcs...)
}

// NewRegistry returns a registry with c and the Go runtime and process collectors.
func NewRegistry(c *Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, m := range []prometheus.Collector{c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(m); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// Claimed implements worker.Observer.
func (c *Collector) Claimed(queue string, rows int, took time.Duration, err error) {
	c.claims.WithLabelValues(queue).Inc()
	c.claimBatch.WithLabelValues(queue).Observe(float64(rows))
	c.claimTime.WithLabelValues(queue).Observe(took.Seconds())
	if err != nil {
		c.claimErrors.WithLabelValues(queue).Inc()
	}
	// A lost race is a claim that worked as designed; anything else counts against readiness.
	if err != nil && !errors.Is(err, laravel.ErrDeadlock) && !errors.Is(err, laravel.ErrBusy) {
		c.claimMu.Lock()
		c.lastClaimErr = err
		c.claimMu.Unlock()
		return
	}
	c.claimMu.Lock()
	c.lastClaimOK, c.lastClaimErr = time.Now(), nil
	c.claimMu.Unlock()
}

// JobStarted implements worker.Observer.
func (c *Collector) JobStarted(ctx context.Context, e *worker.JobEvent) context.Context {
	s := c.seriesFor(e)
	if e.AvailableAt > 0 {
		// On the worker's clock, which wrote available_at.
		s.wait.Observe(max(c.clock().Sub(time.Unix(e.AvailableAt, 0)).Seconds(), 0))
	}
	return ctx
}

// JobFinished implements worker.Observer.
func (c *Collector) JobFinished(_ context.Context, e *worker.JobEvent) {
	s := c.seriesFor(e)
	switch e.Outcome {
	case worker.OutcomeProcessed, worker.OutcomeDeleted:
		s.processed.Inc()
	case worker.OutcomeFailed:
		s.failed.Inc()
	case worker.OutcomeReleased:
		s.released.Inc()
	case worker.OutcomeLeftForPHP, worker.OutcomeMoved:
		s.left.Inc()
	}
	if !e.Started.IsZero() {
		s.duration.Observe(e.Finished.Sub(e.Started).Seconds())
	}
}

// seriesFor returns the metrics of e's connection, queue and class.
func (c *Collector) seriesFor(e *worker.JobEvent) *jobSeries {
	class := e.DisplayName
	if !c.classes[class] {
		class = e.Class
		if !c.classes[class] {
			class = OtherClass
		}
	}
	return c.seriesOf(seriesKey{e.Connection, e.Queue, class})
}

// seriesOf returns the metrics of k, made at their first use.
func (c *Collector) seriesOf(k seriesKey) *jobSeries {
	class := k.class
	c.mu.RLock()
	s := c.series[k]
	c.mu.RUnlock()
	if s != nil {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s = c.series[k]; s == nil {
		s = &jobSeries{
			processed: c.processed.WithLabelValues(k.connection, k.queue, class),
			failed:    c.failed.WithLabelValues(k.connection, k.queue, class),
			released:  c.released.WithLabelValues(k.connection, k.queue, class),
			left:      c.left.WithLabelValues(k.connection, k.queue, class),
			duration:  c.duration.WithLabelValues(k.connection, k.queue, class),
			wait:      c.wait.WithLabelValues(k.connection, k.queue),
		}
		c.series[k] = s
	}
	return s
}

// Ready reports whether claiming is healthy: the last claim call that failed for another reason than
// a lost race was followed by one that worked, and one worked within stuckAfter, unless every slot is
// busy (nothing to claim for).
func (c *Collector) Ready(busy, total int, stuckAfter time.Duration) error {
	c.claimMu.Lock()
	last, err := c.lastClaimOK, c.lastClaimErr
	c.claimMu.Unlock()
	if err != nil {
		return errors.New("the last claim failed: " + err.Error())
	}
	if busy < total && time.Since(last) > stuckAfter {
		return errors.New("no claim for " + time.Since(last).Round(time.Second).String() + " with free slots (paused, in maintenance mode, or stuck)")
	}
	return nil
}

// ReadyCheck returns /readyz's check for a worker on conn: the database answers a ping, and claiming
// is not stuck (see Ready) for stuckAfter beyond the worker's --sleep, which an idle worker waits
// between two claims.
func (c *Collector) ReadyCheck(w *worker.Worker, conn *laravel.Conn, stuckAfter time.Duration) func(context.Context) error {
	stuckAfter += w.Config().Sleep
	return func(ctx context.Context) error {
		if err := conn.Ping(ctx); err != nil {
			return err
		}
		busy, total := w.Slots()
		return c.Ready(busy, total, stuckAfter)
	}
}
