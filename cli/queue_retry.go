package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// listFlag collects a repeatable option.
type listFlag struct{ values []string }

func (l *listFlag) String() string     { return strings.Join(l.values, ",") }
func (l *listFlag) Set(v string) error { l.values = append(l.values, v); return nil }

// bulkRetry is how many jobs make a retry long: from there on, progress is reported on stderr instead
// of one line per job on stdout.
const bulkRetry = 1000

var rangePattern = regexp.MustCompile(`^[0-9]+-[0-9]+$`)

// retryIDs resolves queue:retry's arguments as RetryCommand::getJobIds does: `all`, else --queue,
// else the ids plus the --range ranges, without duplicates. explicit says the ids were named one by
// one (they must all exist).
func (a *adminRun) retryIDs(ctx context.Context, conn *laravel.Conn, prov failedProvider) (refs []*laravel.FailedJobRef, explicit bool, err error) {
	if len(a.args) == 1 && a.args[0] == "all" {
		ids, err := conn.FailedJobIDs(ctx, &laravel.FailedJobIDsParams{UUIDs: prov.byUUID})
		return ids, false, err
	}
	if q := a.option("queue"); q != "" {
		ids, err := conn.FailedJobIDs(ctx, &laravel.FailedJobIDsParams{Queue: q, UUIDs: prov.byUUID})
		if err == nil && len(ids) == 0 {
			err = fmt.Errorf("Unable to find failed jobs for queue [%s].", q)
		}
		return ids, false, err
	}
	ids := append([]string(nil), a.args...)
	for _, r := range a.fs.Lookup("range").Value.(*listFlag).values {
		if !rangePattern.MatchString(r) {
			return nil, false, fmt.Errorf("--range=%q: give FROM-TO with two whole numbers, e.g. --range=1-5", r)
		}
		from, _ := strconv.ParseInt(strings.Split(r, "-")[0], 10, 64)
		to, _ := strconv.ParseInt(strings.Split(r, "-")[1], 10, 64)
		step := int64(1)
		if from > to {
			step = -1 // PHP's range() counts down, and the jobs go back to the queue in that order
		}
		if (to-from)*step >= 10_000_000 {
			return nil, false, fmt.Errorf("--range=%q spans more than 10,000,000 ids", r)
		}
		for n := from; n != to+step; n += step {
			ids = append(ids, strconv.FormatInt(n, 10))
		}
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if id != "" && id != "0" && !seen[id] {
			seen[id] = true
			refs = append(refs, prov.ref(id))
		}
	}
	return refs, len(a.fs.Lookup("range").Value.(*listFlag).values) == 0, nil
}

func runQueueRetry(ctx context.Context, a *adminRun) int {
	r, err := a.newRetrier(ctx)
	if err != nil {
		return a.failure(err)
	}
	ids, explicit, err := a.retryIDs(ctx, r.conn, r.prov)
	if err != nil {
		return a.failure(err)
	}
	if r.prov.null {
		ids = nil
	}
	return r.retry(ctx, ids, explicit)
}

// retrier puts failed jobs back on their queue, as queue:retry does.
type retrier struct {
	a    *adminRun
	conn *laravel.Conn
	prov failedProvider
	kr   *payload.Keyring
}

// newRetrier opens the database and reads the failed-job provider and APP_KEY.
func (a *adminRun) newRetrier(ctx context.Context) (*retrier, error) {
	prov, err := a.failedProvider()
	if err == nil {
		err = a.needUUIDs(ctx, prov)
	}
	if err != nil {
		return nil, err
	}
	conn, err := a.conn(ctx)
	if err != nil {
		return nil, err
	}
	r := &retrier{a: a, conn: conn, prov: prov}
	if a.cfg.App.Key != "" {
		kr, err := payload.NewKeyring(a.cfg.App.Key, a.cfg.App.PreviousKeys, a.cfg.App.Cipher)
		if err != nil {
			return nil, fmt.Errorf("APP_KEY: %w", err)
		}
		r.kr = kr
	}
	return r, nil
}

