package worker

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/redislock"
	"github.com/zeebo/xxh3"
)

// Job middleware classes of Laravel the worker applies itself. Laravel serializes a job's middleware
// property (set with through() or in the constructor) into the command; what a middleware() method
// returns is not in the payload and cannot be seen.
const (
	withoutOverlappingClass  = `Illuminate\Queue\Middleware\WithoutOverlapping`
	throttlesExceptionsClass = `Illuminate\Queue\Middleware\ThrottlesExceptions`
	rateLimitedClass         = `Illuminate\Queue\Middleware\RateLimited`
	// The *WithRedis variants count in a Redis DurationLimiter on the Redis facade's connection.
	throttlesExceptionsRedisClass = `Illuminate\Queue\Middleware\ThrottlesExceptionsWithRedis`
	rateLimitedRedisClass         = `Illuminate\Queue\Middleware\RateLimitedWithRedis`
	// Skip (11.23+), SkipIfBatchCancelled (9.49+) and Release (13.18.1+) need no cache store.
	skipClass                 = `Illuminate\Queue\Middleware\Skip`
	skipIfBatchCancelledClass = `Illuminate\Queue\Middleware\SkipIfBatchCancelled`
	releaseClass              = `Illuminate\Queue\Middleware\Release`
)

// uncached are the middleware that keep nothing in the cache store.
var uncached = map[string]bool{skipClass: true, skipIfBatchCancelledClass: true, releaseClass: true}

// DurationLimiter is Laravel's Redis DurationLimiter on the Redis facade's default connection, which
// ThrottlesExceptionsWithRedis and RateLimitedWithRedis use; redislock is one.
type DurationLimiter interface {
	DurationAcquire(ctx context.Context, name string, limit, decay int64, now time.Time) (redislock.DurationWindow, error)
	DurationTooMany(ctx context.Context, name string, limit, decay int64, now time.Time) (redislock.DurationWindow, error)
	DurationClear(ctx context.Context, name string) error
}

// RateLimit is one limit of a rate limiter that a PHP application defines with RateLimiter::for, read
// from the configuration because the limiter itself is a PHP closure: Allow attempts per Per, counted
// apart for each value of By.
type RateLimit struct {
	Allow int           // Limit's maxAttempts
	Per   time.Duration // Limit's decay, whole seconds
	// By is the Limit's key, with {property} replaced by the job's property of that name, e.g.
	// "{userId}"; "" is Laravel's default key.
	By string
}

// middleware is one job middleware: before runs ahead of the handler and may stop the job (it then
// releases it through hj, or lets it succeed without running); after runs once the handler returned
// and may turn its error into a release. Both run only when the handler's attempt went ahead.
type middleware interface {
	before(ctx context.Context, w *Worker, r *jobRun) (stop bool, err error)
	after(ctx context.Context, w *Worker, r *jobRun, herr error, timedOut bool) error
}

// gater is a middleware whose jobs wait for each other inside the worker before they start (before the
// Processing line): the jobs of one PHP worker never run at once, and a worker running many must not
// let them meet where PHP's would not. gate returns the function that lets the next one go, or ok
// false when the worker is stopping (or ctx is done) before the job's turn came.
type gater interface {
	gate(ctx context.Context, w *Worker, r *jobRun) (leave func(), ok bool)
	// gateKey orders the gates every job passes, so that two jobs never wait for each other's.
	gateKey() string
}

// passGates passes the job through the gates of its middleware in order, and returns the function
// that leaves them all; ok false when it must be handed back untouched instead.
func (w *Worker) passGates(ctx context.Context, r *jobRun, mws []middleware) (leave func(), ok bool) {
	var gates []gater
	for _, m := range mws {
		if g, is := m.(gater); is {
			gates = append(gates, g)
		}
	}
	if len(gates) == 0 {
		w.passedPreGate(r.rj)
		return noGates, true
	}
	select {
	case <-r.rj.stopping: // stopped before the job got to its gates: it does not start
		return nil, false
	default:
	}
	if !w.waitClaimedBefore(ctx, r.rj) {
		return nil, false
	}
	var leaves []func()
	leave = func() {
		for i := len(leaves) - 1; i >= 0; i-- {
			leaves[i]()
		}
	}
	slices.SortFunc(gates, func(a, b gater) int { return strings.Compare(a.gateKey(), b.gateKey()) })
	for _, g := range gates {
		l, ok := g.gate(ctx, w, r)
		if !ok {
			leave()
			return nil, false
		}
		leaves = append(leaves, l)
	}
	w.passedPreGate(r.rj)
	return leave, true
}

