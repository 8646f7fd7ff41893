package dispatch

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/jmoiron/sqlx"
)

// TestUniqueDispatch takes a Unique job's lock in the database cache store as PHP's dispatch() does:
// a second dispatch queues nothing while the lock is held, one whose insert fails gives the lock back,
// and from 13.24 the payload names the lock's owner.
func TestUniqueDispatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := openShop(t, testenv.SQLite(t))
	rows := func() int {
		var n int
		if err := queuetest.DB(conn).QueryRow("select count(*) from jobs").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	report := func(id string) *payload.Object {
		return payload.NewObject(`App\Jobs\BuildReport`).Set("reportId", id).Set("uniqueId", id).Set("uniqueFor", int64(3600))
	}

	if _, err := New(Params{Dialect: laravel.SQLite}); err != nil {
		t.Fatal(err)
	}
	noLocks, _ := ForConn(conn, Params{})
	if _, err := noLocks.Dispatch(ctx, queuetest.DB(conn), Job{Command: report("7"), Unique: true}); !errors.Is(err, ErrInvalid) || rows() != 0 {
		t.Fatalf("a Unique job without Locks: %v, %d rows; want ErrInvalid and nothing queued", err, rows())
	}

	d, err := ForConn(conn, Params{Locks: conn})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Dispatch(ctx, queuetest.DB(conn), Job{Command: report("7"), Unique: true}); err != nil {
		t.Fatal(err)
	}
	owner, held, err := conn.CacheLockOwner(ctx, `laravel_unique_job:App\Jobs\BuildReport7`)
	if err != nil || !held || len(owner) != 16 {
		t.Fatalf("lock laravel_unique_job:App\\Jobs\\BuildReport7: owner %q held %v (%v)", owner, held, err)
	}
	if _, err := d.Dispatch(ctx, queuetest.DB(conn), Job{Command: report("7"), Unique: true}); !errors.Is(err, ErrDuplicate) || rows() != 1 {
		t.Fatalf("second dispatch: %v, %d rows; want ErrDuplicate and one row", err, rows())
	}
	if _, err := d.Dispatch(ctx, queuetest.DB(conn), Job{Command: report("7"), Unique: true, UniqueID: "8"}); err != nil || rows() != 2 {
		t.Fatalf("another unique id: %v, %d rows", err, rows())
	}
	if _, err := d.Dispatch(ctx, queuetest.DB(conn), Job{Command: report("7")}); err != nil || rows() != 3 {
		t.Fatalf("a dispatch that is not Unique: %v, %d rows", err, rows())
	}

	// A failed insert leaves the lock free.
	broken, err := New(Params{Dialect: laravel.SQLite, Table: "no_such_table", Locks: conn})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := broken.Dispatch(ctx, queuetest.DB(conn), Job{Command: report("9"), Unique: true}); err == nil {
		t.Fatal("dispatch into a missing table worked")
	}
	if _, held, _ := conn.CacheLockOwner(ctx, `laravel_unique_job:App\Jobs\BuildReport9`); held {
		t.Fatal("the lock of a job that was not queued is still held")
	}

	// 13.24+: the command carries the owner; the key has ":" before the id from 11.0.
	d13, err := ForConn(conn, Params{Locks: conn, LaravelVersion: "13.24"})
	if err != nil {
		t.Fatal(err)
	}
	// Without SerializesModels, so that the properties at their defaults show where uniqueLockOwner is.
	job, err := d13.Dispatch(ctx, queuetest.DB(conn), Job{Command: report("7"), Unique: true, UniqueFor: time.Minute, WithoutSerializesModels: true})
	if err != nil {
		t.Fatal(err)
	}
	owner, held, _ = conn.CacheLockOwner(ctx, `laravel_unique_job:App\Jobs\BuildReport:7`)
	env, _ := payload.ParseEnvelope(job.Payload)
	cmd, err := payload.DecodeCommand(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cmd.Get("uniqueLockOwner"); !held || v != owner {
		t.Fatalf("13.24: lock held %v by %q, the command's uniqueLockOwner %v", held, owner, v)
	}
	if i := slices.IndexFunc(cmd.Props, func(p payload.Property) bool { return p.Name == "uniqueLockOwner" }); cmd.Props[i+1].Name != "delay" {
		t.Errorf("13.24: uniqueLockOwner is not where Queueable declares it (before delay): %+v", cmd.Props)
	}
}

// TestUniqueDispatchInTransaction takes the lock of the database store on the queue's own connection
// in the caller's transaction, as PHP's DatabaseLock takes it on the connection a transaction is open
// on: a rollback gives it back with the row, and a duplicate refused inside a transaction leaves the
// transaction usable (on PostgreSQL a failed statement would have ended it).
func TestUniqueDispatchInTransaction(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		conn := openShop(t, db)
		d, err := ForConn(conn, Params{Locks: conn})
		if err != nil {
			t.Fatal(err)
		}
		report := payload.NewObject(`App\Jobs\BuildReport`).Set("uniqueId", "7")
		const key = `laravel_unique_job:App\Jobs\BuildReport7`
		rolledBack := errors.New("rolled back")
		err = conn.InTx(ctx, func(tx *sqlx.Tx) error {
			if _, err := d.Dispatch(ctx, tx, Job{Command: report, Unique: true}); err != nil {
				return err
			}
			return rolledBack
		})
		if !errors.Is(err, rolledBack) {
			t.Fatalf("dispatch in a transaction: %v", err)
		}
		if _, held, err := conn.CacheLockOwner(ctx, key); held || err != nil {
			t.Fatalf("after the rollback the lock is held (%v); want it gone with the row", err)
		}

		if _, err := d.Dispatch(ctx, nil, Job{Command: report, Unique: true}); err != nil {
			t.Fatalf("dispatch after the rollback: %v", err)
		}
		err = conn.InTx(ctx, func(tx *sqlx.Tx) error {
			if _, err := d.Dispatch(ctx, tx, Job{Command: report, Unique: true}); !errors.Is(err, ErrDuplicate) {
				t.Errorf("a duplicate in a transaction: %v, want ErrDuplicate", err)
			}
			_, err := d.Dispatch(ctx, tx, Job{Command: payload.NewObject(`App\Jobs\SendInvoice`)})
			return err
		})
		if err != nil {
			t.Fatalf("the transaction after a refused duplicate: %v", err)
		}
		var n int
		if err := queuetest.DB(conn).QueryRow("select count(*) from jobs").Scan(&n); err != nil || n != 2 {
			t.Fatalf("%d rows (%v), want the unique job and the one queued after the refused duplicate", n, err)
		}
	})
}

// openShop opens db with Laravel's tables and the cache prefix "shop_cache_".
func openShop(t *testing.T, db testenv.Database) *laravel.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := laravel.Open(ctx, laravel.OpenParams{Dialect: laravel.Dialect(db.Dialect), DSN: db.DSN, CachePrefix: "shop_cache_"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := laravel.CreateSchema(ctx, conn, laravel.SchemaParams{}); err != nil {
		t.Fatal(err)
	}
	return conn
}
