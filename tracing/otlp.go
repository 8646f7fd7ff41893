//go:build otlp

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func init() {
	newExporter = func(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error) {
		return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	}
}
