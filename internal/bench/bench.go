// Package bench measures artisan-go's claim strategies against each other, against a bare batched
// claim-and-delete SQL loop (the ceiling) and against PHP's own `php artisan queue:work`, on the same
// jobs table in the same run. Jobs are App\Jobs\Noop jobs exactly as Laravel 8.83 writes them; Go rows
// drain them with the real worker package and a no-op handler. Every execution is recorded in a
// protocol table, from which executions, duplicates and lost jobs are counted.
package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// StrategiesNone, as the only strategy, runs no in-process strategy row: only the PHP, queue:work, bare
// and peer rows the other parameters ask for.
const StrategiesNone = "none"

// Special strategy names of rows that are not a Go claim strategy.
const (
	RowPHP  = "php queue:work"
	RowBare = "bare SQL"
	// RowBarePK is the bare loop on PostgreSQL with sorting disabled for its connections, so that its
	// claim walks the primary key whatever the table's statistics say, as the batch strategy's does.
	RowBarePK = "bare SQL, pk walk"
)

// ErrParams is wrapped by errors for unusable parameters.
var ErrParams = errors.New("invalid bench parameters")

// Database is one database to run the bench on.
type Database struct {
	Dialect laravel.Dialect // mysql, pgsql or sqlite
	DSN     string          // Go driver DSN of a database the bench may create tables in
}

// Params shapes a bench run.
type Params struct {
	Databases   []Database
	Strategies  []string // Go claim strategies; empty means every registered one, StrategiesNone none
	Workers     []int    // worker counts; each Go worker is one worker.Worker on its own connection
	Concurrency int      // jobs in flight per Go worker
	Batch       int      // rows per claim for batching strategies and the bare loop; 0 is Concurrency
	Jobs        int      // jobs per row
	// Repeat runs every row this many times, in rounds, and reports each row's median run (see
	// medianRow); 0 or 1 runs each once.
	Repeat int
	Rate   float64       // jobs per second enqueued while the workers drain; 0 enqueues all first
	Sleep  time.Duration // worker sleep when the queue is empty
	Bare   bool          // add the bare SQL row per database and worker count
	PHP    int           // PHP queue:work processes for the baseline row; 0 for none
	// PHPDatabases limits the PHP row to these dialects; empty means every database.
	PHPDatabases []string
	PHPApp       string // the Laravel application directory (testdata/laravel)
	PHPBinary    string // php
	LegacyIndex  bool   // Laravel 5.4's (queue, reserved_at) index and plain FOR UPDATE
	// ServerVersion, when set, is the version the bench process's connections take the servers for
	// (laravel.OpenParams.ServerVersion): it decides the locks of their claims.
	ServerVersion string
	Timeout       time.Duration // per row
	// WorkBinary is an artisan-go binary whose queue:work command gets rows of its own, run as
	// separate processes with their defaults; empty leaves those rows out.
	WorkBinary string
	// WorkConcurrency adds a second queue:work row at this --concurrency; 0 leaves it out.
	WorkConcurrency int
	// WorkStrategy is the --strategy of the queue:work rows; empty lets the command choose.
	WorkStrategy string
	// PHPProducers, with Rate, dispatches the jobs from this many processes of the Laravel application
	// instead of from the bench, each at its share of the rate.
	PHPProducers int
	// AppWrites times the application's own writes beside each row: one process of PHPApp inserts a row
	// into a table of its own every 10 ms while the row drains (Row.AppWrites).
	AppWrites bool
	// LongTx holds a REPEATABLE READ snapshot open on its own connection for the whole of each row
	// (with Rate, a steady churn); Row.Steady then also has the rows waiting for clean-up.
	LongTx bool
	// PeersDir is internal/bench/peers of the source tree: on PostgreSQL, River and graphile-worker
	// burn down the same number of jobs at each worker count. Empty leaves them out.
	PeersDir string
	// PeerWorkers limits the peers' rows to these worker counts; empty means every one of Workers.
	PeerWorkers []int
	Progress    func(format string, args ...any)
	Logger      *slog.Logger // the Go workers' log; nil discards it
}