// noGates leaves the gates of a job that had none.
func noGates() {}

// XXH128 returns PHP's hash('xxh128', s): 32 lowercase hex digits of the 128-bit hash, high half first.
// Laravel 12 hashes rate limiter keys with it, and 12.54 the displayName in lock keys.
func XXH128(s string) string {
	b := xxh3.HashString128(s).Bytes()
	return hex.EncodeToString(b[:])
}

// jobName is the class segment of a middleware key: the job's displayName() from 12.41 when the class
// defines one (hashed with xxh128 from 12.54 when hash is set), else its class.
func (w *Worker) jobName(r *jobRun, hash bool) string {
	defines := r.env.DisplayName != "" && r.env.DisplayName != r.env.CommandName
	if !defines || !w.version.AtLeast(12, 41) {
		return r.class
	}
	if hash && w.version.AtLeast(12, 54) {
		return XXH128(r.env.DisplayName)
	}
	return r.env.DisplayName
}

// readMiddleware reads the command's middleware property. It returns the middleware to apply, or a
// reason to leave the job to PHP: a middleware the worker does not know (unless the job's class is
// configured to run without them), one holding a PHP closure, or a rate limiter without configured
// limits. A job is never run without the middleware its author asked for.
func (w *Worker) readMiddleware(r *jobRun) ([]middleware, string) {
	if r.cmd == nil {
		return nil, ""
	}
	var out []middleware
	cached := false // a middleware that keeps its state in the cache store
	if d := w.newDebounce(r); d != nil {
		out, cached = append(out, d), true
	}
	v, _ := r.cmd.Get("middleware")
	list, _ := v.(*payload.Array)
	if list == nil {
		list = payload.NewList()
	}
	for _, e := range list.Values() {
		o, ok := e.(*payload.Object)
		if !ok {
			return nil, fmt.Sprintf("its middleware property holds a %T", e)
		}
		if !knownMiddleware[o.Class] {
			if w.cfg.RunUnknownMiddleware[r.class] {
				continue
			}
			return nil, "unknown middleware " + o.Class + " (only PHP can apply it)"
		}
		m, why := w.newMiddleware(r, o)
		if why != "" {
			return nil, why
		}
		out = append(out, m)
		cached = cached || !uncached[o.Class]
	}
	if (w.mwLocks == nil || w.mwValues == nil) && cached {
		return nil, "its middleware needs the cache store, which artisan-go cannot reach (cache store not database, redis, file or memcached)"
	}
	return out, ""
}

// knownMiddleware are the middleware classes the worker applies.
var knownMiddleware = map[string]bool{
	withoutOverlappingClass: true, throttlesExceptionsClass: true, rateLimitedClass: true,
	throttlesExceptionsRedisClass: true, rateLimitedRedisClass: true,
	skipClass: true, skipIfBatchCancelledClass: true, releaseClass: true,
}

