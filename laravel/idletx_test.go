package laravel_test

import (
	"context"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestIdleTransactionEnded leaves a claim's transaction idle on one of the pool's connections, as a
// connection lost across a network that drops packets leaves it on the server: the server ends it
// after the pool's idle transaction timeout, and the row it locked is claimable again, rather than
// passed over by every claim until the server's TCP keepalive ends the session (two hours). Behind
// PgBouncer's transaction pooling the pool sets nothing (a server connection is not its own).
// Not parallel: it shortens the timeout for the Conns it opens.
func TestIdleTransactionEnded(t *testing.T) {
	defer laravel.SetIdleTxTimeout(2 * time.Second)()
	ctx := context.Background()
	for name, open := range map[string]func(testing.TB) testenv.Database{"mysql": testenv.MySQL, "pgsql": testenv.Postgres} {
		t.Run(name, func(t *testing.T) {
			s := queuetest.NewSetup(t, open(t), "batch", queuetest.Options{})
			id := s.Push(t, "default", t0, t0, 1)
			db := queuetest.DB(s.Conn)
			jobs := queuetest.Q(s.Conn, s.Conn.Tables().Jobs)
			orphan, err := db.BeginTxx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer orphan.Rollback() // a test that fails gives its connection back, so that Close ends
			var locked int64
			if err := orphan.QueryRowContext(ctx, "select id from "+jobs+" for update").Scan(&locked); err != nil || locked != id {
				t.Fatalf("lock the row: %d, %v", locked, err)
			}
			// Another connection's claims pass over the locked row until the server ends the idle
			// transaction (polled: the server's timer decides when).
			deadline := time.Now().Add(30 * time.Second)
			for {
				var n int
				err := db.QueryRowContext(ctx, "select count(*) from (select id from "+jobs+" for update skip locked) t").Scan(&n)
				if err != nil {
					t.Fatal(err)
				}
				if n == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the idle transaction still holds its row after 30 s")
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err := orphan.Commit(); err == nil {
				t.Fatal("the ended transaction committed")
			}
		})
	}
	t.Run("pgbouncer", func(t *testing.T) {
		s := queuetest.NewSetup(t, testenv.PostgresPooled(t, "transaction"), "batch", queuetest.Options{})
		var v string
		if err := queuetest.DB(s.Conn).QueryRowContext(ctx, "show idle_in_transaction_session_timeout").Scan(&v); err != nil || v != "0" {
			t.Fatalf("idle_in_transaction_session_timeout %q (%v) behind PgBouncer, want the server's 0", v, err)
		}
	})
}