// Row is the measurement of one strategy at one worker count on one database.
type Row struct {
	Database     string  `json:"database"`
	Strategy     string  `json:"strategy"`
	Workers      int     `json:"workers"`
	Jobs         int     `json:"jobs"`
	Seconds      float64 `json:"seconds"`
	JobsPerSec   float64 `json:"jobs_per_sec"`
	Executions   int     `json:"executions"`
	Duplicates   int     `json:"duplicates"` // -1 when not observable (PHP)
	Lost         int     `json:"lost"`
	MaxReorder   int     `json:"max_reorder"` // -1 when not observable
	Deadlocks    int64   `json:"deadlocks"`
	Retried      int64   `json:"retried"`
	P50Millis    float64 `json:"p50_ms"` // available → started; -1 when not observable
	P99Millis    float64 `json:"p99_ms"`
	PeakRSSMB    float64 `json:"peak_rss_mb"`
	Error        string  `json:"error,omitempty"`
	LeftInTable  int     `json:"left_in_table"`
	FailedInRows int     `json:"failed_jobs"`
	// Runs has the jobs/s of every run of the row in the order they ran, when it ran more than once
	// (Params.Repeat); the row's other figures are those of its median run.
	Runs []float64 `json:"runs,omitempty"`
	// Note says what a row's processes chose for themselves, such as queue:work's claim strategy.
	Note string `json:"note,omitempty"`
	// Steady has the figures of a row run at a steady rate (Params.Rate), beside a long transaction
	// with Params.LongTx.
	Steady *Steady `json:"steady,omitempty"`
	// AppWrites has the application's inserts beside the row, with Params.AppWrites.
	AppWrites *AppWrites `json:"app_writes,omitempty"`
	// Writes counts, on SQLite, the transactions and the write statements outside them that the row's
	// connections in the bench process sent to the file, each taking its one write lock and, when it
	// changed a row, a flush to disk (laravel.ConnStats.Writes); 0 on servers and for rows of other
	// processes.
	Writes int64 `json:"writes,omitempty"`
}

// Report is a whole run.
type Report struct {
	Started time.Time `json:"started"`
	Host    string    `json:"host"`
	Params  struct {
		Jobs        int     `json:"jobs"`
		Repeat      int     `json:"repeat,omitempty"`
		Rate        float64 `json:"rate"`
		Concurrency int     `json:"concurrency"`
		Batch       int     `json:"batch"`
		LegacyIndex bool    `json:"legacy_index"`
		// ServerVersion is Params.ServerVersion, when set.
		ServerVersion string `json:"server_version,omitempty"`
	} `json:"params"`
	Servers map[string]string `json:"servers"`
	Rows    []Row             `json:"rows"`
}

// rowSpec is one row of a run: its strategy (or special row) and worker count, and whether a peer's
// program runs it.
type rowSpec struct {
	name    string
	workers int
	peer    bool
}

// medianRow combines the runs of one row: the figures of the run with the median rate (the lower of
// the two middle ones for an even count), the duplicates and lost jobs of every run added up, and each
// run's rate in Runs. A run that failed is the row, with its error.
func medianRow(runs []Row) Row {
	if len(runs) == 1 {
		return runs[0]
	}
	for _, r := range runs {
		if r.Error != "" {
			return r
		}
	}
	byRate := slices.Clone(runs)
	slices.SortStableFunc(byRate, func(a, b Row) int { return cmp.Compare(a.JobsPerSec, b.JobsPerSec) })
	row := byRate[(len(byRate)-1)/2]
	row.Runs = nil
	dup, lost := 0, 0
	for _, r := range runs {
		row.Runs = append(row.Runs, r.JobsPerSec)
		if r.Duplicates > 0 {
			dup += r.Duplicates
		}
		lost += r.Lost
	}
	if row.Duplicates >= 0 {
		row.Duplicates = dup
	}
	row.Lost = lost
	return row
}