// newMiddleware builds one known middleware from its serialized object, or says why it cannot run here.
func (w *Worker) newMiddleware(r *jobRun, o *payload.Object) (middleware, string) {
	for _, p := range o.Props {
		if c, ok := p.Value.(*payload.Object); ok {
			return nil, fmt.Sprintf("middleware %s holds a PHP closure or object (%s %s)", o.Class, p.Name, c.Class)
		}
	}
	switch o.Class {
	case withoutOverlappingClass:
		return w.newWithoutOverlapping(r, o)
	case skipClass:
		v, _ := o.Get("skip")
		return skip{skip: !phpFalsy(v)}, ""
	case skipIfBatchCancelledClass:
		return skipIfBatchCancelled{}, ""
	case releaseClass:
		v, _ := o.Get("release")
		after, _ := o.Get("releaseAfter")
		return release{release: !phpFalsy(v), delay: payload.IntCast(after)}, ""
	}
	withRedis := o.Class == throttlesExceptionsRedisClass || o.Class == rateLimitedRedisClass
	if withRedis {
		if w.durations == nil {
			return nil, o.Class + " counts in Redis, which artisan-go reaches only when Redis is the cache store"
		}
		if c, _ := o.Get("connectionName"); c != nil {
			return nil, o.Class + " names its own Redis connection"
		}
	}
	if o.Class == rateLimitedClass || o.Class == rateLimitedRedisClass {
		return w.newRateLimited(r, o, withRedis)
	}
	return w.newThrottlesExceptions(r, o, withRedis)
}

// withoutOverlapping is Laravel's WithoutOverlapping: the handler runs only while this worker holds
// the cache lock prefix+job name+":"+key; otherwise the job is released after releaseAfter seconds,
// or with dontRelease it succeeds without running.
type withoutOverlapping struct {
	name         string
	owner        string
	releaseAfter int64
	dontRelease  bool
	expiresAfter int64
	held         bool
	taken        bool // its gate found the lock held in this worker and too many waiting for it
}

func (w *Worker) newWithoutOverlapping(r *jobRun, o *payload.Object) (middleware, string) {
	m := &withoutOverlapping{owner: laravel.NewLockOwner()}
	key, _ := o.Get("key")
	prefix, ok := o.Get("prefix")
	if !ok {
		prefix = "laravel-queue-overlap:"
	}
	shared, _ := o.Get("shareKey")
	if phpFalsy(shared) {
		m.name = phpString(prefix) + w.jobName(r, true) + ":" + phpString(key)
	} else {
		m.name = phpString(prefix) + phpString(key)
	}
	switch ra, _ := o.Get("releaseAfter"); ra := ra.(type) {
	case nil:
		m.dontRelease = true
	case int64:
		m.releaseAfter = ra
	case float64: // release(2.5): PHP's delay ends in the whole second it reaches
		m.releaseAfter = phpSeconds(ra, 1)
	default:
		return nil, fmt.Sprintf("WithoutOverlapping releaseAfter is a %T", ra)
	}
	exp, _ := o.Get("expiresAfter")
	m.expiresAfter = payload.IntCast(exp)
	return m, ""
}

// gate waits, before the job starts, for the jobs of this worker that hold the lock or wait for it
// with a lower id, as one PHP worker runs them one after another: releasing would spend an attempt of
// every job behind the holder, and fail them with many in flight. No more than a quarter of the slots
// wait for one lock, so that a key with a long backlog does not hold every slot from the other jobs:
// a job beyond that is released (or, with dontRelease, deleted) as one that finds the lock taken, as
// under PHP workers that meet on it.
func (m *withoutOverlapping) gate(ctx context.Context, w *Worker, r *jobRun) (func(), bool) {
	leave, ok, full, waited := w.overlapWaits.take(ctx, r.rj.stopping, m.name, r.rj.ticket, maxOverlapWaiting(cap(w.slots)), func() { w.passedPreGate(r.rj) })
	if full {
		m.taken = true // a job of this worker holds the lock: before releases this one
		return noGates, true
	}
	if ok && waited && w.stoppedMeanwhile(ctx, r.rj) {
		leave()
		return nil, false
	}
	return leave, ok
}

// maxOverlapWaiting is how many jobs of a worker with slots slots wait for one overlap lock.
func maxOverlapWaiting(slots int) int { return max(slots/4, 1) }

func (m *withoutOverlapping) gateKey() string { return "1 " + m.name }

