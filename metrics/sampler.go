package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
)

// DefaultSampleInterval is how often a Sampler reads the queues.
const DefaultSampleInterval = 15 * time.Second

// SamplerParams configures a Sampler.
type SamplerParams struct {
	Conn       *laravel.Conn
	Connection string   // the queue connection's name, the connection label
	Queues     []string // the queues to sample
	RetryAfter time.Duration
	Interval   time.Duration    // 0 is DefaultSampleInterval
	Limit      int              // rows counted per queue at most; 0 is laravel.DefaultDepthLimit
	Clock      func() time.Time // the worker's clock; nil is time.Now
	Logger     *slog.Logger     // nil discards
}

// Sample reads the queues' depth and head age once and sets the gauges.
func (c *Collector) Sample(ctx context.Context, p *SamplerParams) error {
	clock := p.Clock
	if clock == nil {
		clock = time.Now
	}
	now := clock().Unix()
	ds, err := p.Conn.QueueDepth(ctx, &laravel.QueueDepthParams{
		Queues: p.Queues, Now: now, RetryAfter: int64(p.RetryAfter / time.Second), Limit: p.Limit,
	})
	if err != nil {
		return err
	}
	for _, d := range ds {
		c.depth.WithLabelValues(p.Connection, d.Queue).Set(float64(d.Available))
		age := 0.0
		if d.Available > 0 {
			age = float64(max(now-d.OldestAvailableAt, 0))
		}
		c.headAge.WithLabelValues(p.Connection, d.Queue).Set(age)
	}
	c.sampled.WithLabelValues(p.Connection).Set(float64(clock().Unix()))
	return nil
}

// RunSampler samples the queues at once and then every Interval until ctx ends. A failed sample is
// logged and the gauges keep their last values; queue_sampled_timestamp_seconds says how old they are.
func (c *Collector) RunSampler(ctx context.Context, p SamplerParams) {
	every := p.Interval
	if every <= 0 {
		every = DefaultSampleInterval
	}
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, every)
		if err := c.Sample(sctx, &p); err != nil && ctx.Err() == nil {
			log.Warn("sample queue depth", "error", err)
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
