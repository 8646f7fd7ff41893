package laravel_test

import (
	"context"
	"fmt"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/artisan-go/artisan-go/laravel"
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