// Run runs every row and returns the report. A row that fails is reported with its error; the others
// still run.
func Run(ctx context.Context, p Params) (*Report, error) {
	if err := p.defaults(); err != nil {
		return nil, err
	}
	// The Go workers run with queue:work's garbage collection settings (no --memory limit here).
	defer worker.TuneGC(0)()
	r := &Report{Started: time.Now().UTC(), Servers: map[string]string{}}
	r.Host, _ = os.Hostname()
	r.Params.Jobs, r.Params.Rate, r.Params.Concurrency, r.Params.Batch, r.Params.LegacyIndex = p.Jobs, p.Rate, p.Concurrency, p.Batch, p.LegacyIndex
	r.Params.ServerVersion = p.ServerVersion
	if p.Repeat > 1 {
		r.Params.Repeat = p.Repeat
	}
	var pe *peers
	for _, d := range p.Databases {
		env, err := prepare(ctx, d, p)
		if err != nil {
			return r, err
		}
		if p.PeersDir != "" && env.d.Dialect == laravel.Postgres && pe == nil {
			if pe, err = preparePeers(ctx, p.PeersDir, p.Progress); err != nil {
				env.close()
				return r, err
			}
			defer pe.close()
		}
		r.Servers[string(d.Dialect)] = env.version
		var specs []rowSpec
		if p.PHP > 0 && (len(p.PHPDatabases) == 0 || slices.Contains(p.PHPDatabases, string(d.Dialect))) {
			specs = append(specs, rowSpec{RowPHP, p.PHP, false})
		}
		for _, w := range p.Workers {
			if p.Bare {
				specs = append(specs, rowSpec{RowBare, w, false})
				if d.Dialect == laravel.Postgres {
					specs = append(specs, rowSpec{RowBarePK, w, false})
				}
			}
			if p.WorkBinary != "" {
				specs = append(specs, rowSpec{WorkRowName(p.WorkStrategy, 0), w, false})
				if p.WorkConcurrency > 0 {
					specs = append(specs, rowSpec{WorkRowName(p.WorkStrategy, p.WorkConcurrency), w, false})
				}
			}
			for _, s := range p.Strategies {
				if s != StrategiesNone {
					specs = append(specs, rowSpec{s, w, false})
				}
			}
			if pe != nil && env.d.Dialect == laravel.Postgres && (len(p.PeerWorkers) == 0 || slices.Contains(p.PeerWorkers, w)) {
				specs = append(specs, rowSpec{RowRiver, w, true}, rowSpec{RowGraphile, w, true})
			}
		}
		// Every row runs once per round, in the same order, so that a slow spell of the machine
		// falls on all of them alike.
		runs := make([][]Row, len(specs))
		for round := range p.Repeat {
			if p.Repeat > 1 {
				p.Progress("%s: round %d of %d", d.Dialect, round+1, p.Repeat)
			}
			for i, sp := range specs {
				if sp.peer {
					runs[i] = append(runs[i], env.runPeer(ctx, pe, sp.name, sp.workers))
				} else {
					runs[i] = append(runs[i], env.run(ctx, sp.name, sp.workers))
				}
				if ctx.Err() != nil {
					break
				}
			}
			if ctx.Err() != nil {
				break
			}
		}
		var rows []Row
		for _, rs := range runs {
			if len(rs) > 0 {
				rows = append(rows, medianRow(rs))
			}
		}
		env.close()
		r.Rows = append(r.Rows, rows...)
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
	}
	return r, nil
}

func (p *Params) defaults() error {
	if len(p.Databases) == 0 {
		return fmt.Errorf("%w: no database: use --db mysql,pgsql,sqlite", ErrParams)
	}
	if len(p.Strategies) == 0 {
		p.Strategies = laravel.Strategies()
	}
	for _, s := range p.Strategies {
		if s != StrategiesNone && !slices.Contains(laravel.Strategies(), s) {
			return fmt.Errorf("%w: strategy %q: use one of %s", ErrParams, s, strings.Join(laravel.Strategies(), ", "))
		}
	}
	if len(p.Workers) == 0 {
		p.Workers = []int{1, 4, 16}
	}
	for _, w := range p.Workers {
		if w < 1 {
			return fmt.Errorf("%w: --workers %d: use counts of at least 1", ErrParams, w)
		}
	}
	if p.Rate < 0 {
		return fmt.Errorf("%w: --rate %v: give jobs per second above 0, or 0 to enqueue every job first", ErrParams, p.Rate)
	}
	if p.LongTx && p.Rate <= 0 {
		return fmt.Errorf("%w: --long-tx needs a steady churn: give --rate too, e.g. --rate 200 --jobs 120000 for ten minutes", ErrParams)
	}
	if p.PHPProducers > 0 && p.Rate <= 0 {
		return fmt.Errorf("%w: --php-producers dispatch at a steady rate: give --rate too, e.g. --rate 500", ErrParams)
	}
	if p.PeersDir != "" && !slices.ContainsFunc(p.Databases, func(d Database) bool { return d.Dialect == laravel.Postgres }) {
		return fmt.Errorf("%w: --peers adds rows on PostgreSQL only (River and graphile-worker run on it): give --db pgsql too", ErrParams)
	}
	if p.Repeat < 1 {
		p.Repeat = 1
	}
	if p.Jobs < 1 {
		return fmt.Errorf("%w: --jobs %d: use at least 1", ErrParams, p.Jobs)
	}
	if p.Concurrency < 1 {
		p.Concurrency = 8
	}
	if p.Batch < 1 {
		p.Batch = p.Concurrency // as queue:work's claim batch follows its concurrency
	}
	if p.Sleep <= 0 {
		p.Sleep = 10 * time.Millisecond
	}
	if p.Timeout <= 0 {
		p.Timeout = 10 * time.Minute
	}
	if p.PHPBinary == "" {
		p.PHPBinary = "php"
	}
	if p.Progress == nil {
		p.Progress = func(string, ...any) {}
	}
	return nil
}

