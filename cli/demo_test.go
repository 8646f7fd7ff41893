package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemoRunsAndSummarizes(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	db := filepath.Join(t.TempDir(), "demo.sqlite")
	for run := 0; run < 2; run++ { // the second run resets the database
		out.Reset()
		if code := Do(context.Background(), []string{"demo", "--db", db}, nil, &out, &errb); code != 0 {
			t.Fatalf("demo exit status %d: %s", code, errb.String())
		}
	}
	text := out.String()
	for _, want := range []string{
		"✓ SendWelcomeEmail to ana@example.com",
		"✓ SecretJob decrypted",
		"✓ chain link 3",
		"done                    8",
		"released for retry      2",
		"failed                  2",
		"left for PHP workers    3",
		"chain links dispatched  2",
		"pending 0, failed 0, finished true",
		`unique lock laravel_unique_job:App\Jobs\UniqueReport77 released: true`,
		`App\Jobs\FlakyJob`,
		"RuntimeException: upstream returned 503 in ",
		"Closure (Dispatch.php:59)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}