func (m *withoutOverlapping) before(ctx context.Context, w *Worker, r *jobRun) (bool, error) {
	ok := false
	if !m.taken {
		var err error
		if ok, err = w.mwLocks.LockAcquire(ctx, m.name, m.owner, m.expiresAfter); err != nil {
			return true, err
		}
	}
	if ok {
		m.held = true
		return false, nil
	}
	if !m.dontRelease {
		r.hj.Release(time.Duration(m.releaseAfter) * time.Second)
	}
	w.log.Info("Overlapping job not run", "class", r.displayName, "id", r.rj.job.ID, "lock", m.name, "released", !m.dontRelease)
	return true, nil
}

func (m *withoutOverlapping) after(ctx context.Context, w *Worker, r *jobRun, herr error, _ bool) error {
	if m.held {
		// Released even when the stop cancelled the job: the lock would otherwise hold every job of its
		// key back until it expires.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), completionTimeout)
		defer cancel()
		if _, err := w.mwLocks.LockRelease(ctx, m.name, m.owner); err != nil {
			w.log.Error("release overlap lock", "lock", m.name, "error", err)
		}
	}
	return herr
}

// skip is Laravel's Skip (11.23+): Skip::when or Skip::unless decided at dispatch whether the job
// runs, and kept the answer in the middleware. A skipped job succeeds without running, as any job
// whose middleware does not call the next one: its chain goes on, its batch counts it, it is deleted.
type skip struct{ skip bool }

func (m skip) before(_ context.Context, w *Worker, r *jobRun) (bool, error) {
	if m.skip {
		w.log.Info("Skipped job not run", "class", r.displayName, "id", r.rj.job.ID)
	}
	return m.skip, nil
}

func (skip) after(_ context.Context, _ *Worker, _ *jobRun, herr error, _ bool) error { return herr }

// release is Laravel's Release (13.18.1+): Release::when or Release::unless decided at dispatch
// whether the job goes back on its queue, after releaseAfter seconds, instead of running; the attempt
// counts, as for any release.
type release struct {
	release bool
	delay   int64 // releaseAfter
}

func (m release) before(_ context.Context, w *Worker, r *jobRun) (bool, error) {
	if !m.release {
		return false, nil
	}
	r.hj.Release(time.Duration(m.delay) * time.Second)
	w.log.Info("Job released by its middleware", "class", r.displayName, "id", r.rj.job.ID, "delay", m.delay)
	return true, nil
}

func (release) after(_ context.Context, _ *Worker, _ *jobRun, herr error, _ bool) error { return herr }

// skipIfBatchCancelled is Laravel's SkipIfBatchCancelled (9.49+): a job whose batch was cancelled
// succeeds without running, as skip does. A job in no batch, or whose batch is gone, runs; an error
// reading the batch is the job's exception, as PHP's query throwing is.
type skipIfBatchCancelled struct{}

func (skipIfBatchCancelled) before(ctx context.Context, w *Worker, r *jobRun) (bool, error) {
	id := batchID(r)
	if id == "" {
		return false, nil
	}
	b, err := batchStore{w}.Find(ctx, id)
	if err != nil {
		return true, err
	}
	if b == nil || !b.Cancelled() {
		return false, nil
	}
	w.log.Info("Job of a cancelled batch not run", "class", r.displayName, "id", r.rj.job.ID, "batch", id)
	return true, nil
}

func (skipIfBatchCancelled) after(_ context.Context, _ *Worker, _ *jobRun, herr error, _ bool) error {
	return herr
}

// throttlesExceptions is Laravel's ThrottlesExceptions: after maxAttempts exceptions within the decay
// the job is released until the limiter's timer runs out (plus 3 seconds); an exception is counted
// and the job released after retryAfterMinutes instead of failing; a success clears the count.
type throttlesExceptions struct {
	key         string
	maxAttempts int64
	decay       int64 // seconds
	retryAfter  int64 // seconds
	limiter     *rateLimiter
	durations   DurationLimiter // ThrottlesExceptionsWithRedis: the window lives in Redis
}

