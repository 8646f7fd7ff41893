package worker

import (
	"slices"
	"testing"
)

func TestIDRingBounded(t *testing.T) {
	t.Parallel()
	r := newIDRing(3)
	if r.list() != nil {
		t.Fatal("empty ring lists ids")
	}
	for _, id := range []int64{1, 2, 2, 3, 4, 5} {
		r.add(id)
	}
	got := r.list()
	slices.Sort(got)
	if !slices.Equal(got, []int64{3, 4, 5}) {
		t.Fatalf("ring holds %v, want the 3 most recent ids", got)
	}
}
