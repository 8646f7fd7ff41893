package worker

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// UniqueIDer is implemented by handlers of ShouldBeUnique jobs whose PHP class computes its uniqueId in
// a method, which the worker cannot call: the handler returns the same id, so that the worker can
// release the lock PHP took at dispatch. A handler implementing it also marks its class as unique.
type UniqueIDer interface {
	UniqueID(job *handlers.Job) string
}

// UniqueUntilProcessing is implemented by handlers of ShouldBeUniqueUntilProcessing jobs (together with
// UniqueIDer when the id comes from a method): their lock is released just before the handler runs,
// instead of after it succeeds, as Laravel does for that interface.
type UniqueUntilProcessing interface {
	UniqueUntilProcessing() bool
}

// untilProcessing reports whether h declares its job ShouldBeUniqueUntilProcessing.
func untilProcessing(h handlers.Handler) bool {
	u, ok := h.(UniqueUntilProcessing)
	return ok && u.UniqueUntilProcessing()
}

// uniqueLockKey returns the unique lock key (without the cache prefix) of a ShouldBeUnique job, and
// false for jobs that do not look unique. The payload does not say which interfaces a class implements,
// so a job counts as unique when it carries Laravel's hidden context key laravel_unique_job_key (11.39+;
// preferred, it is the exact key), when its handler implements UniqueIDer, or when its command has a
// uniqueFor or uniqueId property.
func (w *Worker) uniqueLockKey(r *jobRun) (string, bool) {
	if r.env == nil || r.env.IsRaw() {
		return "", false
	}
	if key, ok := hiddenContext(r.env, "laravel_unique_job_key"); ok {
		return key, true
	}
	if r.cmd == nil {
		return "", false
	}
	_, hasFor := r.cmd.Get("uniqueFor")
	id, hasID := r.cmd.Get("uniqueId")
	uniqueID := phpString(id)
	u, isUniqueIDer := r.h.(UniqueIDer)
	if isUniqueIDer && r.hj != nil {
		uniqueID = u.UniqueID(r.hj)
	}
	found, _ := w.uniqueByLock.Load(r.class)
	byLock := found == true
	if !hasFor && !hasID && !isUniqueIDer && !untilProcessing(r.h) && !byLock {
		return "", false
	}
	if !hasID && !isUniqueIDer && !byLock && w.uniqueWarned.add(r.class) {
		w.log.Warn("unique job: its uniqueId() is not known here, so the lock is released under an empty id; if the class defines uniqueId(), set its route's unique_id (\"{property}\") or implement worker.UniqueIDer, or PHP drops new dispatches until uniqueFor passes",
			"class", r.class)
	}
	defines := r.env.DisplayName != "" && r.env.DisplayName != r.env.CommandName
	return UniqueLockKey(w.version, r.class, r.env.DisplayName, defines, uniqueID, XXH128)
}

// hiddenContext reads a hidden key of Laravel's Context (the illuminate:log:context payload key, 11.x+),
// whose values are PHP-serialized, and returns it as a string.
func hiddenContext(env *payload.Envelope, key string) (string, bool) {
	raw, ok := env.Extra["illuminate:log:context"]
	if !ok {
		return "", false
	}
	var ctx struct {
		Hidden map[string]json.RawMessage `json:"hidden"`
	}
	if json.Unmarshal(raw, &ctx) != nil {
		return "", false
	}
	var ser string
	if json.Unmarshal(ctx.Hidden[key], &ser) != nil || ser == "" {
		return "", false
	}
	v, err := payload.Unserialize([]byte(ser))
	if err != nil {
		return "", false
	}
	s, ok := v.(string)
	return s, ok && s != ""
}

