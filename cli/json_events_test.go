package cli

import (
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/worker"
)

// TestJSONEventLine checks lines against the shape of Laravel 11.27+'s WorkCommand::writeOutputAsJson:
// keys in its order, empty values left out (array_filter), json_encode's default escaping, timestamps
// as Y-m-d\TH:i:s.uP and durations rounded to 6 places.
func TestJSONEventLine(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 10, 0, 0, 123456789, time.UTC)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip(err)
	}
	base := worker.RunEvent{ID: 7, UUID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", Connection: "database", Queue: "emails",
		Job: `App\Jobs\SendInvoice`, Attempts: 1, Time: at}
	for _, tc := range []struct {
		name string
		mod  func(*worker.RunEvent)
		loc  *time.Location
		want string
	}{
		{"starting", func(e *worker.RunEvent) { e.Status = worker.EventStarting }, time.UTC,
			`{"level":"info","id":7,"uuid":"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d","connection":"database","queue":"emails","job":"App\\Jobs\\SendInvoice","status":"starting","attempts":1,"timestamp":"2026-11-24T10:00:00.123456+00:00"}`},
		{"success", func(e *worker.RunEvent) {
			e.Status, e.Result, e.Duration = worker.EventSuccess, "deleted", 1500*time.Millisecond
		}, paris,
			`{"level":"info","id":7,"uuid":"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d","connection":"database","queue":"emails","job":"App\\Jobs\\SendInvoice","status":"success","result":"deleted","attempts":1,"timestamp":"2026-11-24T11:00:00.123456+01:00","duration":1.5}`},
		{"released", func(e *worker.RunEvent) {
			e.Status, e.Result, e.Duration, e.Attempts = worker.EventReleased, "released", 2*time.Second, 2
		}, time.UTC,
			`{"level":"warning","id":7,"uuid":"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d","connection":"database","queue":"emails","job":"App\\Jobs\\SendInvoice","status":"released_after_exception","result":"released","attempts":2,"timestamp":"2026-11-24T10:00:00.123456+00:00","duration":2}`},
		{"failed", func(e *worker.RunEvent) {
			e.Status, e.Result, e.Duration = worker.EventFailed, "deleted", 40*time.Microsecond
			e.Exception, e.Message = "RuntimeException", "upstream/partner said: café"
		}, time.UTC,
			`{"level":"warning","id":7,"uuid":"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d","connection":"database","queue":"emails","job":"App\\Jobs\\SendInvoice","status":"failed","result":"deleted","attempts":1,"exception":"RuntimeException","message":"upstream\/partner said: caf\u00e9","timestamp":"2026-11-24T10:00:00.123456+00:00","duration":4.0e-5}`},
	} {
		e := base
		tc.mod(&e)
		if got := string(jsonEventLine(e, tc.loc)); got != tc.want+"\n" {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
