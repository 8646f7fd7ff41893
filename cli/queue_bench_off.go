//go:build !bench

package cli

import (
	"context"
	"fmt"
	"io"
)

// The benchmark harness (the PHP baseline, the bare SQL loop, the plot and its image libraries) is
// built only with the bench tag, so the binary that runs queue:work does not carry it.

// queueBenchSummary is queue:bench's line in the command list.
const queueBenchSummary = "Measure the claim strategies (built with -tags bench only)"

// runQueueBench says how to build the benchmark into the binary.
func runQueueBench(_ context.Context, _ []string, _ io.Reader, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "artisan-go queue:bench: this binary was built without the benchmark; run it with go run -tags bench ./cmd/artisan-go queue:bench")
	return 2
}