// releaseUniqueLock force-releases the job's unique lock, as CallQueuedHandler does after a successful
// run and in failed(). Releasing a lock that does not exist does nothing.
func (w *Worker) releaseUniqueLock(ctx context.Context, r *jobRun) {
	if w.locks == nil && !w.cfg.CacheEnabled || !w.version.AtLeast(8, 0) {
		return
	}
	key, ok := w.uniqueLockKey(r)
	if !ok {
		if key, ok = w.findUniqueByLock(ctx, r); !ok {
			return
		}
	}
	release := w.conn.CacheLockForceRelease
	if w.locks != nil {
		release = w.locks.ForceRelease
	}
	owned := w.mwLocks // the store's locks by owner: the default store's
	store := w.cfg.UniqueVia[r.class]
	if s, ok := hiddenContext(r.env, "laravel_unique_job_cache_store"); ok {
		store = s // 11.39+: the store uniqueVia() returned (or the default), as PHP's worker reads it
	}
	def := w.cfg.CacheStore
	if def == "" {
		def = "database"
	}
	if store != "" && store != def {
		switch s, open := w.uniqueStores[store]; {
		case store == "database":
			release = w.conn.CacheLockForceRelease
			owned, _ = w.conn.(LockStore)
		case open:
			release = s.ForceRelease
			owned, _ = s.(LockStore)
		default:
			if w.uniqueWarned.add("via " + store) {
				w.log.Error("a unique job's lock is in a cache store this worker does not open, so it stays until it expires; name the store under unique_via in the configuration (database, redis, file or memcached)",
					"class", r.class, "store", store)
			}
			return
		}
	}
	if owner := uniqueLockOwner(r); owner != "" && w.version.AtLeast(13, 24) && owned != nil {
		// 13.24+: the lock is released only by the dispatch that took it (UniqueLock::release), in
		// whichever store uniqueVia() named.
		release = func(ctx context.Context, key string) error {
			_, err := owned.LockRelease(ctx, key, owner)
			return err
		}
	}
	if err := retryDurable(ctx, func() error { return release(ctx, key) }); err != nil {
		w.log.Error("release unique lock", "key", key, "error", err)
	}
}

// LockChecker reads whether a cache lock is held (name without the store's prefix). The Redis, file and
// memcached stores implement it, and *laravel.Conn as CacheLockHeld.
type LockChecker interface {
	LockHeld(ctx context.Context, name string) (bool, error)
}

// findUniqueByLock finds a ShouldBeUnique class whose payload says nothing of it (no uniqueFor, no
// uniqueId property, no Laravel 11.39+ context, a handler without UniqueIDer): Laravel's own form
// `class X implements ShouldBeUnique {}`, whose lock has the empty id. The first job of each such class
// that completes here looks for that lock; when it is held, the class is unique and its lock is
// released now and after each of its jobs, as CallQueuedHandler does. It returns the key to release.
func (w *Worker) findUniqueByLock(ctx context.Context, r *jobRun) (string, bool) {
	if r.env == nil || r.env.IsRaw() || r.cmd == nil {
		return "", false
	}
	if _, probed := w.uniqueByLock.LoadOrStore(r.class, false); probed {
		return "", false
	}
	held := func(ctx context.Context, key string) (bool, error) { return false, nil }
	switch {
	case w.locks != nil:
		c, ok := w.locks.(LockChecker)
		if !ok {
			return "", false
		}
		held = c.LockHeld
	default:
		c, ok := w.conn.(interface {
			CacheLockHeld(ctx context.Context, key string) (bool, error)
		})
		if !ok {
			return "", false
		}
		held = c.CacheLockHeld
	}
	defines := r.env.DisplayName != "" && r.env.DisplayName != r.env.CommandName
	key, ok := UniqueLockKey(w.version, r.class, r.env.DisplayName, defines, "", XXH128)
	if !ok {
		return "", false
	}
	found, err := held(ctx, key)
	if errors.Is(err, laravel.ErrMissingTable) {
		// No lock table: no lock is held (PHP's dispatch of a unique job fails without one), so no
		// class is looked at again, and it is said once.
		if w.uniqueWarned.add("\x00lock table") {
			w.log.Warn("the cache store's lock table does not exist: unique job locks are not looked for", "error", err)
		}
		return "", false
	}
	if err != nil {
		w.uniqueByLock.Delete(r.class) // look again with the next job
		w.log.Warn("look for a unique job lock", "key", key, "error", err)
		return "", false
	}
	if !found {
		return "", false
	}
	w.uniqueByLock.Store(r.class, true)
	w.log.Info("unique job class found by its lock: it is released after each of its jobs, as PHP's worker releases it", "class", r.class, "key", key)
	return key, true
}

