// Package dispatch lets Go code queue Laravel jobs that PHP workers run: a job class and its
// properties become the jobs row PHP's own dispatch() would insert for the configured Laravel version
// (the same envelope keys, uuid, displayName, serialized or encrypted command, available_at for a
// delay), so `php artisan queue:work` cannot tell it from a job PHP queued.
//
// A Dispatcher inserts through any Execer: a *sql.DB, a *sql.Tx (the job is queued exactly when the
// caller's transaction commits), or a transaction of laravel.Conn.InTx.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// ErrInvalid is wrapped by the errors for a job or a Dispatcher that cannot be dispatched as given.
var ErrInvalid = errors.New("invalid dispatch")

// ErrDuplicate is wrapped by the error of a Unique job's dispatch while another job holds its unique
// lock (queued or running): nothing is inserted, as PHP's dispatch() of a ShouldBeUnique job then
// queues nothing.
var ErrDuplicate = errors.New("not queued: a job with the same unique lock is queued or running")

// LockStore takes and gives back the application cache store's locks, where Laravel keeps the locks
// of ShouldBeUnique jobs: *laravel.Conn (the database store, cache_locks), redislock.Locks,
// filecache.Store and memcached.Store are ones.
type LockStore interface {
	LockAcquire(ctx context.Context, name, owner string, seconds int64) (bool, error)
	LockRelease(ctx context.Context, name, owner string) (bool, error)
}

// Execer is what a Dispatcher inserts through: *sql.DB, *sql.Tx, *sql.Conn, and sqlx's handles all
// implement it.
type Execer = laravel.Execer

// Params configures a Dispatcher.
type Params struct {
	// Dialect is the database's dialect: mysql (or mariadb), pgsql or sqlite.
	Dialect laravel.Dialect
	// Table is the jobs table (queue.connections.database.table); "" means "jobs".
	Table string
	// LaravelVersion is the version of the app that runs the jobs, e.g. "8.83" or "12.54"; it decides
	// the envelope's keys and JSON escaping. "" means "8.83".
	LaravelVersion string
	// DefaultQueue is the connection's default queue (DB_QUEUE), used when a Job names none; "" means
	// "default".
	DefaultQueue string
	// Keyring encrypts the command of jobs dispatched with Encrypt (the app's APP_KEY).
	Keyring *payload.Keyring
	// Clock gives the time written to created_at and available_at; nil means time.Now.
	Clock func() time.Time
	// Locks is the application's cache store, where Unique jobs take their lock (config/cache.php's
	// default store, the one PHP's dispatch() uses). Needed only to dispatch Unique jobs.
	Locks LockStore
}

// Dispatcher writes Laravel jobs into a jobs table. It is safe for concurrent use.
type Dispatcher struct {
	jobs         *laravel.JobTable
	table        string
	version      payload.Version
	versionText  string
	defaultQueue string
	keyring      *payload.Keyring
	clock        func() time.Time
	locks        LockStore
	pool         Execer        // ForConn's connection, for a nil Execer
	conn         *laravel.Conn // ForConn's connection
}

// New checks the parameters and returns a Dispatcher.
func New(p Params) (*Dispatcher, error) {
	if p.Table == "" {
		p.Table = "jobs"
	}
	jobs, err := laravel.NewJobTable(p.Dialect, p.Table)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if p.LaravelVersion == "" {
		p.LaravelVersion = "8.83"
	}
	v, err := payload.ParseVersion(p.LaravelVersion)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if p.DefaultQueue == "" {
		p.DefaultQueue = "default"
	}
	if p.Clock == nil {
		p.Clock = time.Now
	}
	return &Dispatcher{
		jobs: jobs, table: p.Table, version: v, versionText: p.LaravelVersion,
		defaultQueue: p.DefaultQueue, keyring: p.Keyring, clock: p.Clock, locks: p.Locks,
	}, nil
}

