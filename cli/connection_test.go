package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestQueueWorkUnknownConnection: queue:work refuses a connection the application does not have with
// Laravel's message, instead of working the default queue under that name.
func TestQueueWorkUnknownConnection(t *testing.T) {
	t.Parallel()
	_, env := newSQLiteApp(t, "welcome")
	var out, errb bytes.Buffer
	code := Do(context.Background(), []string{"queue:work", "nope", "--env-file", env, "--stop-when-empty", "--sleep=0"}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "The [nope] queue connection has not been configured.") {
		t.Fatalf("status %d, want 1 with Laravel's message:\n%s", code, errb.String())
	}
}
