package interop

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/worker"
)

// TestPayloadFieldsAsPHPReadsThem runs one job whose payload carries a value Laravel never writes but
// PHP accepts (maxTries -1, maxTries beyond int32, backoff as an object, numbers past any clock) once under PHP's worker and
// once under Go's, on fresh tables, and compares what is left: the row, its attempts, failed_jobs.
func TestPayloadFieldsAsPHPReadsThem(t *testing.T) {
	t.Parallel()
	type outcome struct {
		Jobs, Attempts, Failed int
		FailedClass            string
	}
	for _, c := range []struct{ name, kind, from, to string }{
		{"maxTries -1 fails before running", "plain", `"maxTries":null`, `"maxTries":-1`},
		{"maxTries beyond int32 is never reached", "failing", `"maxTries":1`, `"maxTries":99999999999`},
		{"backoff object runs", "plain", `"backoff":null`, `"backoff":{"a":1}`},
		{"retryUntil 1e30 runs", "plain", `"retryUntil":null`, `"retryUntil":1e30`},
		{"backoff 1e30 runs", "plain", `"backoff":null`, `"backoff":1e30`},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(php bool) outcome {
				ctx := testContext(t)
				s := newSide(t, testenv.SQLite(t))
				s.reg.Register(`App\Jobs\Plain`, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error { return nil }))
				s.reg.Register(`App\Jobs\Failing`, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error { return errors.New("always fails") }))
				s.app.MustDispatch(ctx, c.kind)
				rows := s.jobs(t, ctx)
				if len(rows) != 1 || !strings.Contains(rows[0].Payload, c.from) {
					t.Fatalf("the %s payload lacks %s: %+v", c.kind, c.from, rows)
				}
				if _, err := s.app.DB().ExecContext(ctx, "update jobs set payload = ?", strings.Replace(rows[0].Payload, c.from, c.to, 1)); err != nil {
					t.Fatal(err)
				}
				if php {
					if out, err := s.app.Artisan(ctx, "queue:work", "database", "--once", "--sleep=0"); err != nil {
						t.Fatalf("%v\n%s", err, out)
					}
				} else {
					s.run(t, ctx, func(w *worker.Config) { w.Once, w.StopWhenEmpty = true, false }, nil)
				}
				var o outcome
				rows = s.jobs(t, ctx)
				o.Jobs = len(rows)
				if len(rows) == 1 {
					o.Attempts = rows[0].Attempts
				}
				failed := s.failed(t, ctx)
				o.Failed = len(failed)
				if len(failed) == 1 {
					o.FailedClass, _, _ = strings.Cut(failed[0].Exception, ":")
				}
				return o
			}
			php, goes := run(true), run(false)
			if php != goes {
				t.Errorf("PHP left %+v, Go %+v", php, goes)
			}
			t.Logf("PHP and Go: %+v", php)
		})
	}
}
