package laravel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

func TestCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		now := time.Unix(1700000000, 0)
		p := queuetest.OpenParams(db)
		p.Clock = func() time.Time { return now }
		c := openTables(t, p)
		stored := func(key string) (value string, expiration int64) {
			t.Helper()
			q := queuetest.Rebind(c, "select "+queuetest.Q(c, "value")+", "+queuetest.Q(c, "expiration")+" from "+queuetest.Q(c, c.Tables().Cache)+" where "+queuetest.Q(c, "key")+" = ?")
			if err := queuetest.DB(c).QueryRow(q, "laravel_cache"+key).Scan(&value, &expiration); err != nil {
				t.Fatalf("stored %s: %v", key, err)
			}
			return value, expiration
		}

		// queue:restart's signal, as RestartCommand writes it.
		if err := c.CacheForever(ctx, "illuminate:queue:restart", laravel.SerializeInt(1700000000)); err != nil {
			t.Fatal(err)
		}
		if v, exp := stored("illuminate:queue:restart"); v != "i:1700000000;" || exp != 1700000000+315360000 {
			t.Fatalf("forever stored %q expiring %d", v, exp)
		}
		if v, ok, err := c.CacheGet(ctx, "illuminate:queue:restart"); err != nil || !ok || v != "i:1700000000;" {
			t.Fatalf("get = %q, %v, %v", v, ok, err)
		}

		// maxExceptions' counter: put 0 for a day, then increment.
		if _, err := c.CacheIncrement(ctx, "job-exceptions:u1", 1); !errors.Is(err, laravel.ErrCacheMiss) {
			t.Fatalf("increment of a missing key: err = %v, want ErrCacheMiss", err)
		}
		if err := c.CachePut(ctx, "job-exceptions:u1", laravel.SerializeInt(0), 24*time.Hour); err != nil {
			t.Fatal(err)
		}
		for want := int64(1); want <= 3; want++ {
			n, err := c.CacheIncrement(ctx, "job-exceptions:u1", 1)
			if err != nil || n != want {
				t.Fatalf("increment = %d, %v; want %d", n, err, want)
			}
		}
		if v, exp := stored("job-exceptions:u1"); v != "i:3;" || exp != 1700000000+86400 {
			t.Fatalf("after increments stored %q expiring %d", v, exp)
		}

		// A string with NUL bytes: base64 on PostgreSQL, raw elsewhere; read back the same.
		val := laravel.SerializeString("a\x00*\x00b")
		if err := c.CachePut(ctx, "nul", val, time.Minute); err != nil {
			t.Fatal(err)
		}
		raw, _ := stored("nul")
		if (c.Dialect() == laravel.Postgres) == (raw == val) {
			t.Fatalf("stored %q on %s", raw, c.Dialect())
		}
		if v, ok, err := c.CacheGet(ctx, "nul"); err != nil || !ok || v != val {
			t.Fatalf("get nul = %q, %v, %v", v, ok, err)
		}
		if s, ok := laravel.UnserializeString(val); !ok || s != "a\x00*\x00b" {
			t.Fatalf("UnserializeString = %q, %v", s, ok)
		}

		// Expiry: expired at now >= expiration, and then deleted.
		if err := c.CachePut(ctx, "short", laravel.SerializeInt(1), 10*time.Second); err != nil {
			t.Fatal(err)
		}
		now = now.Add(9 * time.Second)
		if _, ok, _ := c.CacheGet(ctx, "short"); !ok {
			t.Fatal("entry missing a second before it expires")
		}
		now = now.Add(time.Second)
		if _, ok, err := c.CacheGet(ctx, "short"); ok || err != nil {
			t.Fatalf("expired entry: ok %v err %v", ok, err)
		}
		if err := c.CacheForget(ctx, "illuminate:queue:restart"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := c.CacheGet(ctx, "illuminate:queue:restart"); ok {
			t.Fatal("forgotten key still there")
		}

		// A ShouldBeUnique lock, as DatabaseLock::acquire writes it, force-released.
		lockKey := "laravel_unique_job:App\\Jobs\\Sync42"
		ins := queuetest.Rebind(c, "insert into "+queuetest.Q(c, c.Tables().CacheLocks)+" ("+queuetest.Q(c, "key")+", "+queuetest.Q(c, "owner")+", "+queuetest.Q(c, "expiration")+") values (?, ?, ?)")
		if _, err := queuetest.DB(c).Exec(ins, "laravel_cache"+lockKey, "owner-token", 1700086400); err != nil {
			t.Fatal(err)
		}
		if err := c.CacheLockForceRelease(ctx, lockKey); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := queuetest.DB(c).QueryRow("select count(*) from " + queuetest.Q(c, c.Tables().CacheLocks)).Scan(&n); err != nil || n != 0 {
			t.Fatalf("cache_locks rows after force release: %d, %v", n, err)
		}
	})
}

func TestUnserializeNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"i:42;", 42, true}, {"i:-3;", -3, true}, {"d:2.9;", 2, true}, {`s:2:"17";`, 17, true},
		{`s:3:"1e2";`, 100, true}, {`s:3:"abc";`, 0, false}, {"b:1;", 0, false}, {"N;", 0, false},
	} {
		got, ok := laravel.UnserializeNumber(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("UnserializeNumber(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
