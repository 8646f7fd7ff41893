package tracing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/artisan-go/artisan-go/dispatch"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/tracing"
	"github.com/artisan-go/artisan-go/worker"
)

const (
	traceID      = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpanID = "00f067aa0ba902b7"
	traceparent  = "00-" + traceID + "-" + parentSpanID + "-01"
)

// phpString is PHP's serialize() of a string.
func phpString(s string) string { return fmt.Sprintf(`s:%d:"%s";`, len(s), s) }

// withContext adds a dehydrated Laravel Context to a payload as Queue::createPayloadUsing does.
func withContext(p []byte, context string) []byte {
	return append(p[:len(p)-1:len(p)-1], `,"illuminate:log:context":`+context+`}`...)
}

func TestCarrier(t *testing.T) {
	t.Parallel()
	base := []byte(`{"uuid":"u","displayName":"App\\Jobs\\A","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\A","command":"O:8:\"App\\Jobs\\A\":0:{}"}}`)
	for _, c := range []struct {
		name, context, want string
	}{
		{"visible", `{"data":{"traceparent":` + quote(phpString(traceparent)) + `,"user":"i:7;"},"hidden":[]}`, traceparent},
		{"hidden", `{"data":{"url":` + quote(phpString("https://x")) + `},"hidden":{"traceparent":` + quote(phpString(traceparent)) + `}}`, traceparent},
		{"none", `{"data":{"url":` + quote(phpString("https://x")) + `},"hidden":[]}`, ""},
		{"not a string", `{"data":{"traceparent":"i:5;"},"hidden":[]}`, ""},
		{"damaged", `{"data":{"traceparent":"s:99:\"00-\";"},"hidden":[]}`, ""},
	} {
		env, err := payload.ParseEnvelope(withContext(base, c.context))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := tracing.Carrier(env)["traceparent"]; got != c.want {
			t.Errorf("%s: traceparent %q, want %q", c.name, got, c.want)
		}
	}
	env, err := payload.ParseEnvelope(base)
	if err != nil || tracing.Carrier(env) != nil {
		t.Errorf("no Context: carrier %v (%v), want none", tracing.Carrier(env), err)
	}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// spanContext describes the span in ctx as trace/span.
func spanContext(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	return sc.TraceID().String() + "/" + sc.SpanID().String()
}

// TestSpanPerJob runs real jobs and checks their spans: a child of the traceparent Laravel's Context
// carried, a new trace without one, and an error status for a failed job.
func TestSpanPerJob(t *testing.T) {
	t.Parallel()
	db := testenv.SQLite(t)
	conn := queuetest.Open(t, queuetest.OpenParams(db))
	ctx := context.Background()
	if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{}); err != nil {
		t.Fatal(err)
	}
	q, err := laravel.NewQueue(conn, laravel.QueueParams{})
	if err != nil {
		t.Fatal(err)
	}
	disp, err := dispatch.ForConn(conn, dispatch.Params{LaravelVersion: "11.0"})
	if err != nil {
		t.Fatal(err)
	}
	push := func(class, context string) {
		p, _, err := disp.Payload(dispatch.Job{Command: payload.NewObject(class), Tries: 1})
		if err != nil {
			t.Fatal(err)
		}
		if context != "" {
			p = withContext(p, context)
		}
		if _, err := q.JobPush(ctx, &laravel.JobPushParams{Queue: "default", Payload: p, Now: 1, AvailableAt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	push(`App\Jobs\Traced`, `{"data":{"traceparent":`+quote(phpString(traceparent))+`},"hidden":[]}`)
	push(`App\Jobs\Fails`, "")
	reg := handlers.NewRegistry()
	var handlerTrace string
	reg.Register(`App\Jobs\Traced`, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		handlerTrace = spanContext(ctx)
		return nil
	}))
	reg.Register(`App\Jobs\Fails`, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return errors.New("no luck") }))

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	cfg := worker.Defaults()
	cfg.StopWhenEmpty, cfg.Sleep = true, 0
	w, err := worker.New(worker.Params{Queue: q, Conn: conn, Registry: reg, Config: cfg, Observer: tracing.NewTracer(tp)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()] = s
	}
	traced, failed := spans[`App\Jobs\Traced`], spans[`App\Jobs\Fails`]
	if traced == nil || failed == nil || len(spans) != 2 {
		t.Fatalf("spans %v, want one per job", spans)
	}
	if traced.SpanContext().TraceID().String() != traceID || traced.Parent().SpanID().String() != parentSpanID || !traced.Parent().IsRemote() {
		t.Errorf("traced job: trace %s parent %s, want trace %s parent %s from Laravel's Context",
			traced.SpanContext().TraceID(), traced.Parent().SpanID(), traceID, parentSpanID)
	}
	if handlerTrace != traced.SpanContext().TraceID().String()+"/"+traced.SpanContext().SpanID().String() {
		t.Errorf("the handler's context carries span %s, want the job's", handlerTrace)
	}
	if failed.Parent().IsValid() || failed.SpanContext().TraceID().String() == traceID {
		t.Errorf("job without Context: parent %v, want a new trace", failed.Parent())
	}
	if failed.Status().Code != codes.Error || failed.Status().Description != "no luck" {
		t.Errorf("failed job's status %+v, want the error", failed.Status())
	}
	attrs := map[string]string{}
	for _, a := range traced.Attributes() {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	for k, v := range map[string]string{"messaging.destination.name": "default", "laravel.job.class": `App\Jobs\Traced`, "laravel.job.outcome": "processed", "laravel.job.attempts": "1"} {
		if attrs[k] != v {
			t.Errorf("attribute %s = %q, want %q (all: %v)", k, attrs[k], v, attrs)
		}
	}
}
