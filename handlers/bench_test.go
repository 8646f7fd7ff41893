package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

func BenchmarkRegistryLookup(b *testing.B) {
	r := NewRegistry()
	for i := range 200 {
		r.Register(fmt.Sprintf(`App\Jobs\Job%d`, i), noop)
	}
	r.Alias(`App\Jobs\Old`, `App\Jobs\Job100`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := r.Lookup(`App\Jobs\Old`); !ok {
			b.Fatal("not found")
		}
	}
}

func BenchmarkTypedBind(b *testing.B) {
	job := fixtureJob(b, "podcast")
	h := Typed(func(context.Context, *Job, *podcastCommand) error { return nil })
	b.ReportAllocs()
	for b.Loop() {
		if err := h.Handle(context.Background(), job); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecRoute(b *testing.B) {
	job := fixtureJob(b, "podcast")
	h := &ExecHandler{Argv: []string{"sh", "-c", "cat >/dev/null"}}
	for b.Loop() {
		if err := h.Handle(context.Background(), job); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHTTPRoute(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	job := fixtureJob(b, "podcast")
	h := &HTTPHandler{URL: srv.URL}
	b.ReportAllocs()
	for b.Loop() {
		if err := h.Handle(context.Background(), job); err != nil {
			b.Fatal(err)
		}
	}
}
