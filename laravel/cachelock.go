package laravel

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// CacheLockReleaseParams names a lock and the owner releasing it.
type CacheLockReleaseParams struct {
	Key   string // without the store's prefix
	Owner string
}

// CacheLockRelease deletes the lock only while p.Owner holds it, as DatabaseLock::release does, and
// reports whether it did.
func (c *Conn) CacheLockRelease(ctx context.Context, p *CacheLockReleaseParams) (bool, error) {
	return c.CacheLockReleaseIn(ctx, c.db, p)
}

// CacheLockReleaseIn is CacheLockRelease through ex, a handle on this Conn's database such as a
// transaction of the caller's (see CacheLockAcquireIn).
func (c *Conn) CacheLockReleaseIn(ctx context.Context, ex Execer, p *CacheLockReleaseParams) (bool, error) {
	q := c.rebind("delete from " + c.quote(c.tables.CacheLocks) + " where " + c.quote("key") + " = ? and " + c.quote("owner") + " = ?")
	res, err := ex.ExecContext(ctx, q, c.cachePrefix+p.Key, p.Owner)
	if err != nil {
		return false, fmt.Errorf("release cache lock %s: %w", p.Key, c.translate(err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// CacheAdd stores a PHP-serialized value under the prefixed key for ttl only when the key is absent or
// expired, as DatabaseStore::add does (an insert, then on a duplicate key an update of an expired
// row), and reports whether it stored it. A ttl below one second stores nothing, as Repository::add
// does.
func (c *Conn) CacheAdd(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	if ttl < time.Second {
		return false, nil
	}
	now := c.now()
	exp := now + int64(ttl/time.Second)
	_, err := c.db.ExecContext(ctx, c.insertSQL(c.tables.Cache, []string{"key", "value", "expiration"}), c.cachePrefix+key, c.d.encodeText(value), exp)
	if err = c.translate(err); !errors.Is(err, ErrDuplicate) {
		if err != nil {
			return false, fmt.Errorf("cache add %s: %w", key, err)
		}
		return true, nil
	}
	t, k, v, e := c.quote(c.tables.Cache), c.quote("key"), c.quote("value"), c.quote("expiration")
	upd := "update " + t + " set " + v + " = ?, " + e + " = ? where " + k + " = ? and " + e + " <= ?"
	res, err := c.db.ExecContext(ctx, c.rebind(upd), c.d.encodeText(value), exp, c.cachePrefix+key, now)
	if err != nil {
		return false, fmt.Errorf("cache add %s: %w", key, c.translate(err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// LockAcquire is CacheLockAcquire in the shape every cache store's locks share (seconds 0: a day).
func (c *Conn) LockAcquire(ctx context.Context, name, owner string, seconds int64) (bool, error) {
	return c.CacheLockAcquire(ctx, &CacheLockParams{Key: name, Owner: owner, TTL: time.Duration(seconds) * time.Second})
}

// LockRelease is CacheLockRelease in the shape every cache store's locks share.
func (c *Conn) LockRelease(ctx context.Context, name, owner string) (bool, error) {
	return c.CacheLockRelease(ctx, &CacheLockReleaseParams{Key: name, Owner: owner})
}

// LockAcquireIn is LockAcquire through ex, in the caller's transaction (see CacheLockAcquireIn).
func (c *Conn) LockAcquireIn(ctx context.Context, ex Execer, name, owner string, seconds int64) (bool, error) {
	return c.CacheLockAcquireIn(ctx, ex, &CacheLockParams{Key: name, Owner: owner, TTL: time.Duration(seconds) * time.Second})
}

// LockReleaseIn is LockRelease through ex, in the caller's transaction.
func (c *Conn) LockReleaseIn(ctx context.Context, ex Execer, name, owner string) (bool, error) {
	return c.CacheLockReleaseIn(ctx, ex, &CacheLockReleaseParams{Key: name, Owner: owner})
}

// NewLockOwner returns a random lock owner token as Laravel's Lock makes one (Str::random()): sixteen
// letters and digits.
func NewLockOwner() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var b [16]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}
