package laravel_test

import (
	"testing"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestConformance runs the conformance suite for every registered strategy, so a strategy added in
// another file is covered without touching this one.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, name := range laravel.Strategies() {
		t.Run(name, func(t *testing.T) { queuetest.Run(t, name) })
	}
}
