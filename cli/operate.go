package cli

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/metrics"
	"github.com/artisan-go/artisan-go/pulse"
	"github.com/artisan-go/artisan-go/tracing"
	"github.com/artisan-go/artisan-go/worker"
)

// operating is what queue:work runs beside the worker: the metrics and health endpoints, and the
// Pulse recorder.
type operating struct {
	cfg       *config.Config
	log       *slog.Logger
	ln        net.Listener // nil without metrics.addr
	collector *metrics.Collector
	pulse     *pulse.Recorder          // nil without Pulse's tables
	traces    *sdktrace.TracerProvider // nil without tracing.otlp_endpoint
	appLog    *laravelLog              // nil without log.laravel_file
	wg        sync.WaitGroup
}

// listenMetrics opens metrics.addr before anything else starts, so that an address in use stops
// queue:work at once with one line.
func listenMetrics(cfg *config.Config) (net.Listener, error) {
	if cfg.Metrics.Addr == "" {
		return nil, nil
	}
	return metrics.Listen(cfg.Metrics.Addr)
}

// newOperating prepares the observers for a worker on conn with the handlers of reg.
func newOperating(ctx context.Context, cfg *config.Config, conn *laravel.Conn, reg *handlers.Registry, log *slog.Logger, ln net.Listener) (*operating, error) {
	o := &operating{cfg: cfg, log: log, ln: ln, appLog: newLaravelLog(cfg.Log.LaravelFile, cfg.App.Env, cfg.App.Timezone, log)}
	if cfg.Pulse.Mode == "auto" {
		schema, err := conn.PulseInspect(ctx)
		if err != nil {
			return nil, err
		}
		if schema.Present {
			o.pulse = pulse.New(pulse.Params{Conn: conn, Schema: schema, SlowJobThreshold: cfg.Pulse.SlowJobThreshold, Logger: log})
			log.Info("writing Laravel Pulse's queue and slow job rows", "key_hash_generated", schema.KeyHashGenerated)
		}
	}
	if ln != nil {
		classes := cfg.Metrics.Classes
		if len(classes) == 0 {
			// The routes are registered with the worker, after this.
			classes = reg.Classes()
			for _, r := range cfg.Routes {
				classes = append(classes, r.Class)
			}
		}
		o.collector = metrics.New(metrics.Params{Classes: classes})
	}
	if cfg.Tracing.OTLPEndpoint != "" {
		tp, err := tracing.NewProvider(ctx, tracing.Params{Endpoint: cfg.Tracing.OTLPEndpoint, ServiceName: cfg.Tracing.ServiceName})
		if err != nil {
			return nil, err
		}
		o.traces = tp
		log.Info("exporting a span per job", "otlp_endpoint", cfg.Tracing.OTLPEndpoint)
	}
	return o, nil
}

// observer is the worker's Observer, nil when nothing observes.
func (o *operating) observer() worker.Observer {
	var obs []worker.Observer
	if o.collector != nil {
		obs = append(obs, o.collector)
	}
	if o.pulse != nil {
		obs = append(obs, o.pulse)
	}
	if o.traces != nil {
		obs = append(obs, tracing.NewTracer(o.traces))
	}
	if o.appLog != nil {
		obs = append(obs, o.appLog)
	}
	return worker.Observers(obs...)
}

// start serves the endpoints and samples the queues until ctx ends; stop waits for them.
func (o *operating) start(ctx context.Context, w *worker.Worker, wc worker.Config, conn *laravel.Conn) error {
	if o.pulse != nil {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			o.pulse.Run(ctx, o.cfg.Pulse.FlushInterval)
		}()
	}
	if o.collector == nil {
		return nil
	}
	o.collector.Watch(w, conn)
	reg, err := metrics.NewRegistry(o.collector)
	if err != nil {
		return err
	}
	h := metrics.Handler(metrics.ServerParams{Gatherer: reg, Ready: o.collector.ReadyCheck(w, conn, o.cfg.Metrics.StuckAfter)})
	o.wg.Add(2)
	go func() {
		defer o.wg.Done()
		if err := metrics.Serve(ctx, o.ln, h); err != nil {
			o.log.Error("metrics server stopped", "error", err)
		}
	}()
	go func() {
		defer o.wg.Done()
		o.collector.RunSampler(ctx, metrics.SamplerParams{
			Conn: conn, Connection: wc.Connection, Queues: wc.Queues, RetryAfter: wc.RetryAfter,
			Interval: o.cfg.Metrics.SampleInterval, Logger: o.log,
		})
	}()
	o.log.Info("serving metrics", "addr", o.ln.Addr().String(), "paths", "/metrics /healthz /readyz")
	return nil
}

// stop waits for what start started, and sends the last spans; start's context must be cancelled
// first.
func (o *operating) stop() {
	o.wg.Wait()
	if o.traces != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := o.traces.Shutdown(ctx); err != nil {
			o.log.Warn("send the last spans", "error", err)
		}
	}
}