func (w *Worker) newThrottlesExceptions(r *jobRun, o *payload.Object, withRedis bool) (middleware, string) {
	for _, closure := range []string{"whenCallback", "reportCallback"} {
		if v, _ := o.Get(closure); v != nil {
			return nil, "ThrottlesExceptions has a " + closure + " (a PHP closure)"
		}
	}
	for _, closures := range []string{"deleteWhenCallbacks", "failWhenCallbacks"} {
		if v, _ := o.Get(closures); !phpFalsy(v) {
			return nil, "ThrottlesExceptions has " + closures + " (PHP closures)"
		}
	}
	m := &throttlesExceptions{limiter: w.rateLimiter()}
	if withRedis {
		m.durations = w.durations
	}
	get := func(name string) payload.Value { v, _ := o.Get(name); return v }
	prefix, ok := o.Get("prefix")
	if !ok {
		prefix = "laravel_throttles_exceptions:"
	}
	switch {
	case !phpFalsy(get("key")):
		m.key = phpString(prefix) + phpString(get("key"))
	case !phpFalsy(get("byJob")):
		m.key = phpString(prefix) + r.env.UUID
	case w.version.AtLeast(12, 0):
		m.key = phpString(prefix) + XXH128(w.jobName(r, false))
	default:
		sum := md5.Sum([]byte(r.class))
		m.key = phpString(prefix) + hex.EncodeToString(sum[:])
	}
	m.maxAttempts = payload.IntCast(get("maxAttempts"))
	if v, ok := o.Get("decaySeconds"); ok { // 11.0+
		m.decay = phpSeconds(v, 1)
	} else {
		m.decay = phpSeconds(get("decayMinutes"), 60)
	}
	m.retryAfter = phpSeconds(get("retryAfterMinutes"), 60)
	return m, ""
}

// phpSeconds is the whole seconds PHP makes of v × unit, where v may be a fraction
// (`new ThrottlesExceptions(2, 0.5)` decays after 30 s; its backoff(0.25) releases for 15 s): the
// product taken as a cache TTL or a release delay, whole seconds, bounded at ±2^31.
func phpSeconds(v payload.Value, unit float64) int64 {
	return int64(max(min(payload.FloatCast(v)*unit, 1<<31), -(1 << 31)))
}

// gate lets no more jobs of this worker run under the key at once than exceptions are left before the
// limiter stops them (maxAttempts less those counted), waiting before the job starts for one of them to
// end: with many in flight, every job claimed would otherwise run before the first exception is
// counted, each spend an attempt, and fail where PHP's workers, one job each, stop after maxAttempts.
func (m *throttlesExceptions) gate(ctx context.Context, w *Worker, r *jobRun) (func(), bool) {
	waited := false
	for {
		var left int64
		var err error
		ended := w.throttleRuns.endedSoFar(m.key) // before the limit is read (see keyLimits.enter)
		if m.durations != nil {
			var win redislock.DurationWindow
			win, err = m.durations.DurationTooMany(ctx, m.key, m.maxAttempts, m.decay, w.clock())
			left = win.Remaining
		} else {
			left, err = m.limiter.remaining(ctx, m.key, m.maxAttempts)
		}
		if err != nil || left <= 0 {
			w.throttleRuns.giveUp(m.key, r.rj.ticket)
			w.passedPreGate(r.rj)
			return noGates, true // before reports the error, or releases the throttled job
		}
		leave, changed := w.throttleRuns.enter(m.key, left, r.rj.ticket, ended)
		w.passedPreGate(r.rj) // running, or in line
		if leave != nil {
			if waited && w.stoppedMeanwhile(ctx, r.rj) {
				leave()
				return nil, false
			}
			return leave, true
		}
		waited = true
		select {
		case <-changed:
		case <-ctx.Done():
			w.throttleRuns.giveUp(m.key, r.rj.ticket)
			return nil, false
		case <-r.rj.stopping:
			w.throttleRuns.giveUp(m.key, r.rj.ticket)
			return nil, false
		}
	}
}

func (m *throttlesExceptions) gateKey() string { return "2 " + m.key }