// retry retries the failed jobs with the given ids. When explicit, every id must exist, else nothing
// is retried; otherwise a missing id is reported as PHP reports it and the others are retried.
func (r *retrier) retry(ctx context.Context, ids []*laravel.FailedJobRef, explicit bool) int {
	con := r.a.con
	if explicit {
		var missing []string
		for _, id := range ids {
			if _, err := r.conn.FailedJobFind(ctx, id); errors.Is(err, laravel.ErrFailedJobNotFound) {
				missing = append(missing, id.ID)
			} else if err != nil {
				return r.a.failure(err)
			}
		}
		if len(missing) > 0 {
			for _, id := range missing {
				con.fail(fmt.Sprintf("Unable to find failed job with ID [%s].", id))
			}
			fmt.Fprintf(r.a.stderr, "artisan-go %s: nothing was retried; check the ids with artisan-go queue:failed\n", r.a.name)
			return 1
		}
	}
	bulk := len(ids) >= bulkRetry
	if len(ids) > 0 && con.modern && !bulk {
		con.info("Pushing failed queue jobs back onto the queue.")
	}
	bar := newProgress(r.a.stderr, "retried", int64(len(ids)), bulkRetry)
	status, retried := 0, 0
	stop := func() int {
		bar.end()
		return r.a.interrupted("retrying %d of %d failed jobs; the others are still in %s", retried, len(ids), r.conn.Tables().FailedJobs)
	}
	// Jobs are moved in groups, each group one transaction, so a large retry costs one commit per
	// group; a group that has started is finished, and SIGINT is seen between two groups.
	var group []*laravel.FailedJobRetryParams
	var groupIDs []string
	move := func() error {
		if len(group) == 0 {
			return nil
		}
		began := time.Now()
		newIDs, err := r.conn.FailedJobRetry(context.WithoutCancel(ctx), group)
		if err != nil {
			return err
		}
		each := time.Since(began) / time.Duration(len(group)) // the run time each job's task line shows
		for i, id := range groupIDs {
			bar.add(1)
			switch {
			case newIDs[i] == 0:
				con.fail(fmt.Sprintf("Unable to find failed job with ID [%s].", id))
				continue
			case bulk:
			case con.modern:
				con.task(id, each, r.a.version)
			default:
				con.info(fmt.Sprintf("The failed job [%s] has been pushed back onto the queue!", id))
			}
			retried++
		}
		group, groupIDs = group[:0], groupIDs[:0]
		return nil
	}
	for i, ref := range ids {
		id := ref.ID
		if ctx.Err() != nil {
			return stop()
		}
		f, err := r.conn.FailedJobFind(ctx, ref)
		if errors.Is(err, laravel.ErrFailedJobNotFound) {
			con.fail(fmt.Sprintf("Unable to find failed job with ID [%s].", id))
			bar.add(1)
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return stop()
			}
			bar.end()
			return r.a.failure(err)
		}
		p, err := r.prepare(ctx, f)
		if fix := retryStopFix(err); fix != "" {
			// PHP's queue:retry throws at such a job and stops: the jobs before it are retried, this
			// one and those after it stay failed.
			if merr := move(); merr != nil {
				bar.end()
				return r.a.failure(merr)
			}
			bar.end()
			fmt.Fprintf(r.a.stderr, "artisan-go %s: failed job [%s]: %v\n", r.a.name, id, err)
			return r.a.failure(fmt.Errorf("stopped at failed job [%s], as PHP's queue:retry stops: it and the %d after it were not retried; %s (or forget the job with queue:forget) and run the command again", id, len(ids)-i-1, fix))
		}
		if err != nil {
			fmt.Fprintf(r.a.stderr, "artisan-go %s: failed job [%s]: %v\n", r.a.name, id, err)
			status = 1
			bar.add(1)
			continue
		}
		group, groupIDs = append(group, p), append(groupIDs, id)
		if len(group) == retryGroup {
			if err := move(); err != nil {
				bar.end()
				return r.a.failure(err)
			}
		}
	}
	if err := move(); err != nil {
		bar.end()
		return r.a.failure(err)
	}
	bar.end()
	switch {
	case bulk:
		con.info(fmt.Sprintf("%d failed jobs have been pushed back onto the queue.", retried))
	case !con.modern:
	case len(ids) > 0:
		fmt.Fprintln(con.out)
	default:
		con.info("No retryable jobs found.")
	}
	return status
}

