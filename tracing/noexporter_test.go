//go:build !otlp

package tracing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/tracing"
)

// TestNoExporter: tracing configured in a binary built without the exporter says how to build one.
func TestNoExporter(t *testing.T) {
	t.Parallel()
	_, err := tracing.NewProvider(context.Background(), tracing.Params{Endpoint: "http://127.0.0.1:4318/v1/traces"})
	if !errors.Is(err, tracing.ErrNoExporter) || !strings.Contains(err.Error(), "-tags otlp") || !strings.Contains(err.Error(), "tracing.otlp_endpoint") {
		t.Fatalf("err = %v, want ErrNoExporter naming the key and the build tag", err)
	}
}