func (m *throttlesExceptions) before(ctx context.Context, w *Worker, r *jobRun) (bool, error) {
	if m.durations != nil {
		now := w.clock()
		win, err := m.durations.DurationTooMany(ctx, m.key, m.maxAttempts, m.decay, now)
		if err != nil || win.Remaining > 0 {
			return err != nil, err
		}
		r.hj.Release(time.Duration(win.DecaysAt-now.Unix()) * time.Second)
		w.log.Info("Exceptions throttled; job released", "class", r.displayName, "id", r.rj.job.ID, "key", m.key, "delay", win.DecaysAt-now.Unix())
		return true, nil
	}
	too, err := m.limiter.tooManyAttempts(ctx, m.key, m.maxAttempts)
	if err != nil || !too {
		return err != nil, err
	}
	in, err := m.limiter.availableIn(ctx, m.key)
	if err != nil {
		return true, err
	}
	r.hj.Release(time.Duration(in+3) * time.Second)
	w.log.Info("Exceptions throttled; job released", "class", r.displayName, "id", r.rj.job.ID, "key", m.key, "delay", in+3)
	return true, nil
}

func (m *throttlesExceptions) after(ctx context.Context, w *Worker, r *jobRun, herr error, timedOut bool) error {
	if r.notRun {
		return herr
	}
	if timedOut {
		return herr // PHP's worker is killed at its timeout, and the limiter sees nothing
	}
	if m.durations == nil {
		// RateLimiter::hit is an add, an increment and maybe a put: two jobs of this worker counting at
		// once could lose one exception (as two PHP workers can), so they count in turn.
		mu := w.limiterTurns.turn(m.key)
		mu.Lock()
		defer mu.Unlock()
	}
	switch {
	case herr == nil && m.durations != nil:
		return m.durations.DurationClear(ctx, m.key)
	case herr == nil:
		return m.limiter.clear(ctx, m.key)
	case m.durations != nil:
		if _, err := m.durations.DurationAcquire(ctx, m.key, m.maxAttempts, m.decay, w.clock()); err != nil {
			return err
		}
	default:
		if err := m.limiter.hit(ctx, m.key, m.decay); err != nil {
			return err
		}
	}
	w.log.Warn("Exception throttled; job released", "class", r.displayName, "id", r.rj.job.ID, "error", herr.Error(), "delay", m.retryAfter)
	r.hj.Release(time.Duration(m.retryAfter) * time.Second)
	return nil
}

// rateLimited is Laravel's RateLimited with the limits of the named limiter taken from the
// configuration: each limit over its allowance releases the job until its timer runs out (plus 3
// seconds), or releaseAfter (12.x), or with dontRelease lets it succeed without running; otherwise
// every limit counts one hit and the handler runs.
type rateLimited struct {
	limits        []RateLimit
	keys          []string
	shouldRelease bool
	releaseAfter  int64
	limiter       *rateLimiter
	durations     DurationLimiter // RateLimitedWithRedis: each limit is a window in Redis
	leaveTurn     func()          // lets the next job of this worker count against the limits
}

// gate waits for this job's turn to count against its limits, in the order the jobs were claimed, as
// one PHP worker counts them: with many in flight, the jobs the limiter lets through are then the first
// ones, not whichever got there first. The turn is given up once before has counted.
func (m *rateLimited) gate(ctx context.Context, w *Worker, r *jobRun) (func(), bool) {
	leave, ok, full, _ := w.limiterWaits.take(ctx, r.rj.stopping, m.gateKey(), r.rj.ticket, cap(w.slots), func() { w.passedPreGate(r.rj) })
	if !ok {
		return nil, false
	}
	if full { // not reached: fewer jobs than slots can wait
		return noGates, true
	}
	var once sync.Once
	m.leaveTurn = func() { once.Do(leave) }
	return m.leaveTurn, true
}

func (m *rateLimited) gateKey() string { return "3 " + strings.Join(m.keys, "\x00") }

