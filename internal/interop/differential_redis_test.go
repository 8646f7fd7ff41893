package interop

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/redislock"
)

// The differential suite's Redis rows: the app's cache store is Redis, so unique locks, exception
// counters, rate limiters and queue:restart's signal live there. Each copy has its own client prefix
// (REDIS_PREFIX); the keys under it are copied and compared as the tables are.

// redisDBs returns the side's cache store connections: the lock connection's database, then the
// cache connection's when it is another; none when the store is not Redis.
func (s *side) redisDBs() []*redislock.Locks {
	switch {
	case s.locks == nil:
		return nil
	case s.cache == s.locks:
		return []*redislock.Locks{s.locks}
	}
	return []*redislock.Locks{s.locks, s.cache}
}

// redisKeys returns the keys under the side's client prefix in one database, sorted.
func (s *side) redisKeys(t *testing.T, ctx context.Context, db *redislock.Locks) []string {
	t.Helper()
	v, err := db.Command(ctx, "KEYS", s.cfg.Cache.Redis.Prefix+"*")
	if err != nil {
		t.Fatalf("list Redis keys: %v", err)
	}
	var keys []string
	for _, k := range v.([]any) {
		keys = append(keys, k.(string))
	}
	slices.Sort(keys)
	return keys
}

// redisDo runs one command on the side's Redis and fails the test on an error.
func redisDo(t *testing.T, ctx context.Context, db *redislock.Locks, args ...string) any {
	t.Helper()
	v, err := db.Command(ctx, args...)
	if err != nil {
		t.Fatalf("Redis %s: %v", args[0], err)
	}
	return v
}

// clearRedis deletes the side's keys.
func (s *side) clearRedis(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, db := range s.redisDBs() {
		for _, k := range s.redisKeys(t, ctx, db) {
			redisDo(t, ctx, db, "DEL", k)
		}
	}
}

// copyRedis replaces the keys of to with those of from, values and expiries alike.
func copyRedis(t *testing.T, ctx context.Context, from, to *side) {
	t.Helper()
	to.clearRedis(t, ctx)
	dst := to.redisDBs()
	for i, db := range from.redisDBs() {
		for _, k := range from.redisKeys(t, ctx, db) {
			dump := redisDo(t, ctx, db, "DUMP", k)
			if dump == nil {
				continue // expired since it was listed
			}
			ttl := redisDo(t, ctx, db, "PTTL", k).(string)
			if strings.HasPrefix(ttl, "-") {
				ttl = "0" // no expiry
			}
			name := to.cfg.Cache.Redis.Prefix + strings.TrimPrefix(k, from.cfg.Cache.Redis.Prefix)
			redisDo(t, ctx, dst[i], "RESTORE", name, ttl, dump.(string), "REPLACE")
		}
	}
}

// redisSnapshot renders the side's keys, normalized: the client prefix cut off, a lock's owner and
// timestamps left out, and whether each key expires.
func (s *side) redisSnapshot(t *testing.T, ctx context.Context, n *normalizer) []string {
	t.Helper()
	var lines []string
	for _, db := range s.redisDBs() {
		where := "cache"
		if db == s.locks {
			where = "locks" // the lock connection: a lock's value is its owner, which differs
		}
		for _, k := range s.redisKeys(t, ctx, db) {
			name := n.text(strings.TrimPrefix(k, s.cfg.Cache.Redis.Prefix))
			expires := "forever"
			if ttl, _ := strconv.Atoi(redisDo(t, ctx, db, "PTTL", k).(string)); ttl >= 0 {
				expires = "expires"
			}
			var value string
			switch typ := redisDo(t, ctx, db, "TYPE", k).(string); typ {
			case "string":
				if where == "locks" {
					value = "owner"
					break
				}
				value = n.text(redisDo(t, ctx, db, "GET", k).(string))
				if strings.HasSuffix(name, "illuminate:queue:restart") || strings.HasSuffix(name, ":timer") {
					value = "time" // a timestamp: queue:restart's, or a rate limiter's timer
				}
			case "hash":
				fields := redisDo(t, ctx, db, "HGETALL", k).([]any)
				var pairs []string
				for i := 0; i+1 < len(fields); i += 2 {
					pairs = append(pairs, fmt.Sprintf("%s=%s", fields[i], fields[i+1]))
				}
				slices.Sort(pairs)
				value = "{" + strings.Join(pairs, " ") + "}"
			default:
				value = typ
			}
			lines = append(lines, fmt.Sprintf("%s %s = %s (%s)", where, name, value, expires))
		}
	}
	return lines
}
