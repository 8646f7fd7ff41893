package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// DefaultLockTimeout is how long a database cache lock taken for 0 seconds lasts: Laravel's
// DatabaseLock gives such a lock a day (lock_timeout, 86400 by default).
const DefaultLockTimeout = 86400

// CacheLockAcquireParams names a lock of the database cache store and who takes it.
type CacheLockAcquireParams struct {
	// Name is the lock's name without the cache prefix, e.g. "laravel-queue-overlap:App\Jobs\X:key".
	Name string
	// Owner is the random token that identifies the holder; the same owner may take its lock again.
	Owner string
	// Seconds is how long the lock lasts; 0 or less means DefaultLockTimeout.
	Seconds int64
}

// CacheLockAcquire takes a lock in the cache_locks table as DatabaseLock::acquire does: insert the row,
// or, when the key exists, take it over if this owner holds it or it has expired. It reports whether
// the lock is now held by p.Owner.
func (c *Conn) CacheLockAcquire(ctx context.Context, p CacheLockAcquireParams) (bool, error) {
	now := c.now()
	seconds := p.Seconds
	if seconds <= 0 {
		seconds = DefaultLockTimeout
	}
	key := c.cachePrefix + p.Name
	t, k, o, e := c.d.quote(c.tables.CacheLocks), c.d.quote("key"), c.d.quote("owner"), c.d.quote("expiration")
	inserted, err := c.insertIfAbsent(ctx, t, k, o, e, key, p.Owner, now+seconds)
	if err != nil || inserted {
		return inserted, wrapErr("acquire cache lock "+p.Name, err)
	}
	upd := "update " + t + " set " + o + " = ?, " + e + " = ? where " + k + " = ? and (" + o + " = ? or " + e + " <= ?)"
	res, err := c.db.ExecContext(ctx, c.d.rebind(upd), p.Owner, now+seconds, key, p.Owner, now)
	if err != nil {
		return false, fmt.Errorf("acquire cache lock %s: %w", p.Name, c.translate(err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// CacheLockReleaseParams names a lock and the owner releasing it.
type CacheLockReleaseParams struct {
	Name  string // without the cache prefix
	Owner string
}

// CacheLockRelease deletes the lock only while p.Owner holds it, as DatabaseLock::release does, and
// reports whether it did.
func (c *Conn) CacheLockRelease(ctx context.Context, p CacheLockReleaseParams) (bool, error) {
	q := c.d.rebind("delete from " + c.d.quote(c.tables.CacheLocks) + " where " + c.d.quote("key") + " = ? and " + c.d.quote("owner") + " = ?")
	res, err := c.db.ExecContext(ctx, q, c.cachePrefix+p.Name, p.Owner)
	if err != nil {
		return false, fmt.Errorf("release cache lock %s: %w", p.Name, c.translate(err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// CacheLockOwner returns the owner of a lock that has not expired ("" and false when there is none).
func (c *Conn) CacheLockOwner(ctx context.Context, name string) (string, bool, error) {
	q := c.d.rebind("select " + c.d.quote("owner") + " from " + c.d.quote(c.tables.CacheLocks) + " where " + c.d.quote("key") + " = ? and " + c.d.quote("expiration") + " > ?")
	var owner string
	err := c.db.QueryRowxContext(ctx, q, c.cachePrefix+name, c.now()).Scan(&owner)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("read cache lock %s: %w", name, c.translate(err))
	}
	return owner, true, nil
}

// CacheAdd stores a PHP-serialized value under the prefixed key for ttl only when the key is absent or
// expired, as DatabaseStore::add does, and reports whether it stored it. A ttl below one second stores
// nothing, as Repository::add does.
func (c *Conn) CacheAdd(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	if ttl < time.Second {
		return false, nil
	}
	now := c.now()
	exp := now + int64(ttl/time.Second)
	t, k, v, e := c.d.quote(c.tables.Cache), c.d.quote("key"), c.d.quote("value"), c.d.quote("expiration")
	inserted, err := c.insertIfAbsent(ctx, t, k, v, e, c.cachePrefix+key, c.d.encodeText(value), exp)
	if err != nil || inserted {
		return inserted, wrapErr("cache add "+key, err)
	}
	upd := "update " + t + " set " + v + " = ?, " + e + " = ? where " + k + " = ? and " + e + " <= ?"
	res, err := c.db.ExecContext(ctx, c.d.rebind(upd), c.d.encodeText(value), exp, c.cachePrefix+key, now)
	if err != nil {
		return false, fmt.Errorf("cache add %s: %w", key, c.translate(err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// insertIfAbsent inserts one row of three columns into table (all quoted) and reports false when
// the first column, the key, already exists, as Laravel's stores try an insert first.
func (c *Conn) insertIfAbsent(ctx context.Context, table, key, col2, col3 string, args ...any) (bool, error) {
	q := c.d.rebind("insert into " + table + " (" + key + ", " + col2 + ", " + col3 + ") values (?, ?, ?)")
	_, err := c.db.ExecContext(ctx, q, args...)
	if err == nil {
		return true, nil
	}
	if err = c.translate(err); errors.Is(err, ErrDuplicate) {
		return false, nil
	}
	return false, err
}

// wrapErr prefixes err with what failed; nil stays nil.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
