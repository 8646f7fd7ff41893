package laravel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestClaimCommitUnanswered cuts the connection right after a claim transaction's COMMIT is sent:
// the claim fails with ErrCommitUnknown, and the rows it may have reserved are given back once the
// database answers again, instead of waiting for retry_after with an attempt used up.
func TestClaimCommitUnanswered(t *testing.T) {
	t.Parallel()
	db := testenv.MySQL(t)
	target := fmt.Sprintf("%s:%d", db.Host, db.Port)
	proxy := faults.StartProxy(t, target)
	db.DSN = strings.Replace(db.DSN, target, proxy.Addr, 1)
	s := queuetest.NewSetup(t, db, "batch", queuetest.Options{})
	if !strings.Contains(strings.ToUpper(s.Conn.Lock()), "SKIP LOCKED") {
		t.Skipf("the server claims without SKIP LOCKED (%s): no claim transaction to cut", s.Conn.Lock())
	}
	for i := range 3 {
		s.Push(t, "default", 100, 100, i)
	}
	proxy.CutAfter("\x03commit", 1) // COM_QUERY "COMMIT", not "READ COMMITTED"
	_, err := s.Queue.JobClaim(context.Background(), &laravel.JobClaimParams{Queue: "default", Now: 200, RetryAfter: 90, Limit: 3})
	if !errors.Is(err, laravel.ErrCommitUnknown) || proxy.Cuts() != 1 {
		t.Fatalf("claim: %v (cuts %d), want ErrCommitUnknown", err, proxy.Cuts())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		reserved := 0
		for _, r := range s.Rows(t) {
			if r.ReservedAt != nil || r.Attempts != 0 {
				reserved++
			}
		}
		if reserved == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows still reserved by the unanswered claim", reserved)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
