// Package worker runs Laravel queue jobs from the database queue the way `php artisan queue:work` does:
// the same queue priority, the same attempts, tries, retryUntil, backoff, maxExceptions and timeout
// rules, the same failed_jobs rows, and after a success the same chain, batch and unique-lock
// bookkeeping, so that PHP workers and tools on the same tables cannot tell the difference.
//
// Where PHP runs one job per process, a Worker runs up to Concurrency jobs at once. Every completion is
// fenced on the claim (a job re-claimed by another worker after retry_after is left alone), and a job
// that runs longer than half of retry_after has its reservation renewed so that no other worker takes it.
package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/metrics"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// Exit statuses Run returns, as Laravel's worker does.
const (
	ExitSuccess     = 0
	ExitMemoryLimit = 12
)

// Batch-callback policies (Config.BatchCallbacks).
const (
	BatchCallbacksPHP = "php" // leave jobs of batches with callbacks to PHP workers
	BatchCallbacksRun = "run" // run them here; the callbacks are skipped
)

// Unhandled-class policies.
const (
	UnhandledLeave = "leave" // hand the row back for PHP workers
	UnhandledFail  = "fail"  // fail it into failed_jobs
	UnhandledMove  = "move:" // prefix: push the exact payload onto another queue
)

// Config holds the worker options: Laravel's queue:work options plus artisan-go's own. Start from
// Defaults, which has Laravel's; New fills a few zero values that cannot be meant literally (no queues,
// no concurrency, no retry_after).
type Config struct {
	Connection     string   // queue connection name written to failed_jobs, e.g. "database"
	LaravelVersion string   // the app's framework version, e.g. "8.83"; rules differ by version
	Queues         []string // --queue, in priority order
	DefaultQueue   string   // the connection's default queue, for chain links without a queue
	// DefaultConnection is the application's default queue connection (QUEUE_CONNECTION), where PHP
	// dispatches a chain link that names none; "" means Connection.
	DefaultConnection string
	Sleep             time.Duration // --sleep when every queue is empty
	Tries             int           // --tries; 0 is unlimited
	Timeout           time.Duration // --timeout; 0 is none
	Backoff           []int         // --backoff seconds, a list indexed by attempt
	MaxJobs           int           // --max-jobs; 0 is unlimited
	MaxTime           time.Duration // --max-time; 0 is unlimited
	StopWhenEmpty     bool          // --stop-when-empty
	// StopWhenEmptyFor stops the worker once the queues have been empty this long since its last job
	// finished, or since it started (--stop-when-empty-for, Laravel 11.53 / 12.60 / 13.10); 0 never.
	StopWhenEmptyFor time.Duration
	Once             bool          // --once
	Rest             time.Duration // --rest after each job
	MemoryMB         int           // --memory; 0 disables the check
	Concurrency      int           // jobs in flight; at least 1
	RetryAfter       time.Duration // the connection's retry_after
	ShutdownGrace    time.Duration // how long in-flight jobs may finish after a stop signal; 0 waits for them
	Force            bool          // --force: work while the application is in maintenance mode
	// MaintenanceFile is where `php artisan down` (the file driver) writes: while it exists the worker
	// claims nothing unless Force; "" does not look.
	MaintenanceFile string
	// MaintenanceDriver is the application's maintenance driver (Laravel 9+): "file" looks only at
	// MaintenanceFile, "cache" only at the illuminate:foundation:down key of Params.MaintenanceStore
	// (the cache store when nil), "" at both.
	MaintenanceDriver string
	// BatchCallbacks says what to do with a job whose batch has then/catch/finally callbacks, or whose
	// chain has catch callbacks (PHP closures), when no companion class runs them: "php" (default)
	// leaves it to PHP workers so the callbacks run; "run" runs it here and the callbacks are skipped.
	BatchCallbacks string
	AbandonAfter   time.Duration // how long a timed-out handler that ignores its context keeps its slot
	Unhandled      string        // "leave", "fail" or "move:<queue>"
	FailedDriver   string        // "database-uuids", "database" or "null"
	Location       *time.Location
	// CacheEnabled says the cache store can be read: the database store, or the store Params.Cache
	// reaches (Redis). The restart signal, maintenance mode, paused queues, maxExceptions counters and
	// unique locks live there. With another store those features are off.
	CacheEnabled bool
	// CacheStore names the application's default cache store (config/cache.php's default), the one
	// Params.Locks or the database keep; "" for the database.
	CacheStore string
	// UniqueVia names, by job class, the cache store a ShouldBeUnique class's uniqueVia() returns when
	// it is not the default one: its lock is released there (Params.UniqueStores). Laravel 11.39+
	// names the store in the payload, which wins.
	UniqueVia map[string]string
	// ExcludeLimit bounds how many handed-back row ids the worker remembers.
	ExcludeLimit int
	// BatchCompanion is the PHP job class that runs a batch's then/catch/finally callbacks for Go
	// (testdata/laravel/app/Jobs/RunBatchCallbacks.php is one to copy). When it is set, jobs of batches
	// with callbacks run here whatever BatchCallbacks says, and when this worker's bookkeeping triggers
	// callbacks it queues one such job for PHP workers, which run them once.
	BatchCompanion string
	// FailedCompanion is the PHP job class that runs a failed job's chain catch callbacks and failed()
	// method for Go (testdata/laravel/app/Jobs/RunFailedHooks.php is one to copy). When this worker
	// fails an object job it queues one such job for PHP workers. With "", jobs whose chain has catch
	// callbacks are left to PHP (see BatchCallbacks), and a failed() method of a class failed here is
	// not run: the first failure of each class logs a warning saying so.
	FailedCompanion string
	// RateLimiters are the limits of the PHP application's named rate limiters (RateLimiter::for),
	// which the RateLimited job middleware applies; a job limited by a limiter not listed here is
	// left to PHP workers.
	RateLimiters map[string][]RateLimit
	// RunUnknownMiddleware lists job classes that run here even though their middleware property
	// holds middleware the worker does not apply (FailOnException, the application's own);
	// those middleware are then not applied. Jobs of other classes with such middleware are left to
	// PHP workers.
	RunUnknownMiddleware map[string]bool
	// DontRetry are the PHP exception classes the application's exception handler lists with
	// dontRetry (Laravel 13.17+): a job whose exception names one of them fails at once.
	DontRetry map[string]bool
	// DeleteWhenMissingModels are the classes that set $deleteWhenMissingModels, which their payload
	// does not carry from Laravel 9.4 (PHP reads the class up to 12.x; see deleteWhenMissingModels).
	DeleteWhenMissingModels map[string]bool
	// CheckModels looks up the models a SerializesModels job holds before it runs, as PHP does when it
	// unserializes the job: a missing model fails the job (or deletes it, with deleteWhenMissingModels).
	CheckModels bool
	// Models says where model classes keep their rows when Eloquent's default naming does not.
	Models map[string]Model
	// DBConnection is the name of the worker's database connection (DB_CONNECTION); models on other
	// connections are not checked. "" checks every model on the worker's database.
	DBConnection string
}

// Defaults returns Laravel 8.83's queue:work defaults with one job in flight.
func Defaults() Config {
	return Config{
		Connection: "database", LaravelVersion: "8.83", Queues: []string{"default"}, DefaultQueue: "default",
		Sleep: 3 * time.Second, Tries: 1, Timeout: 60 * time.Second, Backoff: []int{0}, MemoryMB: 128,
		Concurrency: 1, RetryAfter: 90 * time.Second, ShutdownGrace: 30 * time.Second,
		AbandonAfter: 5 * time.Second, Unhandled: UnhandledLeave, FailedDriver: "database-uuids",
		Location: time.UTC, CacheEnabled: true, ExcludeLimit: 1024, CheckModels: true,
	}
}

