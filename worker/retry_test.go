package worker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/payload"
)

// deadline is a handler whose class computes retryUntil() in PHP; it gives the deadline in Go.
type deadline struct {
	handlers.Handler
	at time.Time
}

func (d deadline) RetryUntil(job *handlers.Job) time.Time { return d.at }

// TestRetryPayloadRetryUntil checks how queue:retry refreshes retryUntil: from the handler's
// RetryUntiler, kept with a note when PHP would call a method Go does not have, kept silently when
// the job carries it as a property, and an encrypted command without APP_KEY is refused.
func TestRetryPayloadRetryUntil(t *testing.T) {
	t.Parallel()
	noop := handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil })
	old := int64(1700000000)
	build := func(class string, prop bool, encrypt bool) []byte {
		cmd := payload.NewObject(class).Set("n", int64(1))
		if prop {
			cmd.Set("retryUntil", old)
		}
		kr, err := payload.NewKeyring("base64:"+strings.Repeat("A", 43)+"=", nil, "AES-256-CBC")
		if err != nil {
			t.Fatal(err)
		}
		p, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", Command: cmd, RetryUntil: &old, Encrypt: encrypt, Keyring: kr})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	reg := handlers.NewRegistry()
	reg.Register(`App\Jobs\WithDeadline`, deadline{noop, time.Unix(1800000000, 0)})
	reg.Register(`App\Jobs\NoDeadline`, deadline{noop, time.Time{}})
	reg.Register(`App\Jobs\Plain`, noop)
	for _, tc := range []struct {
		class      string
		prop       bool
		want, note string
	}{
		{`App\Jobs\WithDeadline`, false, `"retryUntil":1800000000`, ""},
		{`App\Jobs\NoDeadline`, false, `"retryUntil":null`, ""},
		{`App\Jobs\Plain`, false, `"retryUntil":1700000000`, `App\Jobs\Plain computes it in its retryUntil() method`},
		{`App\Jobs\Plain`, true, `"retryUntil":1700000000`, ""},
	} {
		out, note, err := RetryPayload(context.Background(), RetryParams{Payload: build(tc.class, tc.prop, false), Registry: reg})
		if err != nil || !strings.Contains(string(out), tc.want) || (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("%s (property %v): %s, note %q, %v; want %s and note %q", tc.class, tc.prop, out, note, err, tc.want, tc.note)
		}
	}
	if _, _, err := RetryPayload(context.Background(), RetryParams{Payload: build(`App\Jobs\Plain`, false, true), Registry: reg}); !errors.Is(err, payload.ErrNoKeyring) {
		t.Errorf("encrypted command without APP_KEY: err = %v, want ErrNoKeyring", err)
	}
	// Before 8.21 RetryCommand only resets attempts: the command is not read, retryUntil is kept.
	out, note, err := RetryPayload(context.Background(), RetryParams{Payload: build(`App\Jobs\WithDeadline`, false, true), Registry: reg, LaravelVersion: "8.20"})
	if err != nil || note != "" || !strings.Contains(string(out), `"retryUntil":1700000000`) {
		t.Errorf("Laravel 8.20: %s, note %q, %v; want retryUntil kept", out, note, err)
	}
}