func (w *Worker) newRateLimited(r *jobRun, o *payload.Object, withRedis bool) (middleware, string) {
	nv, _ := o.Get("limiterName")
	name := phpString(nv)
	limits, ok := w.cfg.RateLimiters[name]
	if !ok || len(limits) == 0 {
		if _, warned := w.limiterWarned.LoadOrStore(name, true); !warned {
			w.log.Warn("rate limiter has no limits in the configuration; its jobs are left to PHP workers. Add it under rate_limiters", "limiter", name)
		}
		return nil, "rate limiter " + strconv.Quote(name) + " has no configured limits"
	}
	m := &rateLimited{limits: limits, shouldRelease: true, limiter: w.rateLimiter()}
	if withRedis {
		m.durations = w.durations
	}
	if v, ok := o.Get("shouldRelease"); ok {
		m.shouldRelease = !phpFalsy(v)
	}
	ra, _ := o.Get("releaseAfter")
	m.releaseAfter = payload.IntCast(ra)
	for _, l := range limits {
		sum := md5.Sum([]byte(name + limitKey(l.By, r.cmd)))
		m.keys = append(m.keys, hex.EncodeToString(sum[:]))
	}
	return m, ""
}

// limitKey fills a limit's By template with the command's properties.
func limitKey(tmpl string, cmd *payload.Object) string {
	if !strings.Contains(tmpl, "{") {
		return tmpl
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		j := strings.IndexByte(tmpl[i+1:], '}')
		if i < 0 || j < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		v, _ := cmd.Get(tmpl[i+1 : i+1+j])
		b.WriteString(phpString(v))
		tmpl = tmpl[i+j+2:]
	}
}

func (m *rateLimited) before(ctx context.Context, w *Worker, r *jobRun) (bool, error) {
	if m.leaveTurn != nil {
		defer m.leaveTurn()
	}
	for i, l := range m.limits {
		limited, until, err := m.take(ctx, w, m.keys[i], l)
		if err != nil {
			return true, err
		}
		if !limited {
			continue
		}
		delay := m.releaseAfter
		if delay == 0 {
			delay = until - w.clock().Unix() + 3
		}
		if m.shouldRelease {
			r.hj.Release(time.Duration(delay) * time.Second)
		}
		w.log.Info("Rate limited", "class", r.displayName, "id", r.rj.job.ID, "released", m.shouldRelease, "delay", delay)
		return true, nil
	}
	return false, nil
}

// take counts one job against a limit and reports whether it is over it, and until when: RateLimiter's
// tooManyAttempts then hit, or with Redis one DurationLimiter::acquire.
func (m *rateLimited) take(ctx context.Context, w *Worker, key string, l RateLimit) (limited bool, until int64, err error) {
	decay := int64(l.Per / time.Second)
	if m.durations != nil {
		win, err := m.durations.DurationAcquire(ctx, key, int64(l.Allow), decay, w.clock())
		return !win.Granted, win.DecaysAt, err
	}
	// The check and the hit are two operations on the store, as in PHP, where one worker runs one job
	// at a time: jobs running here at once take them in turn per key, or each could pass the check
	// before any hit.
	mu := w.limiterTurns.turn(key)
	mu.Lock()
	defer mu.Unlock()
	too, err := m.limiter.tooManyAttempts(ctx, key, int64(l.Allow))
	if err != nil || !too {
		if err == nil {
			err = m.limiter.hit(ctx, key, decay)
		}
		return false, 0, err
	}
	in, err := m.limiter.availableIn(ctx, key)
	return true, w.clock().Unix() + in, err
}

func (m *rateLimited) after(_ context.Context, _ *Worker, _ *jobRun, herr error, _ bool) error {
	return herr
}

