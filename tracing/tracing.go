// Package tracing gives every job a worker runs an OpenTelemetry span, exported over OTLP/HTTP, and
// continues the trace of the PHP code that dispatched it.
//
// Laravel (11+) carries its Context into queued jobs: Queue::createPayloadUsing puts
// Context::dehydrate() in the payload's "illuminate:log:context" key, an object {"data": {...},
// "hidden": {...}} whose values are each PHP-serialized. An app that adds the W3C "traceparent" (and
// "tracestate") of its current span to Context, visible or hidden, e.g. from OpenTelemetry's PHP
// propagator, gets the job's span as a child of the dispatching request's. Without one the span starts
// a new trace.
package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// ContextKey is the payload key Laravel writes its dehydrated Context under.
const ContextKey = "illuminate:log:context"

// Params configures the exporter.
type Params struct {
	// Endpoint is the OTLP/HTTP traces URL, e.g. "http://127.0.0.1:4318/v1/traces".
	Endpoint    string
	ServiceName string
}

// Tracer is a worker.Observer that starts a span when a job starts and ends it when the job finishes.
type Tracer struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// NewTracer returns a Tracer that starts spans with tp.
func NewTracer(tp trace.TracerProvider) *Tracer {
	return &Tracer{tracer: tp.Tracer("github.com/artisan-go/artisan-go/worker"), prop: propagation.TraceContext{}}
}

// newExporter builds the OTLP/HTTP exporter. It is set only in binaries built with the otlp build
// tag (otlp.go): the exporter and the gRPC and protobuf code it brings add about 8 MB to the binary,
// which nobody who does not trace should carry.
var newExporter func(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error)

// ErrNoExporter means tracing is configured in a binary built without the OTLP exporter.
var ErrNoExporter = errors.New("this binary has no OTLP exporter: build it with `go build -tags otlp ./cmd/artisan-go` (or your own binary with -tags otlp), or leave tracing.otlp_endpoint empty")

// NewProvider returns a tracer provider that exports batches of spans to p.Endpoint; Shutdown flushes
// and stops it.
func NewProvider(ctx context.Context, p Params) (*sdktrace.TracerProvider, error) {
	if newExporter == nil {
		return nil, fmt.Errorf("tracing.otlp_endpoint %q: %w", p.Endpoint, ErrNoExporter)
	}
	exp, err := newExporter(ctx, p.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("tracing.otlp_endpoint %q: %w", p.Endpoint, err)
	}
	res := resource.NewSchemaless(semconv.ServiceName(p.ServiceName))
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// Claimed implements worker.Observer; claims have no span.
func (t *Tracer) Claimed(string, int, time.Duration, error) {}

// JobStarted starts the job's span, as a child of the trace found in the payload's Context.
func (t *Tracer) JobStarted(ctx context.Context, e *worker.JobEvent) context.Context {
	if carrier := Carrier(e.Envelope); carrier != nil {
		ctx = t.prop.Extract(ctx, carrier)
	}
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemKey.String("laravel"),
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingDestinationName(e.Queue),
		attribute.String("laravel.queue.connection", e.Connection),
		attribute.String("laravel.job.class", e.Class),
		attribute.Int64("laravel.job.id", e.ID),
		attribute.Int("laravel.job.attempts", e.Attempts),
	}
	if e.Envelope != nil && e.Envelope.UUID != "" {
		attrs = append(attrs, semconv.MessagingMessageID(e.Envelope.UUID))
	}
	ctx, _ = t.tracer.Start(ctx, e.DisplayName, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithTimestamp(e.Started), trace.WithAttributes(attrs...))
	return ctx
}

// JobFinished ends the job's span with its outcome; an exception or failure is the span's error.
func (t *Tracer) JobFinished(ctx context.Context, e *worker.JobEvent) {
	if e.Started.IsZero() {
		return
	}
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.String("laravel.job.outcome", e.Outcome.String()))
	if e.Err != nil {
		span.RecordError(e.Err)
	}
	if e.Outcome == worker.OutcomeFailed || e.Threw || e.Outcome == worker.OutcomeError || e.Outcome == worker.OutcomeLost {
		msg := e.Outcome.String()
		if e.Err != nil {
			msg = e.Err.Error()
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End(trace.WithTimestamp(e.Finished))
}

// Carrier returns the W3C trace context ("traceparent", "tracestate") found in the payload's Laravel
// Context, visible or hidden, or nil when there is none.
func Carrier(env *payload.Envelope) propagation.MapCarrier {
	if env == nil {
		return nil
	}
	raw, ok := env.Extra[ContextKey]
	if !ok {
		return nil
	}
	var lc map[string]json.RawMessage
	if json.Unmarshal(raw, &lc) != nil {
		return nil // anything unexpected starts a new trace
	}
	// PHP writes an empty array as [], which is no object: such a part has no values.
	var data, hidden map[string]string
	_ = json.Unmarshal(lc["data"], &data)
	_ = json.Unmarshal(lc["hidden"], &hidden)
	carrier := propagation.MapCarrier{}
	for _, k := range []string{"traceparent", "tracestate"} {
		for _, m := range []map[string]string{data, hidden} {
			if v, ok := phpString(m[k]); ok {
				carrier[k] = v
				break
			}
		}
	}
	if carrier["traceparent"] == "" {
		return nil
	}
	return carrier
}

// phpString decodes a PHP-serialized string value.
func phpString(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	v, err := payload.Unserialize([]byte(s))
	if err != nil {
		return "", false
	}
	str, ok := v.(string)
	return str, ok
}
