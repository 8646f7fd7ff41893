//go:build otlp

package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/artisan-go/artisan-go/tracing"
	"github.com/artisan-go/artisan-go/worker"
)

// TestOTLPExport sends a job's span to an OTLP/HTTP endpoint and reads it back as the collector would.
func TestOTLPExport(t *testing.T) {
	t.Parallel()
	got := make(chan *coltracepb.ExportTraceServiceRequest, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		got <- &req
	}))
	defer srv.Close()
	ctx := context.Background()
	tp, err := tracing.NewProvider(ctx, tracing.Params{Endpoint: srv.URL + "/v1/traces", ServiceName: "artisan-go-test"})
	if err != nil {
		t.Fatal(err)
	}
	tr := tracing.NewTracer(tp)
	start := time.Now()
	e := &worker.JobEvent{ID: 1, Connection: "database", Queue: "default", Class: `App\Jobs\A`, DisplayName: `App\Jobs\A`, Attempts: 1, Started: start}
	jctx := tr.JobStarted(ctx, e)
	e.Finished, e.Outcome = start.Add(time.Millisecond), worker.OutcomeProcessed
	tr.JobFinished(jctx, e)
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	req := <-got
	rs := req.GetResourceSpans()
	if len(rs) != 1 || len(rs[0].GetScopeSpans()) != 1 || len(rs[0].GetScopeSpans()[0].GetSpans()) != 1 {
		t.Fatalf("export %v, want one span", req)
	}
	if name := rs[0].GetScopeSpans()[0].GetSpans()[0].GetName(); name != `App\Jobs\A` {
		t.Errorf("span name %q", name)
	}
}