// uniqueLockOwner is the owner token Laravel 13.24+ keeps in the command's uniqueLockOwner property
// when it took the job's unique lock ("" before, or when the store has no locks).
func uniqueLockOwner(r *jobRun) string {
	if r.cmd == nil {
		return ""
	}
	v, _ := r.cmd.Get("uniqueLockOwner")
	s, _ := v.(string)
	return s
}

// releasesUntilProcessing reports whether a ShouldBeUniqueUntilProcessing job releases its lock as it
// starts: from 13.24 only on its first attempt or when it carries its lock's owner, so that a retry
// cannot free a lock a newer dispatch took (CallQueuedHandler::uniqueJobLockShouldBeReleased).
func (w *Worker) releasesUntilProcessing(r *jobRun) bool {
	return !w.version.AtLeast(13, 24) || r.rj.job.Attempts <= 1 || uniqueLockOwner(r) != ""
}

// batchID returns the job's batch id: the command's batchId property, else data.batchId (12.51+).
func batchID(r *jobRun) string {
	if r.cmd != nil {
		if v, ok := r.cmd.Get("batchId"); ok {
			if s := phpString(v); s != "" {
				return s
			}
		}
	}
	if r.env != nil && r.env.BatchID != nil {
		return *r.env.BatchID
	}
	return ""
}

// batchStore is the worker's handlers.Batches: the job_batches rows on its database.
type batchStore struct{ w *Worker }

// Find reads a batch; nil when it is gone.
func (b batchStore) Find(ctx context.Context, id string) (*handlers.Batch, error) {
	row, err := b.w.conn.BatchFind(ctx, id)
	if errors.Is(err, laravel.ErrBatchNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	at := func(t *int64) *time.Time {
		if t == nil {
			return nil
		}
		u := time.Unix(*t, 0)
		return &u
	}
	return &handlers.Batch{
		ID: row.ID, Name: row.Name, TotalJobs: row.TotalJobs, PendingJobs: row.PendingJobs, FailedJobs: row.FailedJobs,
		CreatedAt: time.Unix(row.CreatedAt, 0), CancelledAt: at(row.CancelledAt), FinishedAt: at(row.FinishedAt),
	}, nil
}

// Cancel cancels a batch as Batch::cancel() does: cancelled_at and finished_at set to now.
func (b batchStore) Cancel(ctx context.Context, id string) error {
	return b.w.conn.BatchCancel(ctx, id, b.w.clock().Unix())
}

// batchCallbackKeys are the options of a batch that hold PHP closures run when its jobs finish or fail.
var batchCallbackKeys = []string{"then", "catch", "finally", "progress", "failure"}

// batchNeedsPHP reports whether a batch job must be left to PHP workers: its batch has then, catch,
// finally (or 10.37.2+ progress, 12.32+ failure) callbacks, which are PHP closures that run in the worker that records the
// job, so a Go worker finishing the job would lose them. BatchCallbacks "run" turns this off (the job
// runs here and the callbacks are skipped).
func (w *Worker) batchNeedsPHP(ctx context.Context, r *jobRun) bool {
	id := batchID(r)
	if id == "" || w.cfg.BatchCallbacks == BatchCallbacksRun || w.cfg.BatchCompanion != "" || !w.version.AtLeast(8, 0) {
		return false
	}
	if needs, ok := w.batchCallbacks.get(id); ok {
		return needs
	}
	b, err := w.conn.BatchFind(ctx, id)
	if err != nil {
		if !errors.Is(err, laravel.ErrBatchNotFound) {
			w.log.Warn("read batch", "batch", id, "error", err)
		}
		return false
	}
	needs := hasBatchCallbacks(b.Options)
	w.batchCallbacks.put(id, needs)
	return needs
}

// batchNeedsPHPWhy and chainNeedsPHPWhy are why a member of a batch with PHP callbacks, and a link of a
// chain with catch callbacks, are left for PHP, as logged.
const (
	batchNeedsPHPWhy = "its batch has PHP callbacks"
	chainNeedsPHPWhy = "its chain has PHP catch callbacks"
)

// hasBatchCallbacks reports whether a batch's options (PHP-serialized) hold callbacks.
func hasBatchCallbacks(options []byte) bool {
	v, err := payload.Unserialize(options)
	if err != nil {
		return false
	}
	opts, ok := v.(*payload.Array)
	if !ok {
		return false
	}
	for _, k := range batchCallbackKeys {
		if cbs, _ := opts.Get(k); !phpFalsy(cbs) {
			return true
		}
	}
	return false
}

// batchMemo remembers, per batch id, whether the batch has callbacks. A batch's options are written
// when it is dispatched and never change, so one read serves all its jobs (before, every job of a
// batch read its row: at 256 jobs in flight those reads took the pool's connections from the claims
// and completions).
type batchMemo struct {
	mu    sync.Mutex
	m     map[string]bool
	needs int // the batches in m that have callbacks
}

// batchMemoSize bounds the batches remembered; the memo starts again empty beyond it.
const batchMemoSize = 4096

func (b *batchMemo) get(id string) (needs, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	needs, ok = b.m[id]
	return needs, ok
}

func (b *batchMemo) put(id string, needs bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) >= batchMemoSize {
		b.m, b.needs = map[string]bool{}, 0
	}
	if had, ok := b.m[id]; ok && had {
		b.needs--
	}
	if needs {
		b.needs++
	}
	b.m[id] = needs
}