// Params wires a Worker to its queue, its database and its handlers.
type Params struct {
	Queue laravel.Queue
	// Conn keeps the database's side of the bookkeeping: job_batches rows, the cache_locks table and,
	// unless Cache is set, the cache table. A *laravel.Conn is one.
	Conn     Bookkeeping
	Registry *handlers.Registry
	Keyring  *payload.Keyring // nil when no ShouldBeEncrypted jobs are expected
	// KeyringErr is why Keyring is nil although APP_KEY is set (a wrong length, bad base64): encrypted
	// jobs then fail with the exception PHP's encrypter throws for such a key, not for a missing one.
	KeyringErr error
	Config     Config
	Logger     *slog.Logger     // nil discards
	Clock      func() time.Time // nil is time.Now
	// Events receives each job's events (queue:work prints them, as PHP's console lines or --json's JSON
	// lines; the Processing and Processed log lines are then debug); nil drops them. It is called
	// from the jobs' goroutines, so it must be safe for concurrent use.
	Events func(RunEvent)
	// UniqueStores release the unique locks of classes whose uniqueVia() is another store than the
	// default one, by store name (Config.UniqueVia); the "database" store needs none (Params.Conn).
	UniqueStores map[string]LockReleaser
	// Locks releases unique-job locks kept outside the database cache store (redislock for a Redis
	// cache store, filecache for files); nil uses the cache_locks table when CacheEnabled. A Locks
	// that is a LockStore keeps job middleware's locks too.
	Locks LockReleaser
	// Cache is the cache store when it is not the database store (redislock, filecache); nil uses the
	// cache table when CacheEnabled. A Cache that is a LimiterStore keeps job middleware's rate
	// limiters; its SerializesValues() bool method, when it has one, says it keeps numbers
	// PHP-serialized (FileStore) rather than as they are (RedisStore).
	Cache CacheStore
	// Observer is told about claims and jobs (metrics, traces, Pulse); nil observes nothing.
	Observer Observer
	// MaintenanceStore is the cache store the cache maintenance driver keeps its key in when it is not
	// the default one (Config.MaintenanceDriver); nil is the cache store.
	MaintenanceStore CacheStore
}

// Bookkeeping is what a worker records beside the jobs table, as Laravel's worker does: batch
// counters in job_batches (DatabaseBatchRepository), unique locks force-released from cache_locks,
// and the database cache store's values. *laravel.Conn implements it.
type Bookkeeping interface {
	CacheStore
	// BatchFind reads a batch; a missing one gives laravel.ErrBatchNotFound.
	BatchFind(ctx context.Context, id string) (*laravel.Batch, error)
	// BatchCancel marks a batch cancelled and finished at now (Unix seconds).
	BatchCancel(ctx context.Context, id string, now int64) error
	// CacheLockForceRelease deletes a cache lock whoever owns it (key without the store's prefix).
	CacheLockForceRelease(ctx context.Context, key string) error
}

// The database is the default bookkeeping and cache store.
var _ Bookkeeping = (*laravel.Conn)(nil)

// CacheStore reads and counts values of Laravel's cache store by key (without the store's prefix).
// *laravel.Conn is the database store.
type CacheStore interface {
	// CacheGet returns the value as the store keeps it, and whether the key is present.
	CacheGet(ctx context.Context, key string) (string, bool, error)
	// CacheCount puts 0 for ttl when the key is absent, then adds one and returns the count.
	CacheCount(ctx context.Context, key string, ttl time.Duration) (int64, error)
	// CacheForget deletes the key.
	CacheForget(ctx context.Context, key string) error
}

// LockReleaser force-releases a cache lock by name (without the store's prefix), as Laravel's
// Lock::forceRelease does.
type LockReleaser interface {
	ForceRelease(ctx context.Context, name string) error
}

// Stats counts what a Worker did. Counters only grow.
type Stats struct {
	Claimed         int64 // rows claimed
	Processed       int64 // handlers that completed successfully
	Released        int64 // jobs released back with a delay
	Failed          int64 // jobs written to failed_jobs (or deleted with the null failer)
	Deleted         int64 // jobs the handler deleted (done, as Laravel counts them, but not in Processed)
	LeftForPHP      int64 // rows left for PHP (each once, however often the claims passed over it)
	Moved           int64 // unhandled jobs moved to another queue
	ChainDispatched int64 // next chain links pushed
	TimedOut        int64 // handlers that ran past their timeout
	Lost            int64 // completions skipped because the reservation was lost
	Returned        int64 // claimed jobs returned or released at shutdown
	Renewed         int64 // reservation renewals of long-running jobs
	// Reapplied counts completions kept through a lost database connection and applied once it came
	// back; Unapplied those that could not be applied at all (the job runs again after retry_after),
	// and Refused those of them the database itself refused (a revoked grant, a dropped table): their
	// rows stay reserved until someone fixes the cause.
	Reapplied, Unapplied, Refused int64
	// Waiting is how many completions wait for the database connection now (not a counter).
	Waiting int64
}

// ErrConfig is wrapped by the errors New returns for unusable options.
var ErrConfig = errors.New("invalid worker configuration")

// Worker runs jobs. Create one with New.
type Worker struct {
	queue    laravel.Queue
	conn     Bookkeeping
	registry *handlers.Registry
	keyring  *payload.Keyring
	keyErr   error // Params.KeyringErr
	// uniqueStores are Params.UniqueStores.
	uniqueStores     map[string]LockReleaser
	locks            LockReleaser
	cache            CacheStore
	maintenanceStore CacheStore // the cache maintenance driver's store when not the cache store (nil)
	obs              Observer
	cfg              Config
	version          Version
	log              *slog.Logger
	clock            func() time.Time
	events           func(RunEvent)
	// renewTicker paces the reservation renewer: realTicker, or a test's ticks on its own clock.
	renewTicker tickerFunc
	// pauseHook, when a test sets it, is called after each pause in maintenance mode or SIGUSR2's.
	pauseHook func()
	excluded  *idRing
	// leftBefore remembers every handed-back id (up to idSetMaxChunks of them), many more than the
	// claims exclude, to tell a row claimed again after the claims forgot it from one seen for the
	// first time.
	leftBefore *idSet
	leftPage   int // leftAheadPage
	// reach is where the next claim starts while the claims walk past rows left for PHP to rows the
	// worker has not seen (see leftAhead); 0 for none.
	reach atomic.Int64
	// readAhead is the highest id jumpAhead read without finding a row the claims would take (the
	// run loop's alone).
	readAhead int64
	claims    *claimLimiter
	// passed counts the rows claims passed over for PHP (see passOver), and passedTop is the highest
	// id among them.
	passed, passedTop atomic.Int64
	// leaveWarned records that the excluded ids overflowed once, which is logged once.
	leaveWarned atomic.Bool
	// modelWarned names the model classes whose rows this worker cannot check, each logged once.
	modelWarned onceSet
	// failedWarned names the classes failed here without a failed companion, each logged once.
	failedWarned onceSet
	// batchCallbacks remembers which batches have PHP callbacks (see batchNeedsPHP).
	batchCallbacks batchMemo
	// uniqueWarned names what this worker has warned of about unique job locks, once each: the classes
	// whose uniqueId it cannot compute, "via <store>" for a uniqueVia store it does not reach, and
	// "\x00lock table" for a cache store without its lock table.
	uniqueWarned onceSet
	// chainWarned names the chain link classes whose connection is not this worker's, logged once each.
	chainWarned onceSet
	// leftLogged names the classes (and reasons) of rows left for PHP logged at info level once.
	leftLogged onceSet
	// uniqueByLock holds, by class, whether findUniqueByLock found the class unique (true) or looked
	// and did not (false).
	uniqueByLock sync.Map
	// limiterTurns makes the jobs running at once take a rate limiter's check and hit in turn.
	limiterTurns keyTurns
	// overlapWaits makes this worker's WithoutOverlapping jobs of one lock run one after another.
	overlapWaits keyWaits
	// throttleRuns bounds this worker's ThrottlesExceptions jobs of one key running at once.
	throttleRuns keyLimits
	// limiterWaits makes this worker's RateLimited jobs of one limiter count in the order claimed.
	limiterWaits keyWaits
	// stopping is closed by the Run under way when it stops (see runningJob.stopping).
	stopping atomic.Pointer[stopSignal]
	// tickets numbers the jobs in the order they were claimed (runningJob.ticket).
	tickets atomic.Uint64
	// preGate wakes the jobs that wait at their gates for jobs claimed before them.
	preGate preGate
	// runStop is the Run's stop conditions that a job whose turn came after a wait checks before it
	// starts: --max-time, and queue:restart's value at the start.
	runStop atomic.Pointer[runStop]
	// encryptedClasses holds the classes this worker has read encrypted jobs of (ShouldBeEncrypted).
	encryptedClasses sync.Map
	paused           atomic.Bool
	// now is closed by StopNow: a stopping worker stops waiting for its running jobs.
	now     chan struct{}
	nowOnce sync.Once
	// nowCtx is cancelled once the worker stops now (see watchStopNow): the claims, renewals and
	// completions under way then, and the completions kept through a lost connection, give up instead
	// of waiting for the database.
	nowCtx    context.Context
	nowCancel context.CancelFunc
	stopNowAt atomic.Int64 // when watchStopNow started nowCtx's countdown, in Unix nanoseconds
	// epoch is when New ran; lastDone is how long after it the latest job finished (0: none yet), for
	// --stop-when-empty-for, on the monotonic clock.
	epoch    time.Time
	lastDone atomic.Int64

	// The cache store as job middleware use it (nil without a reachable store); limiterWarned
	// remembers the rate limiters already warned about.
	mwLocks       LockStore
	mwValues      LimiterStore
	mwSerialized  bool
	durations     DurationLimiter
	limiterWarned sync.Map

	slots chan struct{} // one token per job in flight
	freed chan struct{} // signalled whenever a job's slot is freed
	idle  chan jobStart // an idle runner waits here for its next job

	mu      sync.Mutex
	running map[*runningJob]struct{}
	wg      sync.WaitGroup

	completionCtx completionDeadline

	stats struct {
		claimed, processed, released, failed, deleted, left, moved, chained, timedOut, lost, returned, renewed atomic.Int64
		reapplied, unapplied, refused, waiting                                                                 atomic.Int64
		leftAgain                                                                                              atomic.Int64 // left again after the claims forgot them
		leftRows                                                                                               atomic.Int64 // left the first time (see countLeft)
	}
}

