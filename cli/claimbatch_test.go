package cli

import (
	"testing"

	"github.com/artisan-go/artisan-go/config"
)

func TestClaimBatchFollowsConcurrency(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		w    config.Worker
		want int
	}{
		{config.Worker{Concurrency: 1}, 1},
		{config.Worker{Concurrency: 128}, 128},
		{config.Worker{Concurrency: 0}, 1},
		{config.Worker{Concurrency: 16, ClaimBatch: 64}, 64},
		{config.Worker{Concurrency: 256, Once: true}, 1},
		{config.Worker{Concurrency: 16, ClaimBatch: 64, Once: true}, 1},
		{config.Worker{Concurrency: 256, MaxJobs: 10}, 10},
		{config.Worker{Concurrency: 4, MaxJobs: 10}, 4},
	} {
		if got := claimBatch(tt.w); got != tt.want {
			t.Errorf("claimBatch(concurrency %d, claim_batch %d) = %d, want %d", tt.w.Concurrency, tt.w.ClaimBatch, got, tt.want)
		}
	}
}

func TestPoolSizeFollowsConcurrencyUpToTheBound(t *testing.T) {
	for _, tt := range []struct{ concurrency, want int }{{0, 3}, {1, 3}, {4, 6}, {6, maxPoolSize}, {256, maxPoolSize}} {
		if got := poolSize(tt.concurrency); got != tt.want {
			t.Errorf("poolSize(%d) = %d, want %d", tt.concurrency, got, tt.want)
		}
	}
}