// throughMiddleware runs the handler (invoke) through the job's middleware as Laravel's pipeline
// does: each middleware's before in order, the handler, then each after in reverse order. A
// middleware that stops the job skips the handler and the middleware after it; an error from the
// cache store is the job's exception, as it is in PHP.
//
// A ShouldBeUniqueUntilProcessing job's lock is released as processing starts: before the middleware
// up to 11.39; from 11.40 just before the handler, so that a middleware that stops the job leaves the
// lock until it expires; from 12.21 also once the middleware stopped the job without releasing it.
func (w *Worker) throughMiddleware(ctx context.Context, r *jobRun, mws []middleware, invoke func() (error, bool)) (herr error, timedOut bool) {
	unique := untilProcessing(r.h) && w.releasesUntilProcessing(r)
	inPipeline := w.version.AtLeast(11, 40)
	if unique && !inPipeline {
		w.releaseUniqueLock(ctx, r)
	}
	ran := 0
	for _, m := range mws {
		stop, err := m.before(ctx, w, r)
		if err != nil {
			herr = fmt.Errorf("job middleware: %w", err)
		}
		if stop || err != nil {
			break
		}
		ran++
	}
	if ran == len(mws) && !w.begin(r.rj) {
		// Handed back at shutdown while its middleware ran: it never starts, and the middleware that
		// let it through only give back what they hold (notRun).
		r.notRun = true
	} else if ran == len(mws) {
		if unique && inPipeline {
			w.releaseUniqueLock(ctx, r)
		}
		herr, timedOut = invoke()
	} else if action, _, _ := r.hj.Action(); unique && w.version.AtLeast(12, 21) && action != handlers.ActionRelease && !r.rj.isDone() {
		w.releaseUniqueLock(ctx, r)
	}
	// Each middleware whose before let the job through runs its after, the innermost first; the
	// overlap lock is released even after a timeout, once the handler has returned.
	for i := ran - 1; i >= 0; i-- {
		herr = mws[i].after(ctx, w, r, herr, timedOut)
	}
	return herr, timedOut
}

// DebounceIDer is implemented by handlers of #[DebounceFor] jobs (Laravel 13.6+) whose PHP class
// computes its debounceId in a method, which the worker cannot call: the handler returns the same id,
// so that the worker reads the debounce key PHP's dispatch wrote. Without it the debounceId property
// is used.
type DebounceIDer interface {
	DebounceID(job *handlers.Job) string
}

// debounce is Laravel 13.6+'s check of a #[DebounceFor] job before it runs: the dispatch that took
// the job's debounce key wrote its owner into the command (debounceOwner); a later dispatch of the same
// job replaced the key's value with its own owner, and then this one is superseded and deleted
// without running (CallQueuedHandler::commandShouldBeDebounced). A missing key lets it run.
type debounce struct {
	key, owner string
}

func (w *Worker) newDebounce(r *jobRun) middleware {
	if !w.version.AtLeast(13, 6) {
		return nil
	}
	v, _ := r.cmd.Get("debounceOwner")
	owner, _ := v.(string)
	if owner == "" {
		return nil
	}
	id, _ := r.cmd.Get("debounceId")
	if d, ok := r.h.(DebounceIDer); ok && r.hj != nil {
		id = d.DebounceID(r.hj)
	}
	name := r.class
	if r.env.DisplayName != "" && r.env.DisplayName != r.env.CommandName {
		name = XXH128(r.env.DisplayName)
	}
	return &debounce{key: "laravel_debounced_job:" + name + ":" + phpString(id), owner: owner}
}

func (d *debounce) before(ctx context.Context, w *Worker, r *jobRun) (bool, error) {
	v, ok, err := w.mwValues.CacheGet(ctx, d.key)
	if err != nil || !ok {
		return err != nil, err
	}
	if current, isString := laravel.UnserializeString(v); isString {
		v = current
	}
	if v == d.owner {
		return false, nil
	}
	// Deleted here, and so done, rather than through the handler's Delete: a superseded job has no
	// success path (no chain link, no batch count).
	j := r.rj.job
	if w.completeLocked(r.rj, "delete superseded", func(ctx context.Context) error { return w.queue.JobDelete(ctx, j) }, &w.stats.deleted) {
		w.log.Info("Debounced: superseded by a newer dispatch; deleted", "class", r.displayName, "id", j.ID, "key", d.key)
	}
	return true, nil
}

func (d *debounce) after(_ context.Context, _ *Worker, _ *jobRun, herr error, _ bool) error {
	return herr
}
