package laravel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// claimBehindProxy sets up the batch strategy on db reached through a fault-injecting proxy, with three
// jobs pushed, and skips where the server claims without SKIP LOCKED (no claim transaction to cut).
func claimBehindProxy(t *testing.T, db testenv.Database) (*queuetest.Setup, *faults.Proxy) {
	t.Helper()
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
	return s, proxy
}

// TestClaimCommitUnanswered cuts the connection right after a claim transaction's COMMIT is sent:
// the claim fails with ErrCommitUnknown, and the rows it may have reserved are given back once the
// database answers again, instead of waiting for retry_after with an attempt used up.
func TestClaimCommitUnanswered(t *testing.T) {
	t.Parallel()
	s, proxy := claimBehindProxy(t, testenv.MySQL(t))
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

// TestClaimCommitArrivesLate cuts a claim's connection as its COMMIT is sent, and lets the COMMIT reach
// the server only after the claim has failed and the return of its rows has begun: the return waits
// for the claim's transaction, and gives the rows back once it has committed. A return that did not
// wait would find the rows not yet reserved and leave them to the COMMIT that follows: reserved until
// retry_after, each with an attempt used up.
func TestClaimCommitArrivesLate(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name   string
		open   func(testing.TB) testenv.Database
		commit string
	}{
		{"mysql", testenv.MySQL, "\x03commit"}, // COM_QUERY "COMMIT", not "READ COMMITTED"
		{"pgsql", testenv.Postgres, "commit"},
	} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			s, proxy := claimBehindProxy(t, d.open(t))
			deliver := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(deliver) }) }
			defer release()
			proxy.CutDeliverLate(d.commit, 1, deliver)
			_, err := s.Queue.JobClaim(context.Background(), &laravel.JobClaimParams{Queue: "default", Now: 200, RetryAfter: 90, Limit: 3})
			if !errors.Is(err, laravel.ErrCommitUnknown) || proxy.Cuts() != 1 {
				t.Fatalf("claim: %v (cuts %d), want ErrCommitUnknown", err, proxy.Cuts())
			}
			waiting := "%" + s.Conn.Tables().Jobs + "%"
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if s.Conn.ReturnedClaims() > 0 {
					t.Error("the return was over before the claim's COMMIT reached the server")
					break
				}
				if queuetest.LockWaits(t, s.Conn, waiting) > 0 {
					break // the return waits for the claim's transaction
				}
				if time.Now().After(deadline) {
					t.Fatal("the return neither waited for the claim's transaction nor finished")
				}
			}
			release()
			for deadline := time.Now().Add(30 * time.Second); s.Conn.ReturningClaims() > 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the return never finished")
				}
			}
			for _, r := range s.Rows(t) {
				if r.ReservedAt != nil || r.Attempts != 0 {
					t.Errorf("row %d: reserved, attempts %d after the return; want it claimable, no attempt used", r.ID, r.Attempts)
				}
			}
		})
	}
}

// TestClaimNotCommittedLeftAlone cuts a claim's connection as its COMMIT is sent and never lets the
// COMMIT reach the server, which rolls the claim back; another worker then claims the same rows within
// the same second, with the same attempts, which the fence cannot tell from the first claim.
// PostgreSQL says the first claim's transaction did not commit, so its return leaves them alone.
func TestClaimNotCommittedLeftAlone(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	direct := db.DSN
	s, proxy := claimBehindProxy(t, db)
	deliver := make(chan struct{})
	defer close(deliver)
	proxy.CutDeliverLate("commit", 1, deliver)
	ctx := context.Background()
	_, err := s.Queue.JobClaim(ctx, &laravel.JobClaimParams{Queue: "default", Now: 200, RetryAfter: 90, Limit: 3})
	if !errors.Is(err, laravel.ErrCommitUnknown) || proxy.Cuts() != 1 {
		t.Fatalf("claim: %v (cuts %d), want ErrCommitUnknown", err, proxy.Cuts())
	}
	// The claim's transaction is open on the server, its COMMIT held, and the return waits for it.
	// Hold whatever goes through the proxy, and reset every connection: the server rolls it back.
	proxy.Pause()
	proxy.Reset()
	p := s.Params
	p.DSN = direct
	other := s.NewQueue(t, queuetest.Open(t, p))
	claimed := 0
	for deadline := time.Now().Add(30 * time.Second); claimed < 3; {
		// SKIP LOCKED passes by the rows until the server has rolled the first claim back.
		jobs, err := other.JobClaim(ctx, &laravel.JobClaimParams{Queue: "default", Now: 200, RetryAfter: 90, Limit: 3})
		if err != nil {
			t.Fatalf("the other worker's claim: %v", err)
		}
		claimed += len(jobs)
		if time.Now().After(deadline) {
			t.Fatalf("the other worker claimed %d of 3 rows", claimed)
		}
		if claimed < 3 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	proxy.Resume()
	for deadline := time.Now().Add(30 * time.Second); s.Conn.ReturningClaims() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the return never finished")
		}
	}
	for _, r := range s.Rows(t) {
		if r.ReservedAt == nil || *r.ReservedAt != 200 || r.Attempts != 1 {
			t.Errorf("row %d: attempts %d, reserved %v; want the other worker's claim (attempts 1, reserved at 200) left alone", r.ID, r.Attempts, r.ReservedAt != nil)
		}
	}
}