// retryStopFix says how to fix a failed job at which PHP's queue:retry stops, as it throws there: a
// command that cannot be read, a model it holds that is gone, a model table that does not exist; ""
// for any other error.
func retryStopFix(err error) string {
	var table *worker.ModelTableError
	switch {
	case errors.Is(err, worker.ErrCommandUnreadable):
		return "fix APP_KEY"
	case errors.Is(err, worker.ErrModelNotFound):
		return "restore the model's row"
	case errors.As(err, &table):
		return "give the model's table under models:"
	}
	return ""
}

// retryGroup is how many jobs one transaction moves back onto the queue.
const retryGroup = 100

// prepare checks that a failed job can be pushed back by artisan-go and writes the payload
// queue:retry pushes.
func (r *retrier) prepare(ctx context.Context, f *laravel.FailedJob) (*laravel.FailedJobRetryParams, error) {
	if f.Connection != r.a.cfg.Connection {
		return nil, fmt.Errorf("it failed on the queue connection [%s], and artisan-go pushes onto [%s] only (QUEUE_CONNECTION); retry it with php artisan queue:retry", f.Connection, r.a.cfg.Connection)
	}
	out, note, err := worker.RetryPayload(ctx, worker.RetryParams{
		Payload: f.Payload, Connection: f.Connection, Queue: f.Queue, Registry: handlers.Default(), Keyring: r.kr,
		LaravelVersion: r.a.cfg.LaravelVersion,
		Models:         r.conn, ModelTables: workerModels(r.a.cfg), DBConnection: r.a.cfg.DB.Driver,
	})
	if err != nil {
		return nil, err
	}
	if note != "" {
		fmt.Fprintf(r.a.stderr, "artisan-go %s: failed job [%d]: %s\n", r.a.name, f.ID, note)
	}
	queue := f.Queue
	if queue == "" {
		queue = r.a.defaultQueue()
	}
	return &laravel.FailedJobRetryParams{ID: f.ID, Queue: queue, Payload: out, Now: time.Now().Unix()}, nil
}

func runQueueRetryBatch(ctx context.Context, a *adminRun) int {
	ids := a.args
	if a.at(11, 24) {
		// {id?*}: PHP keeps the ids array_unique and array_filter leave ("" and "0" go), and with none
		// does nothing.
		ids = nil
		for _, id := range a.args {
			if id != "" && id != "0" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return 0
		}
	} else if len(ids) == 0 {
		return a.failure(errors.New(`Not enough arguments (missing: "id").`))
	}
	r, err := a.newRetrier(ctx)
	if err != nil {
		return a.failure(err)
	}
	conn := r.conn
	batches := make([]*laravel.Batch, 0, len(ids))
	for _, id := range ids {
		b, err := conn.BatchFind(ctx, id)
		switch {
		case errors.Is(err, laravel.ErrBatchNotFound):
			a.con.fail(fmt.Sprintf("Unable to find a batch with ID [%s].", id))
			return 1
		case err != nil:
			return a.failure(err)
		case len(b.FailedJobIDs) == 0:
			a.con.fail("The given batch does not contain any failed jobs.")
			return 1
		}
		batches = append(batches, b)
	}
	status := 0
	for _, b := range batches {
		refs := make([]*laravel.FailedJobRef, len(b.FailedJobIDs))
		for i, id := range b.FailedJobIDs {
			refs[i] = r.prov.ref(id)
		}
		if st := r.retry(ctx, refs, false); st != 0 {
			status = st
		}
		if status == exitInterrupted {
			break
		}
	}
	return status
}
