package laravel_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

// TestOpenSQLiteConcurrently opens one new SQLite file from many connections at once, as workers
// starting together do: each switches the file to WAL, which another's lock can refuse at once, and
// every open must still succeed.
func TestOpenSQLiteConcurrently(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for round := range 20 {
		path := filepath.Join(dir, fmt.Sprintf("db%d.sqlite", round))
		var wg sync.WaitGroup
		errs := make(chan error, 12)
		for range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := laravel.Open(context.Background(), laravel.OpenParams{Dialect: laravel.SQLite, DSN: path})
				if err != nil {
					errs <- err
					return
				}
				_, err = queuetest.DB(c).Exec("create table if not exists t (id integer)")
				c.Close()
				if err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// TestOpenSQLiteTempStore: every connection keeps SQLite's temporary storage in memory, unless the DSN
// sets temp_store itself, in any of the forms a pragma takes.
func TestOpenSQLiteTempStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"", 2}, {"?_pragma=temp_store(file)", 1}, {"?_pragma=cache_size(-4000)", 2},
		{"?_pragma=temp_store=file", 1}, {"?_pragma=TEMP_STORE%20%3D%200", 0}, {"?_pragma=%20temp_store%09(1)", 1},
	} {
		c, err := laravel.Open(context.Background(), laravel.OpenParams{Dialect: laravel.SQLite, DSN: filepath.Join(dir, "db.sqlite") + tc.query})
		if err != nil {
			t.Fatal(err)
		}
		db := queuetest.DB(c)
		db.SetMaxOpenConns(3)
		var conns []*sql.Conn
		for range 3 { // three connections held at once: the pragma is per connection
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, conn)
			var got int
			if err := conn.QueryRowContext(context.Background(), "pragma temp_store").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("DSN %q: temp_store = %d, want %d", tc.query, got, tc.want)
			}
		}
		for _, conn := range conns {
			conn.Close()
		}
		c.Close()
	}
}