// anyNeeds reports whether a batch remembered has callbacks.
func (b *batchMemo) anyNeeds() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.needs > 0
}

// chainNeedsPHP reports whether the job's chain has catch callbacks (PHP closures, run when a link
// fails) and no companion job can run them for this worker: such a job is left to PHP, as a job of a
// batch with callbacks is, unless BatchCallbacks is "run" (the callbacks then skipped).
func (w *Worker) chainNeedsPHP(r *jobRun) bool {
	if w.cfg.FailedCompanion != "" || w.cfg.BatchCallbacks == BatchCallbacksRun || r.cmd == nil {
		return false
	}
	cbs, _ := r.cmd.Get("chainCatchCallbacks")
	return !phpFalsy(cbs)
}

// batchSuccess is the count of a successful job in its batch (pending-1, finished_at at zero), made in
// the transaction that deletes the job (see laravel.BatchStep), with the companion that runs the
// batch's progress (10.37.2+), then and finally callbacks when this job's success calls them. It is nil for a job in no
// batch. queued names the callbacks queued, once the transaction has committed.
func (w *Worker) batchSuccess(r *jobRun) (step *laravel.BatchStep, queued *[]payload.Value) {
	id := batchID(r)
	if id == "" || !w.version.AtLeast(8, 0) {
		return nil, nil
	}
	queued = new([]payload.Value)
	then := w.batchCallbacksThen(r, id, queued, nil, func(c laravel.BatchCounts, _ []byte) (kinds []string) {
		if w.version.AtLeastPatch(10, 37, 2) {
			kinds = append(kinds, batchProgress)
		}
		if c.PendingJobs == 0 {
			kinds = append(kinds, batchThen)
		}
		if c.AllJobsHaveRanExactlyOnce() {
			kinds = append(kinds, batchFinally)
		}
		return kinds
	})
	return &laravel.BatchStep{ID: id, JobUUID: r.env.UUID, Then: then}, queued
}