// ForConn returns a Dispatcher for the database and jobs table of c; p's Dialect and Table are
// ignored. Dispatch through a transaction of c.InTx, through your own handle on the same database,
// or with a nil Execer through c's own pool (the row commits on its own). With c as p.Locks (the
// database cache store on the queue's own connection) a Unique job's lock is written through the
// Execer too, in the same transaction as the row.
func ForConn(c *laravel.Conn, p Params) (*Dispatcher, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: ForConn needs an open *laravel.Conn (laravel.Open, or cli.OpenDispatcher), got nil", ErrInvalid)
	}
	p.Dialect, p.Table = c.Dialect(), c.Tables().Jobs
	d, err := New(p)
	if err != nil {
		return nil, err
	}
	d.pool, d.conn = c.Pool(), c
	return d, nil
}

// Job is one job to dispatch.
type Job struct {
	// Command is the job object: its PHP class and its properties, built with payload.NewObject and
	// Set, SetProtected and SetPrivate. Properties of Laravel's Queueable and InteractsWithQueue traits
	// that it lacks are added as PHP would serialize them (see Bare).
	Command *payload.Object
	// Queue is the queue to push onto; "" means the Dispatcher's default queue.
	Queue string
	// Connection is Queueable's connection, as ->onConnection() sets it (the row still goes to the
	// Dispatcher's table); "" leaves it null.
	Connection string
	// Delay makes the job available that much later (whole seconds, as Laravel).
	Delay time.Duration
	// Tries is the job's $tries (payload maxTries); 0 leaves it to the worker's --tries.
	Tries int
	// MaxExceptions is the job's $maxExceptions; 0 means none (7.x+).
	MaxExceptions int
	// Backoff is the job's $backoff in seconds, one value or one per attempt (8.x+).
	Backoff []int
	// Timeout is the job's $timeout (whole seconds); 0 leaves it to the worker's --timeout.
	Timeout time.Duration
	// FailOnTimeout is the job's $failOnTimeout (8.43+).
	FailOnTimeout bool
	// RetryUntil is the job's retryUntil() deadline; zero means none.
	RetryUntil time.Time
	// Encrypt encrypts the command as for a ShouldBeEncrypted job; the Dispatcher needs a Keyring.
	Encrypt bool
	// Bare leaves Command's properties exactly as given, for a class that does not use Laravel's
	// Queueable trait.
	Bare bool
	// WithoutSerializesModels is for a class that does not use the SerializesModels trait. From
	// Laravel 9.4 SerializesModels leaves the properties still at their declared default out of the
	// serialized command (null, or Queueable's empty middleware and chained); the properties of Laravel's
	// traits at their default are left out as PHP leaves them for a job of the make:job stub, which uses
	// it. A class without it serializes them all, as every class did before 9.4.
	WithoutSerializesModels bool
	// Unique dispatches the job as PHP dispatches a ShouldBeUnique class: it first takes the lock
	// "laravel_unique_job:" + class + unique id (":" before the id from 11.0) in Params.Locks for
	// UniqueFor, and queues nothing (ErrDuplicate) while another job holds it. The worker that runs
	// the job, PHP's or artisan-go's, releases it.
	Unique bool
	// UniqueID is the job's uniqueId() (its public uniqueId property when empty).
	UniqueID string
	// UniqueFor is how long the lock lasts at most, in whole seconds (the public uniqueFor property
	// when zero; zero holds it until the job has run: a day in the database store).
	UniqueFor time.Duration

	lockOwner string // the unique lock's owner, which 13.24+ keeps in Queueable's uniqueLockOwner
}

// Dispatched describes the row a dispatch inserted.
type Dispatched struct {
	ID          int64     // the jobs row id
	UUID        string    // the payload's uuid (7.x+)
	Queue       string    // the queue it was pushed onto
	AvailableAt time.Time // when a worker may take it
	Payload     []byte    // the payload column
}

