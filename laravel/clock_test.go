package laravel_test

import (
	"context"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestClockSkew measures a worker clock set an hour ahead against the real server's clock.
func TestClockSkew(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		c := queuetest.Open(t, queuetest.OpenParams(db))
		ahead := func() time.Time { return time.Now().Add(time.Hour) }
		skew, err := laravel.ClockSkew(context.Background(), c, laravel.ClockSkewParams{Now: ahead})
		if err != nil {
			t.Fatal(err)
		}
		if db.Dialect == "sqlite" {
			if skew != 0 {
				t.Fatalf("SQLite skew %v, want 0", skew)
			}
			return
		}
		// The servers run on this machine: only the hour set ahead remains, give or take.
		if d := skew - time.Hour; d < -2*time.Second || d > 2*time.Second {
			t.Fatalf("skew %v, want about 1h", skew)
		}
	})
}
