package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/benchsql"
	"github.com/artisan-go/artisan-go/worker"
)

// drainer drains the jobs table in one way (Go strategy, bare SQL, PHP) until stop says so.
//
// A drainer calls ready once its workers are set up and about to start; the clock starts there.
type drainer func(ctx context.Context, proto *protocol, ready func(), stop func() bool) (stats laravel.ConnStats, rssMB float64, err error)

// run measures one row.
func (e *env) run(ctx context.Context, name string, workers int) Row {
	row := Row{Database: string(e.d.Dialect), Strategy: name, Workers: workers, Jobs: e.p.Jobs, Duplicates: -1, MaxReorder: -1, P50Millis: -1, P99Millis: -1}
	e.p.Progress("%s: %s with %s, %d jobs", e.d.Dialect, name, workersText(workers), e.p.Jobs)
	if err := e.run1(ctx, name, workers, &row); err != nil {
		row.Error = err.Error()
		e.p.Progress("%s: %s with %s: %v", e.d.Dialect, name, workersText(workers), err)
	}
	return row
}

func (e *env) run1(ctx context.Context, name string, workers int, row *Row) error {
	if err := e.reset(ctx); err != nil {
		return err
	}
	var ids []int64
	var err error
	if e.p.Rate <= 0 {
		if ids, err = e.enqueueAll(ctx, time.Now().Unix()); err != nil {
			return err
		}
	}
	var drain drainer
	switch name {
	case RowPHP:
		drain = e.drainPHP(workers)
	case RowBare:
		drain = e.drainBare(workers, false)
	case RowBarePK:
		drain = e.drainBare(workers, true)
	case WorkRowName(e.p.WorkStrategy, 0):
		drain = e.drainWork(workers, 0)
	case WorkRowName(e.p.WorkStrategy, e.p.WorkConcurrency):
		drain = e.drainWork(workers, e.p.WorkConcurrency)
	default:
		drain = e.drainGo(name, workers)
	}
	timeout := e.rowTimeout()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	peakRSS()
	proto := newProtocol(2*e.p.Jobs + 64)
	var pr *producer
	pushQueue, err := laravel.NewQueue(e.admin, laravel.QueueParams{Strategy: "delete-retry"})
	if err != nil {
		return err
	}
	var depth *depthSampler
	var release func() error
	if e.p.LongTx {
		if release, err = e.admin.HoldSnapshot(rctx); err != nil {
			return err
		}
		defer func() {
			if release != nil {
				_ = release()
			}
		}()
	}
	var app *appWriter
	if e.p.AppWrites {
		if app, err = e.startAppWriter(rctx); err != nil {
			return err
		}
		defer func() {
			if app != nil {
				_, _ = app.stop()
			}
		}()
	}
	ready := func() {
		proto.start = time.Now()
		if app != nil {
			app.record(true)
		}
		switch {
		case e.p.Rate > 0 && e.p.PHPProducers > 0:
			pr = e.startPHPProducers(rctx, proto)
		case e.p.Rate > 0:
			// Every job is enqueued even when the row runs out of time first (pushes can wait for
			// SQLite's write lock beside the workers), so that what the row leaves counts as left.
			pr = e.startProducer(ctx, pushQueue, proto)
		}
		if e.p.Rate > 0 {
			depth = e.sampleDepth(rctx, proto.start)
		}
	}
	// The clock stops when the last job's completion is committed, for every row alike: when no
	// unfinished row is left in the table. Rows that record each start look only once every job has
	// started; rows of other processes look all along.
	external := name == RowPHP || strings.HasPrefix(name, RowWork)
	var finished time.Duration
	stop := func() bool {
		if rctx.Err() != nil {
			return true
		}
		if e.p.Rate > 0 {
			if pr == nil {
				return false
			}
			select {
			case <-pr.done:
			default:
				return false
			}
		}
		if !external && int(proto.nUnique.Load()) < e.p.Jobs {
			return false
		}
		left, err := e.admin.JobUnfinishedExists(rctx, &laravel.JobUnfinishedExistsParams{})
		if err != nil || left {
			return false
		}
		finished = time.Since(proto.start)
		if app != nil {
			app.record(false)
		}
		return true
	}
	stats, rss, err := drain(rctx, proto, ready, stop)
	if app != nil {
		aw, aerr := app.stop()
		app = nil
		// The row's own timeout ends the process too: the row then says it timed out, not that.
		if aerr != nil && err == nil && rctx.Err() == nil {
			return aerr
		}
		row.AppWrites = aw
	}
	if depth != nil {
		depth.close()
	}
	if err != nil {
		return err
	}
	var cleanup *laravel.CleanupStatus
	if e.p.LongTx {
		cleanup, _ = e.admin.Cleanup(ctx)
		err := release()
		release = nil
		if err != nil && rctx.Err() == nil { // a row that timed out lost its snapshot with it: reported below
			return err
		}
	}
	if finished == 0 {
		finished = time.Since(proto.start)
	}
	if pr != nil {
		<-pr.done
		if pr.err != nil {
			return fmt.Errorf("enqueue at a steady rate: %w", pr.err)
		}
		ids = pr.ids
	}
	row.Seconds = finished.Seconds()
	row.JobsPerSec = float64(e.p.Jobs) / row.Seconds
	row.Deadlocks, row.Retried = stats.Deadlocks, stats.Retries
	row.Writes = stats.Writes
	row.PeakRSSMB = rss
	row.Note = proto.note
	if row.LeftInTable, err = e.count(ctx, e.admin.Tables().Jobs); err != nil {
		return err
	}
	if row.FailedInRows, err = e.count(ctx, e.admin.Tables().FailedJobs); err != nil {
		return err
	}
	if external {
		// PHP's Noop and queue:work's builtin no-op record nothing: what is gone from the table without
		// a failure ran. queue:work counts its own executions, so its duplicates show. A row still in
		// the table (the row timed out) did not run and is not lost; a failed one is.
		row.Executions = e.p.Jobs - row.LeftInTable - row.FailedInRows
		row.Lost = row.FailedInRows
		if name != RowPHP {
			row.Duplicates = int(proto.external.Load()) - row.Executions
			row.Executions = int(proto.external.Load())
		}
	} else {
		execs, distinct, err := e.writeProtocol(ctx, proto)
		if err != nil {
			return err
		}
		row.Executions, row.Duplicates = execs, execs-distinct
		if row.Lost, err = e.lost(ctx, proto, ids); err != nil {
			return err
		}
		e.order(proto, ids, pr, row)
	}
	if pr != nil && depth != nil {
		row.Steady = e.steadyFigures(proto, pr, depth, finished)
		if cleanup != nil {
			row.Steady.DeadRows, row.Steady.DeadRowsKind = cleanup.DeadRows, cleanup.DeadRowsKind
		}
	}
	if rctx.Err() != nil && ctx.Err() == nil {
		// The jobs that ran, not the jobs given, over the time the row had.
		row.JobsPerSec = float64(min(row.Executions, e.p.Jobs)) / row.Seconds
		return fmt.Errorf("%w after %v with %d jobs left (give a longer --timeout)", errTimeout, timeout, row.LeftInTable)
	}
	return nil
}

