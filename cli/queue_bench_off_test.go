//go:build !bench

package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestQueueBenchNeedsTag checks that a binary built without the bench tag names the way to run it.
func TestQueueBenchNeedsTag(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if status := Do(context.Background(), []string{"queue:bench"}, nil, &stdout, &stderr); status != 2 || !strings.Contains(stderr.String(), "-tags bench") {
		t.Fatalf("queue:bench without the tag: status %d, stderr %q; want 2 and how to build it", status, stderr.String())
	}
}
