package dispatch

import (
	"context"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
)

// BenchmarkDispatch measures one dispatch (payload built, row inserted, autocommit) per operation on
// each database.
func BenchmarkDispatch(b *testing.B) {
	for _, d := range []struct {
		name string
		make func(testing.TB) testenv.Database
	}{{"mysql", testenv.MySQL}, {"pgsql", testenv.Postgres}, {"sqlite", testenv.SQLite}} {
		b.Run(d.name, func(b *testing.B) {
			ctx := context.Background()
			db := d.make(b)
			conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.Dialect(db.Dialect), DSN: db.DSN})
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{}); err != nil {
				b.Fatal(err)
			}
			dp, err := ForConn(conn, Params{})
			if err != nil {
				b.Fatal(err)
			}
			cmd := payload.NewObject(`App\Jobs\Ship`).Set("orderId", int64(7)).SetProtected("note", "fragile")
			b.ResetTimer()
			for b.Loop() {
				if _, err := dp.Dispatch(ctx, queuetest.DB(conn), Job{Command: cmd, Tries: 3}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