// batchCallbacksThen is a BatchStep's Then: the companion job for the callbacks that kinds names for
// the counts the step left (none for a batch that is gone: PHP's $this->batch() is then null), whose
// names it keeps in queued.
func (w *Worker) batchCallbacksThen(r *jobRun, id string, queued *[]payload.Value, cause error, kinds func(c laravel.BatchCounts, options []byte) []string) func(*laravel.Batch) ([]*laravel.JobPushParams, error) {
	return func(b *laravel.Batch) ([]*laravel.JobPushParams, error) {
		*queued = nil
		if b == nil {
			return nil, nil
		}
		cmd, names := w.batchCallbacksCommand(id, b.Options, kinds(laravel.BatchCounts{PendingJobs: b.PendingJobs, FailedJobs: b.FailedJobs}, b.Options), cause)
		if cmd == nil {
			return nil, nil
		}
		push, err := w.companionPush(r, cmd)
		if err != nil {
			return nil, err
		}
		*queued = names
		return []*laravel.JobPushParams{push}, nil
	}
}

// batchFailure is the count of a failed job in its batch (failed_jobs+1, its uuid in failed_job_ids)
// made in the transaction that fails the job (see laravel.BatchStep): on the batch's first failure it
// is cancelled unless it allows failures, and the companion that runs its callbacks is queued when
// this failure calls them: progress (10.37.2+) and failure (12.32+) when the batch allows failures,
// catch at its first failure, finally when every job has run once. It is nil for a job in no batch. queued names the callbacks
// queued, once the transaction has committed.
func (w *Worker) batchFailure(r *jobRun, cause error) (step *laravel.BatchStep, queued *[]payload.Value) {
	id := batchID(r)
	if id == "" || r.env == nil || !w.version.AtLeast(8, 0) {
		return nil, nil
	}
	queued = new([]payload.Value)
	then := w.batchCallbacksThen(r, id, queued, cause, func(c laravel.BatchCounts, options []byte) (kinds []string) {
		if allowFailures(options) && w.version.AtLeastPatch(10, 37, 2) {
			kinds = append(kinds, batchProgress)
			if w.version.AtLeast(12, 32) {
				kinds = append(kinds, batchFailureKind)
			}
		}
		if c.FailedJobs == 1 {
			kinds = append(kinds, batchCatch)
		}
		if c.AllJobsHaveRanExactlyOnce() {
			kinds = append(kinds, batchFinally)
		}
		return kinds
	})
	uuid := r.env.UUID
	unlisted := func(b *laravel.Batch, fix string) {
		w.log.Warn("batch's failed_job_ids is full: the failure is counted and the job is in failed_jobs, but its uuid is not listed, so queue:retry-batch leaves it (queue:retry "+uuid+" takes it); to list every failure: "+fix,
			"batch", id, "uuid", uuid, "failed_jobs", b.FailedJobs, "listed", len(b.FailedJobIDs))
	}
	return &laravel.BatchStep{ID: id, JobUUID: uuid, Failed: true,
		CancelOnFailure: func(b *laravel.Batch) bool { return !allowFailures(b.Options) }, Then: then, Unlisted: unlisted}, queued
}

// allowFailures reads the allowFailures option of a batch's serialized options.
func allowFailures(options []byte) bool {
	v, err := payload.Unserialize(options)
	if err != nil {
		return false
	}
	a, ok := v.(*payload.Array)
	if !ok {
		return false
	}
	f, _ := a.Get("allowFailures")
	return f == true // Batch::allowsFailures compares with === true: allowFailures(1) does not allow them
}

// retryTransient runs a completion or bookkeeping step (batch counters, unique locks) under
// laravel.TransientRetry.
func retryTransient(ctx context.Context, fn func() error) error {
	return laravel.TransientRetry.Do(ctx, fn)
}

// cacheGet reads a value of the cache store as the store keeps it ("" when absent).
func (w *Worker) cacheGet(ctx context.Context, key string) (string, error) {
	v, ok, err := w.cache.CacheGet(ctx, key)
	if err != nil || !ok {
		return "", err
	}
	return v, nil
}

// cacheIncrement is Laravel's maxExceptions counting: put 0 for a day when the key is absent, then
// increment.
func (w *Worker) cacheIncrement(ctx context.Context, key string) (int, error) {
	n, err := w.cache.CacheCount(ctx, key, 24*time.Hour)
	return int(n), err
}

func (w *Worker) cacheForget(ctx context.Context, key string) error {
	return w.cache.CacheForget(ctx, key)
}
