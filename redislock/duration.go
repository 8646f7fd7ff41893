package redislock

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// The scripts below keep Laravel's DurationLimiter state (Illuminate\Redis\Limiters): a hash with the
// window's start and end (Unix seconds) and a count, expiring after twice the decay. They compare the
// time with the stored bounds as Lua compares strings, and return what Laravel's scripts return, so
// that PHP's and Go's workers count in one window.

// durationAcquireScript counts one attempt: a missing or past window starts a new one with a count
// of 1; otherwise the count grows, and the attempt is granted while it is within the maximum. It
// returns {granted, window end, remaining}.
const durationAcquireScript = `
local key, now, secs, decay, limit = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local function restart()
  redis.call('HMSET', key, 'start', secs, 'end', secs + decay, 'count', 1)
  return redis.call('EXPIRE', key, decay * 2)
end
if redis.call('EXISTS', key) == 1 and now >= redis.call('HGET', key, 'start') and now <= redis.call('HGET', key, 'end') then
  local count = tonumber(redis.call('HINCRBY', key, 'count', 1))
  return {count <= tonumber(limit), redis.call('HGET', key, 'end'), limit - redis.call('HGET', key, 'count')}
end
return {restart(), secs + decay, limit - 1}
`

// durationCheckScript reads the window without counting: {window end, remaining} inside it, and {0,
// now + decay} (Laravel's answer) outside.
const durationCheckScript = `
local key, now, secs, decay, limit = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', key) == 1 and now >= redis.call('HGET', key, 'start') and now <= redis.call('HGET', key, 'end') then
  return {redis.call('HGET', key, 'end'), limit - redis.call('HGET', key, 'count')}
end
return {0, secs + decay}
`

// DurationWindow is what a DurationLimiter answered: whether an attempt was granted, when the window
// ends (Unix seconds) and how many attempts remain in it.
type DurationWindow struct {
	Granted   bool
	DecaysAt  int64
	Remaining int64
}

func (l *Locks) duration(ctx context.Context, script, name string, limit int64, decay int64, now time.Time) ([]any, error) {
	micro := strconv.FormatFloat(float64(now.UnixMicro())/1e6, 'f', 4, 64)
	v, err := l.commandAny(ctx, "EVAL", script, "1", l.p.ClientPrefix+name, micro,
		strconv.FormatInt(now.Unix(), 10), strconv.FormatInt(decay, 10), strconv.FormatInt(limit, 10))
	if err != nil {
		return nil, fmt.Errorf("Redis duration limiter %s: %w", name, err)
	}
	a, ok := v.([]any)
	if !ok || len(a) < 2 {
		return nil, fmt.Errorf("Redis duration limiter %s: unexpected reply %v", name, v)
	}
	return a, nil
}

// DurationAcquire is DurationLimiter::acquire on the key name (after the Redis client prefix): it
// counts one attempt against limit per decay seconds.
func (l *Locks) DurationAcquire(ctx context.Context, name string, limit, decay int64, now time.Time) (DurationWindow, error) {
	a, err := l.duration(ctx, durationAcquireScript, name, limit, decay, now)
	if err != nil || len(a) < 3 {
		return DurationWindow{}, err
	}
	return DurationWindow{Granted: replyInt(a[0]) != 0, DecaysAt: replyInt(a[1]), Remaining: max(0, replyInt(a[2]))}, nil
}

// DurationTooMany is DurationLimiter::tooManyAttempts: whether the window has no attempt left, without
// counting one.
func (l *Locks) DurationTooMany(ctx context.Context, name string, limit, decay int64, now time.Time) (DurationWindow, error) {
	a, err := l.duration(ctx, durationCheckScript, name, limit, decay, now)
	if err != nil {
		return DurationWindow{}, err
	}
	w := DurationWindow{DecaysAt: replyInt(a[0]), Remaining: replyInt(a[1])}
	w.Granted = w.Remaining > 0
	return w, nil
}

// DurationClear is DurationLimiter::clear: the window is forgotten.
func (l *Locks) DurationClear(ctx context.Context, name string) error {
	if _, err := l.command(ctx, "DEL", l.p.ClientPrefix+name); err != nil {
		return fmt.Errorf("clear Redis duration limiter %s: %w", name, err)
	}
	return nil
}

// replyInt reads an integer reply element as PHP's (int) would; nil (Lua false) is 0.
func replyInt(v any) int64 {
	s, _ := v.(string)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	f, _ := strconv.ParseFloat(s, 64)
	return int64(f)
}
