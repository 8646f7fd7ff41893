package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jmoiron/sqlx"
)

// ErrCacheMiss means a cache key is absent (or expired) where the operation needs it, as Laravel's
// DatabaseStore::increment returns false for a missing key instead of creating it.
var ErrCacheMiss = errors.New("cache key not found")

// foreverSeconds is how far ahead DatabaseStore::forever sets the expiration: ten years.
const foreverSeconds = 315360000

// CacheGet returns the PHP-serialized value stored under the prefixed key, as Laravel's database cache
// store reads it: an expired entry is deleted and reported missing; on PostgreSQL a base64 value (one
// with neither ':' nor ';') is decoded.
func (c *Conn) CacheGet(ctx context.Context, key string) (string, bool, error) {
	var value string
	var expiration int64
	q := c.rebind("select " + c.quote("value") + ", " + c.quote("expiration") + " from " + c.quote(c.tables.Cache) + " where " + c.quote("key") + " = ?")
	err := c.db.QueryRowxContext(ctx, q, c.cachePrefix+key).Scan(&value, &expiration)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("cache get %s: %w", key, c.translate(err))
	}
	if c.now() >= expiration {
		return "", false, c.CacheForget(ctx, key)
	}
	return c.d.decodeText(value), true, nil
}

// CachePut stores a PHP-serialized value under the prefixed key for ttl (whole seconds), replacing any
// entry. A ttl below one second forgets the key, as Laravel's Repository::put does.
func (c *Conn) CachePut(ctx context.Context, key, value string, ttl time.Duration) error {
	if ttl < time.Second {
		return c.CacheForget(ctx, key)
	}
	return c.cachePut(ctx, key, value, int64(ttl/time.Second))
}

// CacheForever stores a PHP-serialized value under the prefixed key for ten years, as
// DatabaseStore::forever does (queue:restart writes illuminate:queue:restart this way).
func (c *Conn) CacheForever(ctx context.Context, key, value string) error {
	return c.cachePut(ctx, key, value, foreverSeconds)
}

func (c *Conn) cachePut(ctx context.Context, key, value string, seconds int64) error {
	q := c.d.upsertSQL(c.tables.Cache, "key", []string{"key", "value", "expiration"})
	if _, err := c.db.ExecContext(ctx, c.rebind(q), c.cachePrefix+key, c.d.encodeText(value), c.now()+seconds); err != nil {
		return fmt.Errorf("cache put %s: %w", key, c.translate(err))
	}
	return nil
}

// CacheIncrement adds by to the integer stored under the prefixed key and returns the new value, under
// a row lock in one transaction, storing the serialized int as DatabaseStore::increment does. A
// missing key gives ErrCacheMiss (Laravel returns false and stores nothing), a non-numeric value an
// error; the expiration is left as it was.
func (c *Conn) CacheIncrement(ctx context.Context, key string, by int64) (int64, error) {
	sel := c.rebind("select " + c.quote("value") + " from " + c.quote(c.tables.Cache) + " where " + c.quote("key") + " = ?" + c.forUpdate())
	upd := c.rebind("update " + c.quote(c.tables.Cache) + " set " + c.quote("value") + " = ? where " + c.quote("key") + " = ?")
	var n int64
	err := c.InTx(ctx, func(tx *sqlx.Tx) error {
		var raw string
		if err := tx.QueryRowxContext(ctx, sel, c.cachePrefix+key).Scan(&raw); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrCacheMiss
			}
			return err
		}
		cur, ok := UnserializeNumber(c.d.decodeText(raw))
		if !ok {
			return fmt.Errorf("%w: value %q is not a number", ErrInvalid, raw)
		}
		n = cur + by
		_, err := tx.ExecContext(ctx, upd, c.d.encodeText(SerializeInt(n)), c.cachePrefix+key)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("cache increment %s: %w", key, err)
	}
	return n, nil
}

// CacheCount counts one more under key as Laravel's worker counts a job's exceptions: when the key is
// absent it puts 0 for ttl first, then increments it, and returns the new count.
func (c *Conn) CacheCount(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	if _, ok, err := c.CacheGet(ctx, key); err != nil {
		return 0, err
	} else if !ok {
		if err := c.CachePut(ctx, key, SerializeInt(0), ttl); err != nil {
			return 0, err
		}
	}
	return c.CacheIncrement(ctx, key, 1)
}

// CacheForget deletes the prefixed key from the cache table.
func (c *Conn) CacheForget(ctx context.Context, key string) error {
	q := c.rebind("delete from " + c.quote(c.tables.Cache) + " where " + c.quote("key") + " = ?")
	if _, err := c.db.ExecContext(ctx, q, c.cachePrefix+key); err != nil {
		return fmt.Errorf("cache forget %s: %w", key, c.translate(err))
	}
	return nil
}