// Dispatch inserts the job through ex and reports the row. With a *sql.Tx as ex the row exists only
// if the transaction commits, as with Laravel's afterCommit dispatching. A nil ex, for a Dispatcher
// of ForConn, inserts through the connection's pool. A Unique job's lock is taken before the insert:
// in ex's transaction when the Dispatcher's Locks is the *laravel.Conn of ForConn (as PHP's database
// store on the queue's connection takes it in the transaction open there, so a rollback gives it
// back), else in the store, on its own. A lock of another *laravel.Conn on an SQLite database would
// wait for a write transaction of your own open there: dispatch outside it.
func (d *Dispatcher) Dispatch(ctx context.Context, ex Execer, j Job) (*Dispatched, error) {
	if ex == nil {
		if d.pool == nil {
			return nil, fmt.Errorf("%w: no Execer to insert through (only a Dispatcher of ForConn has a pool of its own)", ErrInvalid)
		}
		ex = d.pool
	}
	var unlock func()
	if j.Unique {
		var err error
		if j, unlock, err = d.takeUniqueLock(ctx, ex, j); err != nil {
			return nil, err
		}
	}
	p, queue, delay, err := d.build(j)
	if err == nil {
		now := d.clock()
		avail := now.Add(time.Duration(delay) * time.Second)
		var id int64
		id, err = d.jobs.JobInsert(ctx, ex, &laravel.JobPushParams{Queue: queue, Payload: p, Now: now.Unix(), AvailableAt: avail.Unix()})
		if err == nil {
			return d.dispatched(j, id, queue, avail, p)
		}
		err = fmt.Errorf("dispatch %s: insert into %s: %w", j.Command.Class, d.table, err)
	}
	if unlock != nil {
		unlock() // nothing was queued: the next dispatch may go
	}
	return nil, err
}

// dispatched describes the row inserted for j.
func (d *Dispatcher) dispatched(j Job, id int64, queue string, avail time.Time, p []byte) (*Dispatched, error) {
	env, err := payload.ParseEnvelope(p)
	if err != nil {
		return nil, fmt.Errorf("dispatch %s: %w", j.Command.Class, err)
	}
	return &Dispatched{ID: id, UUID: env.UUID, Queue: queue, AvailableAt: time.Unix(avail.Unix(), 0), Payload: p}, nil
}