// New checks the parameters and returns a Worker.
func New(p Params) (*Worker, error) {
	if p.Queue == nil || p.Conn == nil || p.Registry == nil {
		return nil, fmt.Errorf("%w: Queue, Conn and Registry are required", ErrConfig)
	}
	cfg := p.Config
	v, err := ParseVersion(cfg.LaravelVersion)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if len(cfg.Queues) == 0 {
		cfg.Queues = []string{"default"}
	}
	for _, q := range cfg.Queues {
		if q == "" {
			return nil, fmt.Errorf("%w: --queue has an empty name; write queue names separated by commas, e.g. high,default", ErrConfig)
		}
	}
	if cfg.DefaultQueue == "" {
		cfg.DefaultQueue = cfg.Queues[0]
	}
	if cfg.Connection == "" {
		cfg.Connection = "database"
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 90 * time.Second
	}
	if cfg.AbandonAfter <= 0 {
		cfg.AbandonAfter = 5 * time.Second
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.ExcludeLimit <= 0 {
		cfg.ExcludeLimit = 1024
	}
	switch {
	case cfg.Unhandled == "":
		cfg.Unhandled = UnhandledLeave
	case cfg.Unhandled == UnhandledLeave, cfg.Unhandled == UnhandledFail:
	case len(cfg.Unhandled) > len(UnhandledMove) && cfg.Unhandled[:len(UnhandledMove)] == UnhandledMove:
		if target := cfg.Unhandled[len(UnhandledMove):]; slices.Contains(cfg.Queues, target) {
			return nil, fmt.Errorf("%w: unhandled policy %q moves jobs to a queue this worker works, where it would take them again without end: name a queue only PHP workers work", ErrConfig, cfg.Unhandled)
		}
	default:
		return nil, fmt.Errorf("%w: unhandled policy %q: use leave, fail or move:<queue>", ErrConfig, cfg.Unhandled)
	}
	switch cfg.BatchCallbacks {
	case "", BatchCallbacksPHP, BatchCallbacksRun:
	default:
		return nil, fmt.Errorf("%w: batch callbacks policy %q: use php or run", ErrConfig, cfg.BatchCallbacks)
	}
	if cfg.Timeout > 0 && cfg.Timeout >= cfg.RetryAfter {
		// Laravel documents the same rule; renewal makes it safe here, so it is only a warning.
		logger(p.Logger).Warn("--timeout is not shorter than retry_after; artisan-go renews reservations, but PHP workers on the same queue may take long jobs twice: make the timeout several seconds shorter than retry_after",
			"timeout", cfg.Timeout, "retry_after", cfg.RetryAfter)
	}
	clock := p.Clock
	if clock == nil {
		clock = time.Now
	}
	cache := p.Cache
	if cache == nil {
		cache = p.Conn
	}
	w := &Worker{
		queue: p.Queue, conn: p.Conn, registry: p.Registry, keyring: p.Keyring, keyErr: p.KeyringErr, locks: p.Locks, uniqueStores: p.UniqueStores, cache: cache, maintenanceStore: p.MaintenanceStore, obs: p.Observer, cfg: cfg, version: v,
		log: logger(p.Logger), clock: clock, events: p.Events, renewTicker: realTicker, excluded: newIDRing(cfg.ExcludeLimit), leftBefore: newIDSet(idSetMaxChunks), leftPage: leftAheadPage, claims: newClaimLimiter(maxParallelClaims),
		slots: make(chan struct{}, cfg.Concurrency), freed: make(chan struct{}, 1), idle: make(chan jobStart),
		running: map[*runningJob]struct{}{}, epoch: time.Now(), now: make(chan struct{}),
	}
	w.nowCtx, w.nowCancel = context.WithCancel(context.Background())
	w.completionCtx.parent = w.nowCtx
	w.mwLocks, w.mwValues, w.mwSerialized = middlewareStores(p)
	w.durations, _ = p.Locks.(DurationLimiter)
	return w, nil
}

// middlewareStores picks the cache store job middleware use: the Redis or file store when
// Params.Locks and Params.Cache reach one, else the database store (Params.Conn, when it has locks and values) when
// the cache is enabled. Without one, jobs with middleware are left to PHP.
func middlewareStores(p Params) (LockStore, LimiterStore, bool) {
	if p.Locks != nil || p.Cache != nil {
		locks, _ := p.Locks.(LockStore)
		values, _ := p.Cache.(LimiterStore)
		s, ok := p.Cache.(interface{ SerializesValues() bool })
		return locks, values, ok && s.SerializesValues()
	}
	locks, hasLocks := p.Conn.(LockStore)
	values, hasValues := p.Conn.(LimiterStore)
	if !p.Config.CacheEnabled || !hasLocks || !hasValues {
		return nil, nil, false
	}
	return locks, values, true
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Pause stops claiming new jobs until Resume, as SIGUSR2 does to Laravel's worker; running jobs
// continue and stop conditions are still checked.
func (w *Worker) Pause() {
	if !w.paused.Swap(true) {
		w.log.Info("paused; not claiming jobs until resumed")
	}
}

// StopNow ends a stopping worker's wait for its running jobs, as the end of ShutdownGrace does:
// their rows are released for another worker to run and their handlers' contexts cancelled. The
// command line calls it on a second stop signal. Before Run's context is cancelled it only makes that
// later stop immediate.
func (w *Worker) StopNow() { w.nowOnce.Do(func() { close(w.now) }) }

// watchStopNow cancels nowCtx stopNowReleases after the worker is both stopping (ctx cancelled) and
// told to stop now: what is under way in the database gets as long as the running jobs' releases
// do, in which a healthy database finishes a delete, so that a job that ran is not run again. The
// returned function ends the watch.
func (w *Worker) watchStopNow(ctx context.Context) func() {
	ended := make(chan struct{})
	go func() {
		for _, c := range []<-chan struct{}{ctx.Done(), w.now} {
			select {
			case <-c:
			case <-ended:
				return
			}
		}
		w.stopNowAt.Store(time.Now().UnixNano())
		time.AfterFunc(stopNowReleases, w.nowCancel)
	}()
	return func() { close(ended) }
}

// Resume undoes Pause, as SIGCONT does to Laravel's worker.
func (w *Worker) Resume() {
	if w.paused.Swap(false) {
		w.log.Info("resumed")
	}
}

// logs reports whether messages at level are logged, so that a job's per-run messages cost nothing
// when they are not.
func (w *Worker) logs(level slog.Level) bool {
	return w.log.Enabled(context.Background(), level)
}

// jobLevel is the level of the Processing and Processed lines each job logs: debug when Params.Events
// prints each job's lines already (queue:work's console lines), info otherwise.
func (w *Worker) jobLevel() slog.Level {
	if w.events != nil {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// Stats returns a snapshot of the counters.
func (w *Worker) Stats() Stats {
	s := &w.stats
	return Stats{
		Claimed: s.claimed.Load(), Processed: s.processed.Load(), Released: s.released.Load(),
		Failed: s.failed.Load(), Deleted: s.deleted.Load(), LeftForPHP: s.leftRows.Load(), Moved: s.moved.Load(),
		ChainDispatched: s.chained.Load(), TimedOut: s.timedOut.Load(), Lost: s.lost.Load(),
		Returned: s.returned.Load(), Renewed: s.renewed.Load(),
		Reapplied: s.reapplied.Load(), Unapplied: s.unapplied.Load(), Refused: s.refused.Load(), Waiting: s.waiting.Load(),
	}
}

// Run works the queues until a stop condition (Laravel's order: memory, queue:restart,
// --stop-when-empty, --max-time, --max-jobs, --once) or until ctx is cancelled (SIGTERM/SIGINT), and
// returns Laravel's exit status. On cancellation it stops claiming, lets in-flight jobs finish within
// ShutdownGrace and hands back the rest. Database errors while claiming are logged and retried with a
// backoff; they never stop the worker. Like Laravel's worker it claims nothing while the application is
// in maintenance mode (MaintenanceFile, or the cache maintenance driver's key) unless Force is set, and skips queues paused
// with queue:pause (12.40+).
func (w *Worker) Run(ctx context.Context) (int, error) {
	defer w.announceSlots(w.cfg.Once)()
	w.stopping.Store(&stopSignal{ch: make(chan struct{})})
	defer w.stopping.Store(nil)
	st := &stopState{started: time.Now(), paused: map[string]bool{}}
	st.lastRestart = w.restartSignal(ctx, "")
	w.runStop.Store(&runStop{started: st.started, restart: st.lastRestart})
	defer w.runStop.Store(nil)
	w.readSignals(ctx, st)
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	defer w.watchStopNow(ctx)()
	stopRenew := w.startRenewer()
	defer stopRenew()

	if w.cfg.Once {
		if st.down && !w.cfg.Force {
			sleepCtx(ctx, w.cfg.Sleep)
			return ExitSuccess, nil
		}
		found, err := w.runOneOfOurs(ctx, jobCtx)
		if err != nil {
			w.log.Error("claim failed", "error", err)
		}
		if !found && err == nil {
			sleepCtx(ctx, w.cfg.Sleep)
		}
		return w.finish(ctx, cancelJobs, ExitSuccess), nil
	}

	claimBackoff := time.Duration(0)
	idle := idlePoll{max: w.cfg.Sleep}
	var churn leftChurn
	var idleFrom time.Time // when the claims began to find nothing
	for {
		if ctx.Err() != nil {
			return w.finish(ctx, cancelJobs, ExitSuccess), nil
		}
		w.readSignals(ctx, st)
		if (st.down && !w.cfg.Force) || w.paused.Load() {
			// Maintenance mode or paused (SIGUSR2): claim nothing, as Laravel's worker. Its pauseWorker
			// checks the stop conditions with no job, so --stop-when-empty stops it here.
			sleepCtx(ctx, max(w.cfg.Sleep, time.Second))
			if status, stop := w.shouldStop(ctx, st, true); stop {
				return w.finish(ctx, cancelJobs, status), nil
			}
			if w.pauseHook != nil {
				w.pauseHook()
			}
			if w.maxTimeWhilePaused() {
				w.log.Info("--max-time reached while paused, as Laravel before 11.53, 12.60 and 13.10 reckons it there (from the host's boot); stopping")
				w.closeStopping()
				return w.finish(ctx, cancelJobs, ExitSuccess), nil
			}
			continue
		}
		// A job running while the claim looks may release itself or continue a chain after the claim's
		// snapshot: the queues count as empty only when nothing was running.
		busy := w.inFlight()
		free := cap(w.slots) - busy
		if w.cfg.MaxJobs > 0 {
			free = min(free, w.cfg.MaxJobs-w.counted(st)) // never take more than --max-jobs leaves
		}
		claimed, err := 0, error(nil)
		returned := w.returnedClaims()
		// Rows the claims passed over for PHP (see passOver) count as claimed and left: the claims go
		// on at once, past them, to the rows behind.
		passed, top := w.passed.Load(), w.passedTop.Load()
		if free > 0 {
			claimed, err = w.claimAndStart(ctx, jobCtx, free, st.paused, false)
			st.jobs += claimed
		}
		passed = w.passed.Load() - passed
		if err == nil && free > 0 {
			claimBackoff = 0 // a claim worked, even an empty one: the next failure waits from the start
		}
		switch {
		case err != nil && ctx.Err() != nil:
			// The claim was interrupted by the stop signal; the next check stops the loop.
		case err != nil && transient(err):
			// A deadlock victim or a busy SQLite file: another claimer won; try again shortly.
			w.log.Debug("claim conflict; retrying", "error", err)
			sleepCtx(ctx, 20*time.Millisecond)
		case err != nil:
			claimBackoff = nextClaimBackoff(claimBackoff)
			w.log.Error("claim failed; retrying", "error", err, "retry_in", claimBackoff)
			sleepCtx(ctx, claimBackoff)
		case claimed == 0 && passed > 0 && w.passedTop.Load() > top && w.jumpAhead(ctx, st.paused):
			// The claim read only rows for PHP, further on than the claims had been: the rows behind
			// them are read without claiming them, and the next claim starts at the first it takes.
			// A worker with few free slots then reaches its jobs behind PHP's backlog in a few reads
			// rather than a claim per slot's worth of rows.
			continue
		case claimed+int(passed) > 0 && churn.churning(w):
			// The claims bring back rows left for PHP that the worker no longer remembers (more than
			// worker.ExcludeLimit of them ahead of its own): pause as on an empty queue, so that the
			// worker does not claim and hand back the same rows without end, slowing PHP's workers.
			switch next, allLeft := w.leftAhead(ctx); {
			case allLeft && w.cfg.StopWhenEmpty:
				// --stop-when-empty: every row a claim could take is one left for PHP, so nothing is
				// left to run here; once the rows being handed back are, the queues count as empty.
				for w.inFlight() > 0 && ctx.Err() == nil {
					w.waitForCompletion(ctx)
				}
				if status, stop := w.shouldStop(ctx, st, true); stop {
					return w.finish(ctx, cancelJobs, status), nil
				}
			case next > 0:
				// A row this worker has not seen waits behind the ones it left: the claims walk on
				// from there, so that its own jobs behind PHP's backlog run.
				w.reach.Store(next)
				continue
			}
			sleepCtx(ctx, idle.next()) // not woken by the handed-back jobs' slots
		case claimed+int(passed) > 0:
			idle.reset()
			idleFrom = time.Time{}
			if w.cfg.Rest > 0 {
				sleepCtx(ctx, w.cfg.Rest)
			}
			if claimed == free {
				w.waitForSlot(ctx)
			}
		case free == 0:
			w.waitForSlot(ctx)
		case w.cfg.StopWhenEmpty:
			// Nothing to claim: wait for the running jobs (one may continue a chain) rather than spin.
			if w.inFlight() > 0 {
				w.waitForCompletion(ctx)
			}
		default:
			if idleFrom.IsZero() {
				idleFrom = time.Now()
			}
			w.sleepOrSlot(ctx, idle.next())
		}
		// Rows given back while the claim ran were maybe not seen by it. A return counts as finished
		// before it stops counting as running, so reading them in this order, a return that ended after
		// the claim began shows in one or the other.
		empty := err == nil && free > 0 && claimed+int(passed) == 0 && busy == 0 && !w.returningClaims() && w.returnedClaims() == returned
		if empty && (w.cfg.StopWhenEmpty || w.emptyForElapsed(st)) {
			// Before stopping, one claim reads the whole queue, as Laravel's does: claims start at a
			// bound on id (see laravel.JobClaimParams.Whole), below which a row that became claimable
			// again (a reservation expired, a row given back) would wait for a probe.
			passed := w.passed.Load()
			claimed, err = w.claimAndStart(ctx, jobCtx, free, st.paused, true)
			st.jobs += claimed
			empty = err == nil && claimed == 0 && !w.returningClaims() && w.returnedClaims() == returned
			if empty && w.passed.Load() != passed {
				// It passed over rows for PHP: the queues are empty for this worker once every row a
				// claim could take is one it left (see leftAhead); a row it has not seen behind them is
				// where the claims go on from.
				switch next, allLeft := w.leftAhead(ctx); {
				case allLeft:
				case next > 0:
					w.reach.Store(next)
					empty = false
				default:
					empty = false
					sleepCtx(ctx, idle.next())
				}
			}
		}
		if empty && w.cfg.StopWhenEmpty && w.inFlight() == 0 && !w.returningClaims() {
			// Laravel's daemon loop sleeps --sleep after a pop that found nothing and only then checks
			// --stop-when-empty, so its worker never exits the moment it starts on an empty queue
			// (which supervisor's startsecs would count as a failed start).
			sleepCtx(ctx, w.cfg.Sleep)
		}
		if status, stop := w.shouldStop(ctx, st, empty); stop {
			if empty && !idleFrom.IsZero() && (status == ExitMemoryLimit || w.maxTimeReached(st)) {
				// Laravel's daemon loop checks --memory and --max-time after the --sleep that follows
				// a pop that found nothing: an idle worker does not exit sooner than that (which
				// supervisor's startsecs would count as a failed start), though its polls are shorter.
				sleepCtx(ctx, time.Until(idleFrom.Add(w.cfg.Sleep)))
			}
			return w.finish(ctx, cancelJobs, status), nil
		}
	}
}

// maxTimeReached reports whether --max-time has passed since the worker started.
func (w *Worker) maxTimeReached(st *stopState) bool {
	return w.cfg.MaxTime > 0 && time.Since(st.started) >= w.cfg.MaxTime
}

// availableIDer lists the rows a claim could take (*laravel.Conn does).
type availableIDer interface {
	AvailableJobIDs(ctx context.Context, p *laravel.QueueDepthParams) ([]int64, error)
}

// leftAhead reads the rows a claim on the worker's queues could take now, a page of leftAheadPage ids
// at a time (Worker.leftPage). allLeft says every one is a row the worker left for PHP before: none is
// its own to run. Otherwise next is the first row, in claim order, it has not seen behind rows it left
// (0 when there is none, or past leftAheadMax rows): a claim from there reaches it.
func (w *Worker) leftAhead(ctx context.Context) (next int64, allLeft bool) {
	l, ok := w.conn.(availableIDer)
	if !ok {
		return 0, false
	}
	page := w.leftPage
	p := laravel.QueueDepthParams{Now: w.clock().Unix(), RetryAfter: int64(w.cfg.RetryAfter / time.Second), Limit: page}
	read := 0
	for _, queue := range w.cfg.Queues {
		p.Queues, p.AfterID = []string{queue}, 0
		for {
			ids, err := l.AvailableJobIDs(ctx, &p)
			if err != nil {
				return 0, false
			}
			for _, id := range ids[:min(len(ids), page)] {
				if !w.leftBefore.has(id) {
					if read == 0 {
						return 0, false // the claims reach it as they are
					}
					return id, false
				}
				read++
			}
			if len(ids) <= page {
				break
			}
			if read >= leftAheadMax {
				return 0, false
			}
			p.AfterID = ids[page-1]
		}
	}
	return 0, true
}

// leftAheadPage is how many ids leftAhead reads at once, and leftAheadMax how many at most.
const (
	leftAheadPage = 65536
	leftAheadMax  = 1 << 22
)

// leftChurn tells, between two claims, whether the worker only hands back rows it handed back before:
// once more rows were left for PHP than its claims exclude, they can take the forgotten ones again and
// again. Rows left for the first time (the worker walking through a backlog of PHP's jobs towards its
// own) are not churn.
type leftChurn struct {
	again, ran int64
}

// churning reports whether, since the last call, rows were left again and fewer than one in eight as
// many jobs ran here.
func (c *leftChurn) churning(w *Worker) bool {
	again := w.stats.leftAgain.Load()
	ran := w.stats.processed.Load() + w.stats.released.Load() + w.stats.failed.Load() + w.stats.deleted.Load() + w.stats.moved.Load()
	da, dr := again-c.again, ran-c.ran
	c.again, c.ran = again, ran
	return da > 0 && dr*8 < da
}

// idlePollMin is the first pause after a claim that found jobs came back empty. Jobs that arrive
// one by one (dispatched at a steady rate) then start within milliseconds, where a full --sleep
// would leave each of them waiting up to that long.
const idlePollMin = 10 * time.Millisecond

// idlePoll is the pause between claims that find nothing: idlePollMin after a claim that found jobs,
// doubling with each empty claim up to --sleep, which an idle worker then polls at as Laravel's does.
type idlePoll struct {
	max, cur time.Duration
}

func (p *idlePoll) reset() { p.cur = 0 }

func (p *idlePoll) next() time.Duration {
	if p.cur == 0 {
		p.cur = idlePollMin
	} else {
		p.cur *= 2
	}
	if p.cur >= p.max {
		p.cur = p.max
	}
	return p.cur
}

// transient reports whether a database error is a lost race (deadlock victim, lock wait, SQLITE_BUSY)
// that is retried at once rather than backed off.
func transient(err error) bool { return laravel.Transient(err) }

// signalsEvery is how often the loop reads the cache signals (queue:restart, maintenance mode, paused
// queues). Laravel reads them on every loop; with many jobs a second that costs queries each, so they are
// read at most this often instead.
const signalsEvery = time.Second

// Cache keys Laravel's commands write for workers.
const (
	restartKey     = "illuminate:queue:restart"
	maintenanceKey = "illuminate:foundation:down" // php artisan down with the cache maintenance driver (9.x+)
	pausedPrefix   = "illuminate:queue:paused:"   // + connection:queue, php artisan queue:pause (12.40+)
	allPausedKey   = "illuminate:queues:paused"   // php artisan queue:pause --all (13.25+)
)

// stopState is what the stop conditions and signals remember between loops.
type stopState struct {
	started     time.Time
	lastRestart string
	signalsRead time.Time
	restart     bool            // queue:restart changed since the start
	down        bool            // the application is in maintenance mode
	paused      map[string]bool // queues paused with queue:pause
	jobs        int             // jobs claimed
}

// counted is the jobs --max-jobs counts: those claimed, less those handed to PHP (left or moved),
// which PHP's worker runs and counts.
func (w *Worker) counted(st *stopState) int { return st.jobs - int(w.notRun()-w.passed.Load()) }

// notRun is the jobs handed to PHP since the worker started: left for it or moved to its queue.
func (w *Worker) notRun() int64 { return w.stats.left.Load() + w.stats.moved.Load() }

// setDown records whether the application is in maintenance mode, logging when it goes down.
func (w *Worker) setDown(st *stopState, down bool) {
	if down && !st.down {
		w.log.Warn("application is in maintenance mode; not claiming jobs (use --force to work anyway)")
	}
	st.down = down
}

// readSignals reads the cache signals when signalsEvery has passed since the last read.
func (w *Worker) readSignals(ctx context.Context, st *stopState) {
	if w.clock().Sub(st.signalsRead) < signalsEvery {
		return
	}
	st.signalsRead = w.clock()
	driver := w.cfg.MaintenanceDriver
	if !w.version.AtLeast(9, 0) {
		driver = "file" // the only driver before 9
	}
	if w.cfg.MaintenanceFile != "" && !w.cfg.Force && driver != "cache" {
		_, err := os.Stat(w.cfg.MaintenanceFile)
		w.setDown(st, err == nil)
	}
	store := w.maintenanceStore
	if store == nil && w.cfg.CacheEnabled {
		store = w.cache
	}
	if !w.cfg.Force && driver != "file" && store != nil {
		if _, down, err := store.CacheGet(ctx, maintenanceKey); err == nil {
			w.setDown(st, down || driver == "" && st.down && w.cfg.MaintenanceFile != "")
		}
	}
	if !w.cfg.CacheEnabled {
		return
	}
	if cur := w.restartSignal(ctx, st.lastRestart); cur != st.lastRestart {
		st.restart = true
	}
	if w.version.AtLeast(12, 40) {
		all := false
		if w.version.AtLeast(13, 25) {
			v, ok, err := w.cache.CacheGet(ctx, allPausedKey)
			all = err == nil && cacheTruthy(v, ok)
		}
		for _, q := range w.cfg.Queues {
			v, ok, err := w.cache.CacheGet(ctx, pausedPrefix+w.cfg.Connection+":"+q)
			if err != nil && !all {
				continue
			}
			paused := all || cacheTruthy(v, ok)
			if paused != st.paused[q] {
				w.log.Info("queue pause changed", "queue", q, "paused", paused)
				if w.events != nil && w.version.AtLeast(13, 26) {
					status := EventQueueResumed
					if paused {
						status = EventQueuePaused
					}
					w.events(RunEvent{Status: status, Connection: w.cfg.Connection, Queue: q, Time: w.clock()})
				}
			}
			st.paused[q] = paused
		}
	}
}

// cacheTruthy reports whether a cache value read as PHP's (bool) cast of it would be true.
func cacheTruthy(v string, ok bool) bool {
	return ok && v != "b:0;" && v != "N;" && v != "i:0;" && v != "0" && v != `s:0:"";` && v != `s:1:"0";`
}

// returningClaims reports whether the connection is still giving back rows of a claim whose COMMIT
// went unanswered (see laravel.Conn.ReturningClaims): the queue is not known to be empty until then.
func (w *Worker) returningClaims() bool {
	r, ok := w.conn.(interface{ ReturningClaims() int64 })
	return ok && r.ReturningClaims() > 0
}

// returnedClaims counts the finished returns of such claims (see laravel.Conn.ReturnedClaims).
func (w *Worker) returnedClaims() int64 {
	if r, ok := w.conn.(interface{ ReturnedClaims() int64 }); ok {
		return r.ReturnedClaims()
	}
	return 0
}

// shouldStop checks Laravel's stop conditions in Laravel's order.
func (w *Worker) shouldStop(ctx context.Context, st *stopState, empty bool) (int, bool) {
	if w.cfg.MemoryMB > 0 && MemoryMB() >= float64(w.cfg.MemoryMB) {
		w.log.Warn("memory limit exceeded; stopping", "memory_mb", int(MemoryMB()), "limit_mb", w.cfg.MemoryMB)
		w.closeStopping()
		return ExitMemoryLimit, true
	}
	w.readSignals(ctx, st)
	if st.restart {
		w.log.Info("queue:restart signal received; stopping")
		w.closeStopping()
		return ExitSuccess, true
	}
	if w.cfg.StopWhenEmpty && empty && w.inFlight() == 0 && !w.returningClaims() {
		switch {
		case st.down && !w.cfg.Force:
			w.log.Info("the application is in maintenance mode; stopping (--stop-when-empty)")
		case w.stats.left.Load() > 0:
			w.log.Info("no job this worker runs is waiting (jobs it left for PHP may be); stopping (--stop-when-empty)", "left_for_php", w.stats.leftRows.Load())
		default:
			w.log.Info("queue is empty; stopping (--stop-when-empty)")
		}
		return ExitSuccess, true
	}
	if empty && w.inFlight() == 0 && !w.returningClaims() && w.emptyForElapsed(st) {
		w.log.Info("the queue has been empty for --stop-when-empty-for; stopping", "empty_for", w.idleFor(st).Round(time.Millisecond))
		return ExitSuccess, true
	}
	if w.maxTimeReached(st) {
		w.log.Info("--max-time reached; stopping")
		w.closeStopping()
		return ExitSuccess, true
	}
	if w.cfg.MaxJobs > 0 && w.counted(st) >= w.cfg.MaxJobs {
		w.log.Info("--max-jobs reached; stopping")
		return ExitSuccess, true
	}
	return 0, false
}

// maxTimeWhilePaused reports whether a paused worker (maintenance mode, SIGUSR2) of a Laravel
// version before 11.53, 12.60 and 13.10 stops for --max-time: their pauseWorker checks the stop
// conditions with a start time of 0, so --max-time is measured from the host's boot (hrtime) and a
// worker on a host up for longer stops after its first pause.
func (w *Worker) maxTimeWhilePaused() bool {
	v := w.version
	fixed := v.AtLeast(13, 10) || v.Major == 12 && v.Minor >= 60 || v.Major == 11 && v.Minor >= 53
	if w.cfg.MaxTime <= 0 || fixed {
		return false
	}
	up, ok := hrtime()
	return ok && up >= w.cfg.MaxTime
}

// idleFor is how long ago the latest job finished, or the worker started when none has.
func (w *Worker) idleFor(st *stopState) time.Duration {
	since := time.Since(st.started)
	if d := w.lastDone.Load(); d > 0 {
		since = min(since, time.Since(w.epoch.Add(time.Duration(d))))
	}
	return since
}

// emptyForElapsed reports whether --stop-when-empty-for is set and its time has passed, as Laravel
// measures it: from the latest job's end, or from the start.
func (w *Worker) emptyForElapsed(st *stopState) bool {
	return w.cfg.StopWhenEmptyFor > 0 && w.idleFor(st) >= w.cfg.StopWhenEmptyFor
}

// MemoryMB is the memory the Go runtime holds from the system, in megabytes: the counterpart of PHP's
// memory_get_usage(true), which --memory compares with its limit.
func MemoryMB() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	var total, released uint64
	if s[0].Value.Kind() == metrics.KindUint64 {
		total = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		released = s[1].Value.Uint64()
	}
	return float64(total-released) / (1 << 20)
}

// RunOnce claims at most one job across the queues in priority order and processes it to completion.
// It reports whether there was a job (one run, or rows passed over for PHP); it does not sleep when
// there was none.
func (w *Worker) RunOnce(ctx context.Context) (bool, error) {
	defer w.announceSlots(true)()
	defer w.watchStopNow(ctx)()
	stopRenew := w.startRenewer()
	defer stopRenew()
	jobCtx, cancelJob := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJob() // after the job: its runner ends
	started, passed, err := w.runOne(ctx, jobCtx)
	w.wg.Wait()
	return started > 0 || passed > 0, err
}

// Slots is how many jobs a worker of this configuration runs at once: Concurrency, never more than
// MaxJobs, and one with Once.
func (c Config) Slots() int {
	n := c.Concurrency
	if c.MaxJobs > 0 {
		n = min(n, c.MaxJobs)
	}
	if c.Once {
		n = 1
	}
	return n
}

// announceSlots tells a queue that sizes its claims and groups its deletes by its workers (the batch
// strategy) how many jobs this worker runs at once: one when once (RunOnce, Once), which run one job
// and return, and never more than MaxJobs. The function returned takes them back, once the worker
// returns.
func (w *Worker) announceSlots(once bool) func() {
	s, ok := w.queue.(laravel.SlotAware)
	if !ok {
		return func() {}
	}
	n := w.cfg.Slots()
	if once {
		n = 1
	}
	s.AddSlots(n)
	return func() { s.AddSlots(-n) }
}

// runOne claims one job and runs it, and returns how many jobs it started (0 or 1) and how many rows
// the claim passed over for PHP.
func (w *Worker) runOne(ctx, jobCtx context.Context) (started int, passed int64, err error) {
	passed = w.passed.Load()
	started, err = w.claimAndStart(ctx, jobCtx, 1, nil, false)
	w.wg.Wait()
	return started, w.passed.Load() - passed, err
}

// runOneOfOurs is --once: runOne, again while the job claimed was handed to PHP (left for it, or
// moved to its queue), which is not the one job --once runs. A claim that only passed over rows for
// PHP is followed by a read, without claiming, of the rows behind them (see nextOfOurs): the next
// claim starts at the first one this worker runs, however many of PHP's rows wait ahead of it.
func (w *Worker) runOneOfOurs(ctx, jobCtx context.Context) (found bool, err error) {
	for range max(w.cfg.ExcludeLimit, 1) {
		notRun, again := w.notRun(), w.stats.leftAgain.Load()
		started, passed, err := w.runOne(ctx, jobCtx)
		found = found || started > 0 || passed > 0
		// Go on while the claim found only rows for PHP: passed over, or claimed and then left.
		leftAfterClaim := w.notRun()-notRun-passed > 0
		onlyPHP := started == 0 && passed > 0 || started > 0 && leftAfterClaim
		if !onlyPHP || err != nil || ctx.Err() != nil || w.stats.leftAgain.Load() != again {
			return found, err
		}
		if started == 0 {
			next, _, _, err := w.nextOfOurs(ctx, w.passedTop.Load()+1, nextOfOursMax, nil)
			if next == 0 || err != nil {
				return found, err
			}
			w.reach.Store(next)
		}
	}
	return found, nil
}

// availableReader reads the rows a claim could take without claiming them (*laravel.Conn does).
type availableReader interface {
	AvailableJobs(ctx context.Context, p *laravel.JobClaimParams, limit int) ([]*laravel.Job, error)
}

// nextOfOurs pages: the first reads nextOfOursFirst rows, each next one twice as many up to
// nextOfOursPage (the next row to take is most often close); --once reads up to nextOfOursMax rows,
// the loop lookAhead.
const (
	nextOfOursFirst = 16
	nextOfOursPage  = 512
	nextOfOursMax   = 1 << 20
	lookAhead       = 8192
)

// nextOfOurs reads the rows a claim could take from id from on, a page at a time and without
// claiming them, on each of the worker's queues in priority order (but the paused ones), up to limit
// rows, and returns the id of the first one the claims would not pass over (next), or 0 when there is
// none. last is the highest id it read, and capped says it stopped at limit rows in the last of the
// queues (every row of the others read).
func (w *Worker) nextOfOurs(ctx context.Context, from int64, limit int, paused map[string]bool) (next, last int64, capped bool, err error) {
	r, ok := w.conn.(availableReader)
	if !ok {
		return 0, 0, false, nil
	}
	read, page := 0, nextOfOursFirst
	for i, queue := range w.cfg.Queues {
		if paused[queue] {
			continue
		}
		p := &laravel.JobClaimParams{Queue: queue, Now: w.clock().Unix(), RetryAfter: int64(w.cfg.RetryAfter / time.Second), MinID: from}
		for {
			if read >= limit {
				return 0, last, i == len(w.cfg.Queues)-1, nil
			}
			jobs, err := r.AvailableJobs(ctx, p, page)
			if err != nil {
				return 0, 0, false, err
			}
			for _, j := range jobs {
				if !w.passOver(j) {
					return j.ID, 0, false, nil
				}
				last = max(last, j.ID)
			}
			read += len(jobs)
			if len(jobs) < page {
				break
			}
			p.MinID = jobs[len(jobs)-1].ID + 1
			page = min(2*page, nextOfOursPage)
		}
	}
	return 0, last, false, nil
}

// jumpAhead moves the claims past the rows for PHP after the ones a claim passed over (see
// nextOfOurs), to the next row they would take, or past lookAhead rows when it found none there (when
// it read every row of the queues before the last: the claims' lower bound holds for every queue). It
// reports whether they moved. Rows it read without finding one are not read again until the claims
// have passed them (w.readAhead): they go on as before, passing over rows, and the worker pauses as on
// an empty queue once they only meet rows it left before.
func (w *Worker) jumpAhead(ctx context.Context, paused map[string]bool) bool {
	from := w.passedTop.Load() + 1
	if from <= w.readAhead {
		return false
	}
	next, last, capped, err := w.nextOfOurs(ctx, from, lookAhead, paused)
	switch {
	case err != nil:
		w.log.Debug("read ahead of the rows left for PHP failed", "error", err)
		return false
	case next > 0:
		w.reach.Store(next)
		return true
	}
	w.readAhead = last
	if capped {
		w.reach.Store(last + 1)
		return true
	}
	return false
}

// claimAndStart claims up to limit jobs, taking from the queues in priority order (each call starts
// again from the first queue), and starts each one. Up to maxParallelClaims claims run at once, so that
// with several free slots the claim transactions overlap instead of queueing one commit behind another.
func (w *Worker) claimAndStart(ctx, jobCtx context.Context, limit int, paused map[string]bool, whole bool) (int, error) {
	total := 0
	var firstErr error
	from, passed := w.reach.Load(), w.passed.Load()
	defer func() {
		if from > 0 && !whole && total == 0 && firstErr == nil && w.passed.Load() == passed {
			// The walk past rows left for PHP found nothing more on any queue (one queue finding
			// nothing does not end it: a queue before the others is often empty).
			w.reach.CompareAndSwap(from, 0)
		}
	}()
	for _, q := range w.cfg.Queues {
		if total >= limit {
			break
		}
		if paused[q] {
			continue
		}
		jobs, err := w.claimParallel(ctx, q, limit-total, whole)
		// Started (and numbered, runningJob.ticket) lowest id first, as PHP's pops take them, whatever
		// order the parallel claims returned them in.
		slices.SortFunc(jobs, func(a, b *laravel.Job) int { return cmp.Compare(a.ID, b.ID) })
		for _, j := range jobs {
			if j.Queue == "" {
				j.Queue = q
			}
			w.stats.claimed.Add(1)
			w.start(ctx, jobCtx, j)
			total++
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("claim job from queue %q: %w", q, err)
		}
		if err != nil && len(jobs) == 0 {
			return total, firstErr
		}
	}
	if total > 0 {
		if firstErr != nil && !transient(firstErr) {
			w.log.Warn("some claims failed", "error", firstErr)
		}
		return total, nil // the claims that worked count; a failed one is retried by the next loop
	}
	return total, firstErr
}

// claimTimeout bounds one claim call.
const claimTimeout = 30 * time.Second

// maxClaimBackoff bounds the wait between claims that fail (a database that went away): the worker
// is back at work within it once the server answers again, at the cost of one failed connection and
// one log line per wait while it does not.
const maxClaimBackoff = 5 * time.Second

// nextClaimBackoff is the wait after a claim that failed, given the last one (0 after a claim that
// worked): 1 s, doubling up to maxClaimBackoff.
func nextClaimBackoff(last time.Duration) time.Duration {
	return min(max(2*last, time.Second), maxClaimBackoff)
}

// maxParallelClaims bounds the claim transactions one worker runs at once.
const maxParallelClaims = 8

// claimParallel claims up to limit jobs from one queue with up to maxParallelClaims claims at once,
// fewer while claims are slow (see claimLimiter).
func (w *Worker) claimParallel(ctx context.Context, queue string, limit int, whole bool) ([]*laravel.Job, error) {
	// A claim is not interrupted by the stop signal: a transaction cancelled at its commit may have
	// committed, and its rows would stay reserved until retry_after. Claimed jobs that arrive after the
	// signal are handed back by start.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	// StopNow does cut it short: the rows of a claim cancelled at its commit stay reserved until
	// retry_after, which a worker told to stop now accepts rather than wait for the database.
	defer context.AfterFunc(w.completionCtx.parent, cancel)()
	type result struct {
		jobs []*laravel.Job
		err  error
		took time.Duration
	}
	var gate *claimGate // set below where the claims of other workers count too
	claim := func(n int) result {
		start := time.Now()
		if gate != nil {
			leave, err := gate.enter(ctx)
			if err != nil {
				err = fmt.Errorf("wait for one of the %d claims the workers on queue %q run at once: %w", maxParallelClaims, queue, err)
				return result{err: err, took: time.Since(start)}
			}
			defer leave()
		}
		var from int64
		if !whole {
			from = w.reach.Load()
		}
		top := w.passedTop.Load()
		jobs, err := w.queue.JobClaim(ctx, &laravel.JobClaimParams{
			Queue: queue, Now: w.clock().Unix(), RetryAfter: int64(w.cfg.RetryAfter / time.Second),
			Limit: n, ExcludeIDs: w.excluded.list(), Whole: whole, MinID: from,
			Skip: w.passOver, Left: w.passedOver,
		})
		if from > 0 && err == nil {
			// Walking past rows left for PHP: the next claim goes on after this one's rows (and the
			// rows it passed over), until a round on every queue finds nothing more and the claims
			// start from the head again (see claimAndStart).
			next := int64(0)
			if t := w.passedTop.Load(); t != top {
				next = t + 1
			}
			for _, j := range jobs {
				next = max(next, j.ID+1)
			}
			if next > 0 {
				w.reach.CompareAndSwap(from, next)
			}
		}
		jobs = w.dropLeft(ctx, jobs)
		took := time.Since(start)
		if w.obs != nil {
			w.obs.Claimed(queue, len(jobs), took, err)
		}
		return result{jobs, err, took}
	}
	_, prefetches := w.queue.(laravel.Prefetcher)
	if pc, ok := w.queue.(laravel.ParallelClaimer); !ok || !pc.ClaimsInParallel() || prefetches {
		// Without SKIP LOCKED (SQLite's single writer, plain FOR UPDATE) parallel claims only queue up
		// behind the same lock, so one claim takes them all in turn. The batch strategy claims every
		// free slot's rows in one round trip per queue; it is told them all in one call, so that it
		// claims no more than they are.
		r := claim(limit)
		return r.jobs, r.err
	}
	parallel := w.claims.parallel(limit)
	if cs, ok := w.queue.(laravel.ClaimScoper); ok {
		if scope := cs.ClaimScope(queue); scope != "" {
			var made bool
			if gate, made = claimGateFor(scope); made && gate.hostErr != nil {
				w.log.Warn("the claim bound holds within this process only: its lock files cannot be opened, so claims of other processes on this queue are not counted with this one's; make the directory writable, or point TMPDIR at a writable directory",
					"queue", queue, "error", gate.hostErr)
			}
		}
	}
	results := make(chan result, parallel)
	for i := range parallel {
		n := limit / parallel
		if i < limit%parallel {
			n++
		}
		if parallel == 1 {
			results <- claim(n)
			break
		}
		go func() { results <- claim(n) }()
	}
	var all []*laravel.Job
	var firstErr error
	round := make([]claimSample, 0, parallel)
	for range parallel {
		r := <-results
		all = append(all, r.jobs...)
		if r.err != nil && firstErr == nil {
			firstErr = r.err
		}
		if r.err == nil {
			round = append(round, claimSample{took: r.took, rows: len(r.jobs)})
		}
	}
	w.claims.observe(round)
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, firstErr
}

// dropLeft gives back the claimed jobs that were left for PHP after the claim read its exclusions (a
// claim may wait for another, or for a grouped delete that claims for it), and returns the others.
func (w *Worker) dropLeft(ctx context.Context, jobs []*laravel.Job) []*laravel.Job {
	var back []*laravel.Job
	keep := jobs[:0]
	for _, j := range jobs {
		if w.excluded.has(j.ID) {
			back = append(back, j)
		} else {
			keep = append(keep, j)
		}
	}
	if len(back) > 0 {
		if err := w.queue.JobReturn(ctx, back); err != nil {
			// The rows stay reserved until retry_after, when PHP's workers can take them.
			w.log.Warn("could not give back jobs left for PHP", "count", len(back), "error", err)
		}
	}
	return keep
}

// jobStart is one claimed job handed to a runner: the worker's context (stopped) and the jobs'
// context (cancelled after the shutdown grace).
type jobStart struct {
	ctx, jobCtx context.Context
	rj          *runningJob
}

// runnerIdle is how long a runner waits for another job before it ends.
const runnerIdle = 2 * time.Second

// start runs one claimed job on a runner goroutine, holding a slot until it completes or is abandoned.
// An idle runner takes it, or a new one starts. Runners live on from job to job, so that each job does
// not pay for a new goroutine and for growing its stack again while it reads the payload.
func (w *Worker) start(ctx, jobCtx context.Context, j *laravel.Job) {
	w.slots <- struct{}{}
	rj := &runningJob{job: j, ticket: w.tickets.Add(1)}
	rj.preGate.Store(true)
	if sig := w.stopping.Load(); sig != nil {
		rj.stopping = sig.ch
	}
	w.mu.Lock()
	w.running[rj] = struct{}{}
	w.mu.Unlock()
	w.wg.Add(1)
	js := jobStart{ctx: ctx, jobCtx: jobCtx, rj: rj}
	select {
	case w.idle <- js:
	default:
		go w.runner(js)
	}
}

// runner runs js, then the jobs start hands it, until none comes for runnerIdle or the Run (or
// RunOnce) that started its last job has returned, so that no runner outlives the worker by long.
func (w *Worker) runner(js jobStart) {
	var t *time.Timer
	for {
		w.runJob(js)
		over := js.jobCtx.Done()
		js = jobStart{} // an idle runner holds no finished job's payload
		if t == nil {
			t = time.NewTimer(runnerIdle)
		} else {
			t.Reset(runnerIdle)
		}
		select {
		case js = <-w.idle:
		case <-t.C:
			return
		case <-over:
			t.Stop()
			return
		}
	}
}

// runJob runs one started job and frees its slot, unless its handler was abandoned, which freed it.
func (w *Worker) runJob(js jobStart) {
	defer func() {
		if !js.rj.abandoned.Load() {
			w.release(js.rj)
			w.wg.Done()
		}
	}()
	if js.ctx.Err() != nil {
		// Stopped between the claim and the start: the job never ran, so give it back untouched.
		w.returnJobs(js.rj)
		return
	}
	w.process(js.jobCtx, js.rj)
}

// release frees a job's slot.
func (w *Worker) release(rj *runningJob) {
	if w.cfg.StopWhenEmptyFor > 0 {
		w.lastDone.Store(int64(max(time.Since(w.epoch), 1)))
	}
	w.mu.Lock()
	delete(w.running, rj)
	w.mu.Unlock()
	<-w.slots
	select {
	case w.freed <- struct{}{}:
	default:
	}
}

func (w *Worker) inFlight() int { return len(w.slots) }

func (w *Worker) waitForSlot(ctx context.Context) {
	if w.inFlight() < cap(w.slots) {
		return
	}
	w.waitForCompletion(ctx)
}

// waitForCompletion waits until a running job frees its slot, or signalsEvery at most: the loop then
// reads the stop conditions (queue:restart, --max-time, --memory) again, so that jobs waiting in their
// slots for their turn (WithoutOverlapping) are handed back when the worker stops, not started one
// after another while every slot stays taken.
func (w *Worker) waitForCompletion(ctx context.Context) {
	t := time.NewTimer(signalsEvery)
	defer t.Stop()
	select {
	case <-w.freed:
	case <-ctx.Done():
	case <-t.C:
	}
}

// sleepOrSlot sleeps d when the queues are empty. With jobs in flight it wakes early when one finishes,
// since a finished chain link may have queued the next one.
func (w *Worker) sleepOrSlot(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	if w.inFlight() == 0 {
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return
	}
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-w.freed:
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// finish waits for in-flight jobs. When ctx was cancelled (a signal) they get ShutdownGrace; after it
// their handlers are cancelled and their rows released so that another worker runs them.
func (w *Worker) finish(ctx context.Context, cancelJobs context.CancelFunc, status int) int {
	if ctx.Err() != nil {
		w.closeStopping()
	}
	if ctx.Err() != nil {
		w.returnPrefetched(ctx)
	}
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	// Without a grace period each job finishes, bounded by its own timeout, unless StopNow is called.
	var grace <-chan time.Time
	if ctx.Err() != nil && w.cfg.ShutdownGrace > 0 {
		t := time.NewTimer(w.cfg.ShutdownGrace)
		defer t.Stop()
		grace = t.C
	}
	why := "shutdown grace period over; releasing unfinished jobs"
	select {
	case <-done:
		return status
	case <-grace:
	case <-w.now:
		why = "stopping now; releasing unfinished jobs"
	}
	w.mu.Lock()
	left := make([]*runningJob, 0, len(w.running))
	for rj := range w.running {
		left = append(left, rj)
	}
	w.mu.Unlock()
	w.log.Warn(why, "jobs", len(left), "grace", w.cfg.ShutdownGrace)
	var rctx context.Context // nil: each release's own completionTimeout
	if w.stoppingNow() {
		// Stopping now, the releases get what is left of stopNowReleases, counted from the signal
		// (a claim that did not return may have taken the rest), and at least a second.
		deadline := time.Now().Add(stopNowReleases)
		if at := w.stopNowAt.Load(); at != 0 {
			deadline = time.Unix(0, at).Add(stopNowReleases)
		}
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(context.Background(), later(deadline, time.Now().Add(time.Second)))
		defer cancel()
	}
	for _, rj := range left {
		w.completeIn(rctx, rj, "release at shutdown", func(ctx context.Context) error {
			if !rj.begun {
				// Its handler never started (it waited for its turn, or had not got that far): handed
				// back untouched, its attempt not spent, as PHP's worker would not have taken it yet.
				return w.queue.JobReturn(ctx, []*laravel.Job{rj.job})
			}
			return w.queue.JobRelease(ctx, rj.job, &laravel.JobReleaseParams{Now: w.clock().Unix()})
		}, &w.stats.returned)
	}
	cancelJobs()
	// Handlers that return once told to stop are waited for, as long as one that ignores its timeout
	// would be, so that their middleware lets go of its locks before the process exits.
	abandon := time.NewTimer(w.cfg.AbandonAfter)
	defer abandon.Stop()
	select {
	case <-done:
	case <-abandon.C:
	case <-w.now:
	}
	return status
}

// closeStopping tells the jobs of the Run under way that wait for their turn that it stops, as PHP's
// worker stops after its job (a signal, queue:restart, --max-time, --memory): they are handed back
// untouched. --max-jobs does not: the jobs it claimed count, and PHP's worker would run them all.
func (w *Worker) closeStopping() {
	if sig := w.stopping.Load(); sig != nil {
		sig.once.Do(func() { close(sig.ch) })
	}
}

// stopSignal is closed once when a Run stops.
type stopSignal struct {
	ch   chan struct{}
	once sync.Once
}

// stopNowReleases bounds the releases of the running jobs' rows when the worker stops now.
const stopNowReleases = 5 * time.Second

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// returnJobs hands back jobs that were claimed but never started.
func (w *Worker) returnJobs(rj *runningJob) {
	w.completeLocked(rj, "return", func(ctx context.Context) error {
		return w.queue.JobReturn(ctx, []*laravel.Job{rj.job})
	}, &w.stats.returned)
}

// restartSignal reads Laravel's queue:restart cache value ("" when absent). When it cannot be read,
// it returns prev, so that a database hiccup is not mistaken for a restart.
func (w *Worker) restartSignal(ctx context.Context, prev string) string {
	if !w.cfg.CacheEnabled {
		return ""
	}
	v, err := w.cacheGet(ctx, restartKey)
	if err != nil {
		if ctx.Err() == nil { // not the read a stop interrupted
			w.log.Warn("read queue:restart signal", "error", err)
		}
		return prev
	}
	return v
}