// noopPayloads returns n payloads of App\Jobs\Noop($i) as Laravel 8.83 dispatches them: the job's own
// public $n first, then the Queueable and InteractsWithQueue properties, each job with its own uuid.
func noopPayloads(n int) ([][]byte, error) {
	out := make([][]byte, n)
	for i := range n {
		cmd := &payload.Object{Class: `App\Jobs\Noop`}
		cmd.Set("n", int64(i))
		for _, name := range []string{"job", "connection", "queue", "chainConnection", "chainQueue", "chainCatchCallbacks", "delay", "afterCommit"} {
			cmd.Set(name, nil)
		}
		cmd.Set("middleware", &payload.Array{})
		cmd.Set("chained", &payload.Array{})
		b, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", Command: cmd})
		if err != nil {
			return nil, fmt.Errorf("build Noop payload: %w", err)
		}
		out[i] = b
	}
	return out, nil
}

// protocol collects executions in memory while a row runs; they are written to the protocol table
// afterwards, so that recording does not compete with the queue for the database.
type protocol struct {
	start   time.Time
	next    atomic.Int64
	ids     []int64
	at      []int64 // nanoseconds since start
	worker  []int32
	unique  sync.Map
	nUnique atomic.Int64
	// external counts the executions that processes of their own report, which record no starts here.
	external atomic.Int64
	// note is what those processes chose for themselves (the claim strategy), for the row.
	note string
	// claims are the in-process workers' claim calls, with --rate (see claimTimer).
	claimMu sync.Mutex
	claims  []claimSample
}

// claimSample is one timed call (a claim, an insert): when it began, since the protocol's start, and
// how long it took.
type claimSample struct{ at, took time.Duration }

// overlaps reports whether the call ran during any part of [from, to): a call that spans a whole window
// counts in it, so that a stall longer than the window shows there rather than in no window at all.
func (s claimSample) overlaps(from, to time.Duration) bool { return s.at < to && s.at+s.took >= from }

// claimTimer is a worker.Observer that records every claim call's duration on the protocol.
type claimTimer struct{ proto *protocol }

func (c claimTimer) Claimed(_ string, _ int, took time.Duration, _ error) {
	at := time.Since(c.proto.start) - took
	c.proto.claimMu.Lock()
	c.proto.claims = append(c.proto.claims, claimSample{at: at, took: took})
	c.proto.claimMu.Unlock()
}

func (claimTimer) JobStarted(ctx context.Context, _ *worker.JobEvent) context.Context { return ctx }

func (claimTimer) JobFinished(context.Context, *worker.JobEvent) {}

func newProtocol(capacity int) *protocol {
	return &protocol{start: time.Now(), ids: make([]int64, capacity), at: make([]int64, capacity), worker: make([]int32, capacity)}
}

// record notes that worker started job id now.
func (p *protocol) record(id int64, worker int) {
	p.recordAt(id, time.Since(p.start).Nanoseconds(), worker)
}

// recordAt notes that worker started job id at nanoseconds since the protocol's start.
func (p *protocol) recordAt(id, at int64, worker int) {
	i := p.next.Add(1) - 1
	if int(i) < len(p.ids) {
		p.ids[i], p.at[i], p.worker[i] = id, at, int32(worker)
	}
	if _, dup := p.unique.LoadOrStore(id, struct{}{}); !dup {
		p.nUnique.Add(1)
	}
}

func (p *protocol) len() int { return min(int(p.next.Load()), len(p.ids)) }

// noopHandler records the execution and does nothing else.
func noopHandler(p *protocol, worker int) handlers.Handler {
	return handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		p.record(j.ID, worker)
		return nil
	})
}

// workerConfig is queue:work's configuration for a bench worker: Laravel's defaults, with the
// database cache (the restart signal is read as PHP reads it), a short sleep, no memory limit.
func workerConfig(p Params) worker.Config {
	c := worker.Defaults()
	c.Concurrency = p.Concurrency
	c.Sleep = p.Sleep
	c.MemoryMB = 0
	c.Tries = 1
	c.ShutdownGrace = 30 * time.Second
	return c
}

// percentile returns the q-quantile (0..1) of sorted values.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// peakRSS returns this process's peak resident set in MB and resets the peak, so that the next
// reading covers only what happens after this one.
func peakRSS() float64 {
	mb := processPeakRSS("self")
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return mb
}

// processPeakRSS returns the peak resident set (VmHWM) in MB of the process pid ("self" for this one),
// or 0 when it cannot be read.
func processPeakRSS(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	var kb float64
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
		}
	}
	return kb / 1024
}