// takeUniqueLock takes a Unique job's lock as PHP's UniqueLock::acquire does, with a random owner
// (Str::random()'s sixteen letters and digits), and returns the job to build: from 13.24 its
// uniqueLockOwner property names that owner, so the worker releases the lock only while this
// dispatch still owns it. unlock gives the lock back when nothing gets queued. The lock is written
// through ex when the Locks are the database store of ForConn's connection.
func (d *Dispatcher) takeUniqueLock(ctx context.Context, ex Execer, j Job) (Job, func(), error) {
	if j.Command == nil || j.Command.Class == "" {
		return j, nil, fmt.Errorf("%w: the job has no Command class; build one with payload.NewObject(`App\\Jobs\\Name`)", ErrInvalid)
	}
	class := strings.TrimPrefix(j.Command.Class, `\`)
	if d.locks == nil {
		return j, nil, fmt.Errorf("%w: %s is Unique, but the Dispatcher has no Locks (the application's cache store)", ErrInvalid, class)
	}
	id := j.UniqueID
	if p := j.Command.Prop("uniqueId"); id == "" && p != nil && p.Visibility == payload.Public {
		id = payload.StringCast(p.Value)
	}
	seconds := int64(j.UniqueFor / time.Second)
	if p := j.Command.Prop("uniqueFor"); j.UniqueFor == 0 && p != nil && p.Visibility == payload.Public {
		seconds, _ = p.Value.(int64)
	}
	key, _ := payload.UniqueLockKey(d.version, class, class, false, id, nil)
	owner := laravel.NewLockOwner()
	acquire, release := d.locks.LockAcquire, d.locks.LockRelease
	if d.conn != nil && d.locks == LockStore(d.conn) {
		acquire = func(ctx context.Context, name, owner string, seconds int64) (bool, error) {
			return d.conn.LockAcquireIn(ctx, ex, name, owner, seconds)
		}
		release = func(ctx context.Context, name, owner string) (bool, error) {
			return d.conn.LockReleaseIn(ctx, ex, name, owner)
		}
	}
	ok, err := acquire(ctx, key, owner, seconds)
	if err != nil {
		return j, nil, fmt.Errorf("dispatch %s: take its unique lock %s: %w", class, key, err)
	}
	if !ok {
		return j, nil, fmt.Errorf("dispatch %s: %w (lock %s)", class, ErrDuplicate, key)
	}
	j.lockOwner = owner
	return j, func() { _, _ = release(context.WithoutCancel(ctx), key, owner) }, nil
}

// Payload returns the payload Dispatch would insert for j, and the queue it would use, without
// touching a database.
func (d *Dispatcher) Payload(j Job) ([]byte, string, error) {
	p, queue, _, err := d.build(j)
	return p, queue, err
}

// build returns the payload, the queue and the delay in seconds of j.
func (d *Dispatcher) build(j Job) ([]byte, string, int, error) {
	if j.Command == nil || j.Command.Class == "" {
		return nil, "", 0, fmt.Errorf("%w: the job has no Command class; build one with payload.NewObject(`App\\Jobs\\Name`)", ErrInvalid)
	}
	if j.Encrypt && d.keyring == nil {
		return nil, "", 0, fmt.Errorf("%w: %s is to be encrypted, but the Dispatcher has no Keyring (APP_KEY)", ErrInvalid, j.Command.Class)
	}
	if j.Delay < 0 || j.Tries < 0 || j.MaxExceptions < 0 || j.Timeout < 0 {
		return nil, "", 0, fmt.Errorf("%w: %s: delay, tries, maxExceptions and timeout cannot be negative", ErrInvalid, j.Command.Class)
	}
	if !classNamePattern.MatchString(strings.TrimPrefix(j.Command.Class, `\`)) {
		return nil, "", 0, fmt.Errorf("%w: %q is not a PHP class name: write it as PHP does, its parts separated by one backslash, e.g. App\\Jobs\\SendWelcomeEmail", ErrInvalid, j.Command.Class)
	}
	// What PHP's dispatch() reads from the job's public properties (Queueable's queue and delay, the
	// job's own tries, timeout, ...), unless the Job says otherwise.
	public := func(name string) payload.Value {
		if p := j.Command.Prop(name); p != nil && p.Visibility == payload.Public {
			return p.Value
		}
		return nil
	}
	queue := j.Queue
	if q := public("queue"); queue == "" && payload.Truthy(q) {
		queue = payload.StringCast(q) // onQueue(5) is queue "5"; a falsy one is the default
	}
	if queue == "" {
		queue = d.defaultQueue
	}
	// The job's delay: the Job's, or as PHP's Dispatcher takes the command's delay property when it is
	// set (seconds, a date or an interval; the payload's 12.11+ delay key is the seconds until then,
	// at least 0 for a date).
	traitDelay := int(j.Delay / time.Second)
	delay, delayKey := traitDelay, (*int)(nil)
	if traitDelay > 0 {
		delayKey = &traitDelay
	}
	if v := public("delay"); v != nil && j.Delay == 0 {
		now := d.clock()
		if at, ok := payload.AvailableAt(v, now); ok {
			delay = int(at - now.Unix())
			key := delay
			if _, date := v.(*payload.Object); date {
				key = max(key, 0)
			}
			delayKey = &key
		}
	}
	cmd := j.Command
	if strings.HasPrefix(cmd.Class, `\`) {
		cmd = &payload.Object{Class: strings.TrimPrefix(cmd.Class, `\`), Props: cmd.Props}
	}
	if !j.Bare {
		cmd = d.withTraits(cmd, j.Queue, traitDelay, j.Connection)
		if d.version.AtLeast(13, 24) && j.lockOwner != "" {
			cmd.Set("uniqueLockOwner", j.lockOwner) // where Queueable declares it
		}
		if d.version.AtLeast(9, 4) && !j.WithoutSerializesModels {
			cmd = payload.WithoutQueueableDefaults(cmd)
		}
	}
	jp := payload.JobPayloadParams{
		LaravelVersion: d.versionText, Command: cmd, Encrypt: j.Encrypt, Keyring: d.keyring,
		FailOnTimeout: j.FailOnTimeout,
	}
	if j.Tries > 0 {
		jp.MaxTries = &j.Tries
	}
	if j.MaxExceptions > 0 {
		jp.MaxExceptions = &j.MaxExceptions
	}
	if j.Timeout > 0 {
		t := int(j.Timeout / time.Second)
		jp.Timeout = &t
	}
	if len(j.Backoff) > 0 {
		parts := make([]string, len(j.Backoff))
		for i, b := range j.Backoff {
			parts[i] = strconv.Itoa(b)
		}
		s := strings.Join(parts, ",")
		jp.Backoff = &s
	}
	if !j.RetryUntil.IsZero() {
		u := j.RetryUntil.Unix()
		jp.RetryUntil = &u
	}
	jp.FromProperties(d.clock())
	jp.Delay = delayKey
	created := d.clock().Unix()
	jp.CreatedAt = &created
	b, err := payload.NewJobPayload(jp)
	if err != nil {
		return nil, "", 0, fmt.Errorf("dispatch %s: %w", cmd.Class, err)
	}
	return b, queue, delay, nil
}

// classNamePattern is a PHP class name: identifiers (a letter, underscore or non-ASCII character,
// then those and digits) separated by single backslashes.
var classNamePattern = regexp.MustCompile(`^[A-Za-z_\x{80}-\x{10FFFF}][A-Za-z0-9_\x{80}-\x{10FFFF}]*(\\[A-Za-z_\x{80}-\x{10FFFF}][A-Za-z0-9_\x{80}-\x{10FFFF}]*)*$`)

// withTraits returns a copy of cmd with the properties that InteractsWithQueue and Queueable declare,
// in the order PHP serializes them for the version (after the class's own), set as dispatch() leaves
// them: queue as given (null for the default), delay in seconds or null, the rest at their defaults.
// Properties cmd already has keep their values.
func (d *Dispatcher) withTraits(cmd *payload.Object, queue string, delay int, connection string) *payload.Object {
	out := &payload.Object{Class: cmd.Class, Props: append([]payload.Property(nil), cmd.Props...)}
	var q, dl, cn payload.Value
	if queue != "" {
		q = queue
	}
	if connection != "" {
		cn = connection
	}
	if delay > 0 {
		dl = int64(delay)
	}
	v := d.version
	type prop struct {
		name  string
		value payload.Value
		since [2]int
	}
	// Queueable's properties, in their order of declaration for the version (checked against each
	// release's Queueable.php): 11.2 moved the chain properties after chained, 12.27 added a queue
	// group (messageGroup from 12.28.1), 12.32 deduplicator, 13.6 debounceOwner, 13.24 uniqueLockOwner.
	since := func(major, minor int) [2]int { return [2]int{major, minor} }
	never := [2]int{99, 0}
	list := []prop{
		{"job", nil, since(5, 0)},
		{"connection", cn, since(5, 0)},
		{"queue", q, since(5, 0)},
		{"chainConnection", nil, since(5, 5)},
		{"chainQueue", nil, since(5, 5)},
		{"chainCatchCallbacks", nil, since(8, 0)},
		{"delay", dl, since(5, 0)},
		{"afterCommit", nil, since(8, 19)},
		{"middleware", payload.NewList(), since(6, 0)},
		{"chained", payload.NewList(), since(5, 5)},
	}
	if v.AtLeast(11, 2) {
		// 12.27 and 12.28.0 declare group, which 12.28.1 renamed messageGroup.
		group, messageGroup := never, never
		switch {
		case v.AtLeastPatch(12, 28, 1):
			messageGroup = since(12, 28)
		case v.AtLeast(12, 27):
			group = since(12, 27)
		}
		list = []prop{
			{"job", nil, since(5, 0)},
			{"connection", cn, since(5, 0)},
			{"queue", q, since(5, 0)},
			{"group", nil, group},
			{"messageGroup", nil, messageGroup},
			{"deduplicator", nil, since(12, 32)},
			{"debounceOwner", "", since(13, 6)},
			{"uniqueLockOwner", "", since(13, 24)},
			{"delay", dl, since(5, 0)},
			{"afterCommit", nil, since(8, 19)},
			{"middleware", payload.NewList(), since(6, 0)},
			{"chained", payload.NewList(), since(5, 5)},
			{"chainConnection", nil, since(5, 5)},
			{"chainQueue", nil, since(5, 5)},
			{"chainCatchCallbacks", nil, since(8, 0)},
		}
	}
	for _, p := range list {
		if !v.AtLeast(p.since[0], p.since[1]) {
			continue
		}
		if existing := out.Prop(p.name); existing != nil {
			if p.name == "queue" && q != nil || p.name == "delay" && dl != nil {
				existing.Value = p.value
			}
			continue
		}
		prop := payload.Property{Name: p.name, Value: p.value}
		if p.name == "job" && !v.AtLeast(7, 7) {
			prop.Visibility = payload.Protected // InteractsWithQueue's $job, public from 7.7
		}
		out.Props = append(out.Props, prop)
	}
	return out
}