// lost counts the jobs given that never ran and are gone from the table. Those still in it did not run
// because the row timed out first: they are left, not lost.
func (e *env) lost(ctx context.Context, proto *protocol, ids []int64) (int, error) {
	left, err := benchsql.IDs(ctx, e.admin, e.admin.Tables().Jobs)
	if err != nil {
		return 0, err
	}
	ran := make(map[int64]bool, proto.len())
	for i := range proto.len() {
		ran[proto.ids[i]] = true
	}
	lost := 0
	for _, id := range ids {
		if !ran[id] && !left[id] {
			lost++
		}
	}
	return lost, nil
}

// rowTimeout is how long a row may run: Params.Timeout, beyond the time a row at a steady rate takes
// to enqueue its jobs.
func (e *env) rowTimeout() time.Duration {
	if e.p.Rate <= 0 {
		return e.p.Timeout
	}
	return e.p.Timeout + time.Duration(float64(e.p.Jobs)/e.p.Rate*float64(time.Second))
}

// order computes the largest reorder and the available → started percentiles from the first
// execution of each job.
func (e *env) order(proto *protocol, ids []int64, pr *producer, row *Row) {
	index := make(map[int64]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	type exec struct {
		id int64
		at int64
	}
	first := map[int64]int64{}
	for i := range proto.len() {
		id, at := proto.ids[i], proto.at[i]
		if prev, ok := first[id]; !ok || at < prev {
			first[id] = at
		}
	}
	execs := make([]exec, 0, len(first))
	for id, at := range first {
		execs = append(execs, exec{id, at})
	}
	slices.SortFunc(execs, func(a, b exec) int { return int(a.at - b.at) })
	lat := make([]float64, 0, len(execs))
	for pos, x := range execs {
		if i, ok := index[x.id]; ok {
			row.MaxReorder = max(row.MaxReorder, abs(pos-i))
		}
		var avail int64
		if pr != nil {
			avail = pr.enqueued[x.id]
		}
		lat = append(lat, float64(x.at-avail)/1e6)
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		row.P50Millis, row.P99Millis = percentile(lat, 0.50), percentile(lat, 0.99)
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// waitUntil polls stop every few milliseconds.
func waitUntil(stop func() bool) {
	for !stop() {
		time.Sleep(2 * time.Millisecond)
	}
}

// drainGo runs workers worker.Workers of a strategy, each on its own connection as separate
// processes would, with a no-op handler for App\Jobs\Noop.
func (e *env) drainGo(strategy string, workers int) drainer {
	return func(ctx context.Context, proto *protocol, ready func(), stop func() bool) (laravel.ConnStats, float64, error) {
		var stats laravel.ConnStats
		type running struct {
			conn *laravel.Conn
			q    laravel.Queue
			w    *worker.Worker
		}
		rs := make([]running, workers)
		defer func() {
			for _, r := range rs {
				if r.conn != nil {
					r.conn.Close()
				}
			}
		}()
		for i := range rs {
			op := e.open
			// A few connections per worker: completions are grouped, and 16 workers must stay far below
			// the server's max_connections (151 on a default MariaDB) beside everything else using it.
			op.MaxOpenConns = min(e.p.Concurrency+2, 6)
			conn, err := laravel.Open(ctx, op)
			if err != nil {
				return stats, 0, err
			}
			rs[i].conn = conn
			q, err := laravel.NewQueue(conn, laravel.QueueParams{Strategy: strategy, Batch: e.p.Batch})
			if err != nil {
				return stats, 0, err
			}
			reg := handlers.NewRegistry()
			reg.Register(`App\Jobs\Noop`, noopHandler(proto, i))
			var obs worker.Observer
			if e.p.Rate > 0 {
				obs = claimTimer{proto}
			}
			w, err := worker.New(worker.Params{Queue: q, Conn: conn, Registry: reg, Config: workerConfig(e.p), Logger: e.p.Logger, Observer: obs})
			if err != nil {
				return stats, 0, err
			}
			rs[i].q, rs[i].w = q, w
		}
		wctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		errs := make([]error, workers)
		ready()
		for i, r := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = r.w.Run(wctx)
			}()
		}
		waitUntil(stop)
		cancel()
		wg.Wait()
		conns := make([]*laravel.Conn, len(rs))
		for i, r := range rs {
			errs = append(errs, laravel.Settle(context.Background(), r.q))
			conns[i] = r.conn
		}
		return finish(conns, errs)
	}
}

// finish sums the connections' conflict counters, reads the peak RSS and returns the first error.
func finish(conns []*laravel.Conn, errs []error) (laravel.ConnStats, float64, error) {
	var stats laravel.ConnStats
	for _, c := range conns {
		st := c.Stats()
		stats.Deadlocks += st.Deadlocks
		stats.Busy += st.Busy
		stats.Retries += st.Retries
		stats.Writes += st.Writes
	}
	return stats, peakRSS(), errors.Join(errs...)
}

// drainBare is the ceiling: a minimal batched claim and delete loop in plain SQL per goroutine, each
// on its own connection, with none of the worker's bookkeeping and no payload decoding. With pkWalk
// (PostgreSQL) its connections plan without sorts, so that the claim walks the primary key.
func (e *env) drainBare(workers int, pkWalk bool) drainer {
	return func(ctx context.Context, proto *protocol, ready func(), stop func() bool) (laravel.ConnStats, float64, error) {
		var stats laravel.ConnStats
		conns := make([]*laravel.Conn, workers)
		defer func() {
			for _, c := range conns {
				if c != nil {
					c.Close()
				}
			}
		}()
		for i := range conns {
			op := e.open
			op.MaxOpenConns = 2
			if pkWalk {
				op.DSN = withPostgresOption(op.DSN, "-c enable_sort=off")
			}
			c, err := laravel.Open(ctx, op)
			if err != nil {
				return stats, 0, err
			}
			conns[i] = c
		}
		var wg sync.WaitGroup
		errs := make([]error, workers)
		var done bool
		var mu sync.Mutex
		isDone := func() bool { mu.Lock(); defer mu.Unlock(); return done }
		ready()
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !isDone() {
					ids, err := benchsql.BareClaim(ctx, c, e.p.Batch)
					if err != nil {
						if ctx.Err() != nil {
							return
						}
						if benchsql.Conflict(err) {
							continue
						}
						errs[i] = err
						return
					}
					if len(ids) == 0 {
						time.Sleep(e.p.Sleep)
						continue
					}
					for _, id := range ids {
						proto.record(id, i)
					}
					if err := benchsql.BareDelete(ctx, c, ids); err != nil && ctx.Err() == nil {
						errs[i] = err
						return
					}
				}
			}()
		}
		waitUntil(stop)
		mu.Lock()
		done = true
		mu.Unlock()
		wg.Wait()
		return finish(conns, errs)
	}
}

// withPostgresOption adds a server option (the options connection parameter) to a PostgreSQL DSN, in
// URL or keyword/value form.
func withPostgresOption(dsn, option string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "options=" + strings.ReplaceAll(url.QueryEscape(option), "+", "%20")
	}
	return dsn + " options='" + option + "'"
}