// CacheLockForceRelease deletes the prefixed key from the cache_locks table whoever owns it, as
// DatabaseLock::forceRelease does; it releases ShouldBeUnique locks (laravel_unique_job:...).
func (c *Conn) CacheLockForceRelease(ctx context.Context, key string) error {
	q := c.rebind("delete from " + c.quote(c.tables.CacheLocks) + " where " + c.quote("key") + " = ?")
	if _, err := c.db.ExecContext(ctx, q, c.cachePrefix+key); err != nil {
		return fmt.Errorf("release cache lock %s: %w", key, c.translate(err))
	}
	return nil
}

// CacheLockHeld reports whether the cache_locks table holds the prefixed key unexpired.
func (c *Conn) CacheLockHeld(ctx context.Context, key string) (bool, error) {
	q := c.rebind("select count(*) from " + c.quote(c.tables.CacheLocks) + " where " + c.quote("key") + " = ? and " + c.quote("expiration") + " > ?")
	var n int
	if err := c.db.QueryRowContext(ctx, q, c.cachePrefix+key, c.now()).Scan(&n); err != nil {
		return false, fmt.Errorf("read cache lock %s: %w", key, c.translate(err))
	}
	return n > 0, nil
}

// CacheLockParams is a cache lock to take, as Laravel's DatabaseLock holds one.
type CacheLockParams struct {
	Key   string        // without the store's prefix
	Owner string        // the holder's token
	TTL   time.Duration // whole seconds; 0 holds it for a day, as DatabaseLock does
}

// CacheLockAcquire takes the lock as DatabaseLock::acquire does: it inserts the row, or, when the key
// is taken, takes it over if this owner already holds it or it has expired. It reports whether the
// lock is now held by p.Owner.
func (c *Conn) CacheLockAcquire(ctx context.Context, p *CacheLockParams) (bool, error) {
	acquired, err := c.CacheLockAcquireIn(ctx, c.db, p)
	if err == nil && rand.IntN(lockLotteryOdds) < lockLotteryWins {
		// DatabaseLock::acquire's lottery (cache.stores.database.lock_lottery, [2, 100]): expired
		// locks left by workers that died holding them are deleted now and then. Outside a caller's
		// transaction only, where it would hold their rows' locks to its end.
		_, _ = c.db.ExecContext(ctx, c.rebind("delete from "+c.quote(c.tables.CacheLocks)+" where expiration <= ?"), c.now())
	}
	return acquired, err
}

// lockLotteryWins in lockLotteryOdds acquires prune the expired locks, as Laravel's default lottery.
const lockLotteryWins, lockLotteryOdds = 2, 100

// CacheLockAcquireIn is CacheLockAcquire through ex, a handle on this Conn's database such as a
// transaction of the caller's: the lock is then taken in that transaction, as PHP's database store
// takes it on the connection a transaction is open on, and it is gone if the transaction rolls back.
// A lock another transaction has just taken waits for that one to end. The transaction stays usable
// when the key is taken.
func (c *Conn) CacheLockAcquireIn(ctx context.Context, ex Execer, p *CacheLockParams) (bool, error) {
	now := c.now()
	expires := now + int64(p.TTL/time.Second)
	if p.TTL < time.Second {
		expires = now + 86400
	}
	key := c.cachePrefix + p.Key
	if q := c.d.lockTakeSQL(c.tables.CacheLocks); q != "" {
		res, err := ex.ExecContext(ctx, q, key, p.Owner, expires, now)
		if err != nil {
			return false, fmt.Errorf("acquire cache lock %s: %w", p.Key, c.translate(err))
		}
		n, err := res.RowsAffected()
		return n >= 1, err
	}
	_, err := ex.ExecContext(ctx, c.insertSQL(c.tables.CacheLocks, []string{"key", "owner", "expiration"}), key, p.Owner, expires)
	if err = c.translate(err); !errors.Is(err, ErrDuplicate) {
		if err != nil {
			return false, fmt.Errorf("acquire cache lock %s: %w", p.Key, err)
		}
		return true, nil
	}
	upd := c.rebind("update " + c.quote(c.tables.CacheLocks) + " set owner = ?, expiration = ? where " + c.quote("key") + " = ? and (owner = ? or expiration <= ?)")
	res, err := ex.ExecContext(ctx, upd, p.Owner, expires, key, p.Owner, now)
	if err != nil {
		return false, fmt.Errorf("acquire cache lock %s: %w", p.Key, c.translate(err))
	}
	n, err := res.RowsAffected()
	return n >= 1, err
}

// CacheLockOwner returns the owner of the lock under the prefixed key and whether the row exists, as
// DatabaseLock::getCurrentOwner reads it (an expired row still counts until it is taken over).
func (c *Conn) CacheLockOwner(ctx context.Context, key string) (string, bool, error) {
	var owner string
	q := c.rebind("select owner from " + c.quote(c.tables.CacheLocks) + " where " + c.quote("key") + " = ?")
	err := c.db.QueryRowContext(ctx, q, c.cachePrefix+key).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read cache lock %s: %w", key, c.translate(err))
	}
	return owner, true, nil
}
