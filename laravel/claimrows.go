package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jmoiron/sqlx"
)

// rowClaimer claims batches of rows with Laravel's availability predicate, in the cheapest way each
// server offers, all of them safe beside PHP workers that claim with Laravel's own locking select:
//
//   - Where UPDATE … RETURNING exists (PostgreSQL, SQLite): one autocommit UPDATE … WHERE id IN
//     (SELECT … ORDER BY id LIMIT n [FOR UPDATE SKIP LOCKED]) RETURNING. SQLite's write lock
//     serializes it against PHP's BEGIN … SELECT … UPDATE; on PostgreSQL the row locks do. Where
//     statements can be pipelined (PostgreSQL), a claim from a lower bound goes in one pipeline after
//     the dialect's index-order step, so that it walks the primary key whatever the table's
//     statistics say.
//   - Otherwise, with SKIP LOCKED (MySQL 8.0.1+, MariaDB 10.6+): one READ COMMITTED transaction,
//     SELECT … FOR UPDATE SKIP LOCKED then UPDATE … WHERE id IN. READ COMMITTED takes no gap locks,
//     so claimers and inserters do not deadlock on the (queue) index. On a table with a time column
//     indexed after queue (Laravel 5.4's (queue, reserved_at)) the batch strategy's SELECT takes a
//     plain FOR UPDATE instead (see lockProbe).
//   - Servers with neither (MySQL 5.7, MariaDB < 10.6): the batch strategy's transaction takes a
//     plain FOR UPDATE, so claimers queue for the first unlocked rows and each takes a batch in one
//     commit; single-row claims (delete-mark) take rows by compare-and-set instead (see casClaim).
//     batch on MariaDB taken for 10.5, 1 / 4 / 16 workers: 1.2k / 1.9k / 1.0k jobs/s by
//     compare-and-set, which commits each row alone, against 13.6k / 17.0k / 16.0k under the plain
//     lock (deadlocks at 16 workers, retried).
//
// Each claim starts at a moving lower bound on id per queue (see idFloors), so that its scan does not
// wade through the rows taken, reserved or deleted (but not yet removed by vacuum or purge) behind it.
type rowClaimer struct {
	c *Conn
	// batches: claims take many rows each, one at a time per queue (the batch strategy), so they
	// may queue on a plain lock (see lockProbe); single-row claims in parallel keep SKIP LOCKED.
	batches bool
	lock    lockProbe
}

// lockProbe decides, once per claimer, the lock clause of claims that select rows to update in a
// transaction: the server's (SKIP LOCKED where it has it), or a plain FOR UPDATE when the jobs table
// indexes a time column after queue. Every claim and delete then rewrites entries of that index, and
// claimers skipping each other's locked rows wade through them: on MariaDB with Laravel 5.4's index,
// 16 batch workers claimed 10.0k jobs/s with SKIP LOCKED and 17.5k with FOR UPDATE (medians of three
// runs), where claimers queue for the first unlocked rows and each takes the next batch; with 1 and
// 4 workers, and on a table indexed by queue alone, the two measured the same. Single-row claims running in parallel
// (delete-mark) lost a third of their rate at 1 worker under the plain lock, so they keep the
// server's.
type lockProbe struct {
	mu     sync.Mutex
	known  bool
	clause string
}

// lockFor returns the lock clause for the claims of r that select in a transaction, inspecting the
// jobs table's indexes on first use; call it outside any transaction, as the inspection takes a
// connection of its own. A failed inspection keeps the server's clause.
func (r *rowClaimer) lockFor(ctx context.Context) string {
	c := r.c
	if !r.batches || c.caps.UpdateReturning || !c.caps.SkipLocked {
		return c.claimLock
	}
	p := &r.lock
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known {
		return p.clause
	}
	p.clause = c.claimLock
	t, err := InspectJobs(ctx, c)
	if err != nil && ctx.Err() != nil {
		return p.clause // cancelled: look again on the next claim
	}
	p.known = true
	if err == nil && slices.ContainsFunc(t.Indexes, Index.timeAfterQueue) {
		p.clause = "for update"
	}
	return p.clause
}

// prober returns the probe below a queue's bound (see idFloors.probe) for claims like p: the lowest
// id below the bound that p's claim would take, read without locks.
func (r *rowClaimer) prober(p *JobClaimParams, exclude []int64) probeFunc {
	c := r.c
	q := *p
	q.ExcludeIDs = slices.Clone(exclude)
	return func(ctx context.Context, floor int64) int64 {
		where, args := claimWhere(&q, q.ExcludeIDs, 0)
		sel := c.rebind(fmt.Sprintf("select id from %s where %s and id < ? order by id limit 1", c.quote(c.tables.Jobs), where))
		var id int64
		if err := c.db.QueryRowxContext(ctx, sel, append(args, floor)...).Scan(&id); err != nil {
			return 0 // none, or the probe failed: the next one looks again
		}
		return id
	}
}

// claimWhere returns Laravel's availability predicate with the exclusions and the lower bound, with ?
// placeholders, and its arguments.
func claimWhere(p *JobClaimParams, exclude []int64, floor int64) (string, []any) {
	var b strings.Builder
	b.WriteString("queue = ? and ((reserved_at is null and available_at <= ?) or (reserved_at <= ?))")
	args := []any{p.Queue, p.Now, p.Now - p.RetryAfter}
	floor = max(floor, p.MinID)
	if floor > 0 {
		b.WriteString(" and id >= ?")
		args = append(args, floor)
	}
	if len(exclude) > 0 {
		b.WriteString(" and id not in (" + placeholders(len(exclude)) + ")")
		for _, id := range exclude {
			args = append(args, id)
		}
	}
	return b.String(), args
}

// claim reserves up to limit available rows of p.Queue, in id order, and returns them with the rows
// p.Skip passed over (left as they were). A claim that comes back empty may probe below its bound (see
// idFloors.probe); when the probe lowers the bound, it claims once more.
func (r *rowClaimer) claim(ctx context.Context, p *JobClaimParams, exclude []int64, limit int) (jobs, skipped []*Job, err error) {
	jobs, skipped, lowered, err := r.claimOnce(ctx, p, exclude, limit, true)
	if err == nil && lowered {
		var more []*Job
		jobs, more, _, err = r.claimOnce(ctx, p, exclude, limit, false)
		skipped = append(skipped, more...)
	}
	return jobs, skipped, err
}

// claimOnce is one claim from the bound; with probe, an empty one probes below the bound and reports
// whether it was lowered.
func (r *rowClaimer) claimOnce(ctx context.Context, p *JobClaimParams, exclude []int64, limit int, probe bool) ([]*Job, []*Job, bool, error) {
	c := r.c
	floor, walk := c.floors.get(c, p.Queue)
	if p.Whole {
		floor, walk = 0, false
	}
	lock := r.lockFor(ctx)
	excluded, held := c.withUnknown(exclude)
	where, args := claimWhere(p, excluded, floor)
	var jobs, skipped []*Job
	// A claim picked as a deadlock victim claimed nothing; claiming again at once is cheaper than the
	// worker's back-off.
	err := c.retry(ctx, 3, func() error {
		var err error
		switch {
		case c.caps.UpdateReturning && !c.caps.RowLocks && c.floors.isDry(p.Queue) && !r.anyAvailable(ctx, where, args):
			jobs, skipped = nil, nil // SQLite, still nothing to claim: no write
		case c.caps.UpdateReturning:
			jobs, skipped, err = r.claimStatement(ctx, p, where, args, limit, walk)
		case c.caps.SkipLocked || (r.batches && c.caps.RowLocks):
			err = c.inTxIsolation(ctx, c.caps.ClaimIsolation, func(tx *sqlx.Tx) error {
				jobs, skipped, err = r.claimSkipLocked(ctx, tx, p, where, args, limit, walk, lock)
				return err
			})
			c.returnUnknownClaim(err, jobs, 0)
		default:
			var cr casResult
			cr, err = casClaim(ctx, c, p, where, args, limit, limit, false, false, walk)
			jobs, skipped, held = cr.jobs, cr.skipped, lowestID(held, cr.passed)
		}
		return err
	})
	if err != nil {
		return nil, nil, false, err
	}
	seen := seenRows(jobs, skipped)
	c.floors.setDry(p.Queue, len(seen) == 0)
	c.floors.claimed(c, p.Queue, floor, seen, limit, held)
	if !probe {
		return jobs, skipped, false, nil
	}
	lowered := c.floors.probe(c, p.Queue, len(seen) == 0, func() probeFunc { return r.prober(p, exclude) })
	return jobs, skipped, lowered, nil
}

// canDeleteAndClaim reports whether deleteAndClaim can run on this server: everywhere a claim is one
// statement or one transaction (not on the compare-and-set fallback).
func (r *rowClaimer) canDeleteAndClaim() bool {
	return r.c.caps.UpdateReturning || r.c.caps.SkipLocked
}

// deleteAndClaim deletes finished jobs, fenced, and claims up to limit rows of p.Queue in the same
// transaction, so that both share one commit: the finished jobs' disk flush carries the next claim.
// The deletes come first, so the claim cannot see their rows. It returns the claimed jobs and the ids
// deleted; a deadlock victim is retried whole. Only where canDeleteAndClaim.
func (r *rowClaimer) deleteAndClaim(ctx context.Context, tries int, done []*Job, p *JobClaimParams, limit int) ([]*Job, []*Job, map[int64]bool, error) {
	c := r.c
	floor, walk := c.floors.get(c, p.Queue)
	lock := r.lockFor(ctx)
	excluded, held := c.withUnknown(p.ExcludeIDs)
	where, args := claimWhere(p, excluded, floor)
	var jobs, skipped []*Job
	var deleted map[int64]bool
	err := c.retry(ctx, tries, func() error {
		if c.caps.Pipeline && c.caps.DeleteReturning && c.caps.UpdateReturning {
			// Two round trips instead of four: begin, delete and claim in one, the commit in the
			// other, once the claimed rows are known (see pgPipelineTx).
			jobs, skipped = nil, nil
			var xid int64
			steps := []pgStep{c.deleteFencedStep(done, &deleted)}
			if walk {
				steps = append(steps, c.indexOrderSteps()...)
			}
			steps = append(steps, r.pgClaimStep(p, where, args, limit, &jobs))
			err := c.pgPipelineTxThen(ctx, r.passOver(p, &jobs, &skipped), append(steps, c.xactIDSteps(&xid)...)...)
			c.returnUnknownClaim(err, jobs, xid)
			return err
		}
		jobs, skipped = nil, nil
		err := c.inTxIsolation(ctx, c.caps.ClaimIsolation, func(tx *sqlx.Tx) error {
			var err error
			if deleted, err = c.deleteFencedRows(ctx, tx, done); err != nil {
				return err
			}
			if c.caps.UpdateReturning {
				jobs, skipped, err = r.claimReturningTx(ctx, tx, p, where, args, limit)
			} else {
				jobs, skipped, err = r.claimSkipLocked(ctx, tx, p, where, args, limit, walk, lock)
			}
			return err
		})
		c.returnUnknownClaim(err, jobs, 0)
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	c.floors.claimed(c, p.Queue, floor, seenRows(jobs, skipped), limit, held)
	c.floors.probe(c, p.Queue, false, func() probeFunc { return r.prober(p, p.ExcludeIDs) })
	return jobs, skipped, deleted, nil
}

// passOver returns the pipeline's then (see pgPipelineTxThen) for a claim that stored its rows in
// *jobs: it moves the rows p.Skip passes over to *skipped and undoes their claim.
func (r *rowClaimer) passOver(p *JobClaimParams, jobs, skipped *[]*Job) func() []pgStep {
	if p.Skip == nil {
		return nil
	}
	return func() []pgStep {
		*jobs, *skipped = splitSkipped(p, *jobs)
		steps := r.c.unclaimSteps(*skipped)
		unclaimed(*skipped)
		return steps
	}
}

// anyAvailable reports whether a row matches where, by a read: on SQLite, after a claim that came back
// empty, so that a worker polling an idle queue does not take the file's one write lock (and hold up
// the application's writes) for an update that finds nothing. A failed read reports true, leaving the
// error to the claim.
func (r *rowClaimer) anyAvailable(ctx context.Context, where string, args []any) bool {
	c := r.c
	var one int
	err := c.db.QueryRowContext(ctx, c.rebind("select 1 from "+c.quote(c.tables.Jobs)+" where "+where+" limit 1"), args...).Scan(&one)
	return !errors.Is(err, sql.ErrNoRows)
}

// claimStatement claims with one UPDATE … RETURNING. On PostgreSQL it runs in a transaction whose
// COMMIT is sent once the claimed rows are in (see pgPipelineTx), after the index-order step when walk,
// and rows whose COMMIT's answer was lost are given back; SQLite runs in this process, where no answer
// is lost, so the statement runs alone.
func (r *rowClaimer) claimStatement(ctx context.Context, p *JobClaimParams, where string, args []any, limit int, walk bool) (jobs, skipped []*Job, err error) {
	c := r.c
	switch {
	case !c.caps.Pipeline && p.Skip == nil:
		jobs, err = r.claimReturning(ctx, c.db, p, where, args, limit)
		return jobs, nil, c.translate(err)
	case !c.caps.Pipeline:
		// The rows passed over are put back before the transaction commits.
		err = c.InTx(ctx, func(tx *sqlx.Tx) error {
			jobs, skipped, err = r.claimReturningTx(ctx, tx, p, where, args, limit)
			return err
		})
		return jobs, skipped, err
	}
	var xid int64
	var steps []pgStep
	if walk {
		steps = c.indexOrderSteps()
	}
	steps = append(steps, r.pgClaimStep(p, where, args, limit, &jobs))
	err = c.pgPipelineTxThen(ctx, r.passOver(p, &jobs, &skipped), append(steps, c.xactIDSteps(&xid)...)...)
	c.returnUnknownClaim(err, jobs, xid)
	return jobs, skipped, err
}

// claimReturning claims with one UPDATE … RETURNING (PostgreSQL, SQLite) on ex: the connection, or a
// transaction the caller holds.
func (r *rowClaimer) claimReturning(ctx context.Context, ex sqlx.ExtContext, p *JobClaimParams, where string, args []any, limit int) ([]*Job, error) {
	rows, err := ex.QueryxContext(ctx, r.claimReturningSQL(where, limit), append([]any{p.Now}, args...)...)
	if err != nil {
		return nil, err
	}
	jobs, err := ScanJobs(rows)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(jobs, func(a, b *Job) int { return cmpInt64(a.ID, b.ID) })
	return jobs, nil
}

// claimReturningSQL is claimReturning's statement, with the dialect's placeholders: the claim time,
// then where's arguments.
func (r *rowClaimer) claimReturningSQL(where string, limit int) string {
	c := r.c
	lock := ""
	if c.claimLock != "" {
		lock = " " + c.claimLock
	}
	q := fmt.Sprintf("update %s set reserved_at = ?, attempts = %s(attempts + 1, %d) where id in (select id from %s where %s order by id limit %d%s) returning %s",
		c.quote(c.tables.Jobs), c.d.least(), c.MaxAttempts(), c.quote(c.tables.Jobs), where, limit, lock, jobColumns)
	return c.rebind(q)
}

// pgClaimStep is claimReturning as a PostgreSQL pipeline step that stores the claimed jobs in *out.
func (r *rowClaimer) pgClaimStep(p *JobClaimParams, where string, args []any, limit int, out *[]*Job) pgStep {
	return pgStep{sql: r.claimReturningSQL(where, limit), args: append([]any{p.Now}, args...), read: pgScanJobs(out)}
}

// claimSkipLocked claims inside tx, which the caller runs at READ COMMITTED: SELECT … with lock (FOR
// UPDATE SKIP LOCKED, or a plain FOR UPDATE where lockFor says so), then UPDATE by id (MySQL 8.0.1+,
// MariaDB 10.6+).
func (r *rowClaimer) claimSkipLocked(ctx context.Context, tx *sqlx.Tx, p *JobClaimParams, where string, args []any, limit int, walk bool, lock string) (jobs, skipped []*Job, err error) {
	c := r.c
	hint := ""
	if walk {
		hint = c.d.primaryKeyHint()
	}
	sel := fmt.Sprintf("select %s from %s%s where %s order by id limit %d %s", jobColumns, c.quote(c.tables.Jobs), hint, where, limit, lock)
	rows, err := tx.QueryxContext(ctx, sel, args...)
	if err != nil {
		return nil, nil, err
	}
	if jobs, err = ScanJobs(rows); err != nil {
		return nil, nil, err
	}
	// The rows passed over are locked until the commit, and never updated.
	if jobs, skipped = splitSkipped(p, jobs); len(jobs) == 0 {
		return nil, skipped, nil
	}
	ids := make([]any, 0, len(jobs)+1)
	ids = append(ids, p.Now)
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	upd := fmt.Sprintf("update %s set reserved_at = ?, attempts = least(attempts + 1, %d) where id in (%s)",
		c.quote(c.tables.Jobs), c.MaxAttempts(), placeholders(len(jobs)))
	if _, err := tx.ExecContext(ctx, upd, ids...); err != nil {
		return nil, nil, err
	}
	for _, j := range jobs {
		j.Attempts = min(j.Attempts+1, c.MaxAttempts())
		j.ReservedAt = p.Now
	}
	return jobs, skipped, nil
}

// inTxIsolation is InTx with an isolation level. A connection whose BEGIN, COMMIT or ROLLBACK failed
// is closed rather than handed to the next caller: its session may still be inside the transaction.
// A Galera node cut off from the primary component answers COMMIT with error 1180 and keeps the
// transaction open, and the next BEGIN on that session failed with 1568 ("Transaction
// characteristics can't be changed while a transaction is in progress"), which refused a finished
// job's delete for good.
func (c *Conn) inTxIsolation(ctx context.Context, level sql.IsolationLevel, fn func(tx *sqlx.Tx) error) error {
	var opts *sql.TxOptions
	if level != sql.LevelDefault {
		opts = &sql.TxOptions{Isolation: level}
	}
	conn, err := c.db.Connx(ctx)
	if err != nil {
		return c.translate(err)
	}
	tx, err := conn.BeginTxx(ctx, opts)
	if err != nil {
		discard(conn.Conn)
		return c.translate(err)
	}
	if err := fn(tx); err != nil {
		if tx.Rollback() != nil {
			discard(conn.Conn)
		} else {
			conn.Close()
		}
		return c.translate(err)
	}
	if c.caps.CommitIgnoresContext {
		return c.commitWatched(ctx, tx, conn.Conn)
	}
	if err := tx.Commit(); err != nil {
		discard(conn.Conn)
		return c.translate(commitErr(err))
	}
	conn.Close()
	return nil
}

// commitWatched commits tx where the driver's Commit does not heed the context (CommitIgnoresContext:
// go-sql-driver/mysql reads the server's answer without a deadline). The Commit runs in a goroutine;
// once ctx is done first, the caller gets ErrCommitUnknown and the goroutine is left to end with the
// server's answer (or the connection's end), then to discard the connection: database/sql holds the
// connection's lock while the driver waits, so it cannot be closed from here. A claim whose COMMIT met
// a server that stopped answering held its worker, even one told twice to stop, for good.
func (c *Conn) commitWatched(ctx context.Context, tx *sqlx.Tx, conn *sql.Conn) error {
	done := make(chan error, 1)
	go func() { done <- tx.Commit() }()
	select {
	case err := <-done:
		if err != nil {
			discard(conn)
			return c.translate(commitErr(err))
		}
		conn.Close()
		return nil
	case <-ctx.Done():
		go func() {
			<-done
			discard(conn)
		}()
		return fmt.Errorf("%w: COMMIT unanswered when the transaction's context ended: %w", ErrCommitUnknown, ctx.Err())
	}
}

// casClaim claims without row locks: it reads a window of up to window available rows, then takes
// them one by one with a compare-and-set UPDATE that repeats the availability predicate and the
// attempts value it read (and the version column, withVersion), checked by the affected row count. A
// PHP worker's locking select and this update exclude each other on the row itself: whichever commits
// first changes reserved_at and attempts, and the other's predicate no longer matches. The head of the
// window is tried first, so a lone claimer keeps FIFO order, unless spread says claimers race (then
// every row is tried in random order); the rest are tried in random order so that racing claimers
// spread out instead of colliding on the same row, each collision being a wait for the winner's row
// lock. Rows are returned in id order, with the number of races lost and the lowest candidate left
// untried (see casResult).
func casClaim(ctx context.Context, c *Conn, p *JobClaimParams, where string, args []any, limit, window int, withVersion, spread, walk bool) (casResult, error) {
	cols := jobColumns
	if withVersion {
		cols += ", version"
	}
	hint := ""
	if walk {
		hint = c.d.primaryKeyHint()
	}
	sel := c.rebind(fmt.Sprintf("select %s from %s%s where %s order by id limit %d", cols, c.quote(c.tables.Jobs), hint, where, window))
	set, fence := "", ""
	if withVersion {
		set, fence = ", version = version + 1", " and version = ?"
	}
	upd := c.rebind("update " + c.quote(c.tables.Jobs) + " set reserved_at = ?, attempts = ?" + set +
		" where id = ? and attempts = ?" + fence + " and ((reserved_at is null and available_at <= ?) or (reserved_at <= ?))")
	var out, skipped []*Job
	lost := 0
	var passed int64
	for round := 0; round < 3 && len(out) < limit; round++ {
		passed = 0
		cands, err := selectCandidates(ctx, c, sel, args, withVersion, walk)
		if err != nil {
			return casResult{out, lost, passed, skipped}, err
		}
		// Rows p.Skip passes over are never written (a later round reads them again).
		cands, pass := splitSkipped(p, cands)
		for _, j := range pass {
			if !slices.ContainsFunc(skipped, func(s *Job) bool { return s.ID == j.ID }) {
				skipped = append(skipped, j)
			}
		}
		if len(cands) == 0 {
			break
		}
		if !c.caps.RowLocks {
			// One writer at a time (SQLite): every candidate is compared and set in one statement, and
			// rows another claimer took since the read are passed over inside it instead of costing a
			// write each.
			want := min(limit-len(out), len(cands))
			got, err := casClaimMany(ctx, c, p, cands, want, withVersion)
			if err != nil {
				return casResult{out, lost, passed, skipped}, c.translate(err)
			}
			out = append(out, got...)
			if len(got) == want {
				break
			}
			lost += want - len(got)
			continue
		}
		order := append([]*Job{cands[0]}, shuffled(cands[1:])...)
		if spread {
			order = shuffled(cands)
		}
		lostRace := false
		tried := 0
		for _, j := range order {
			if len(out) >= limit {
				break
			}
			tried++
			attempts := min(j.Attempts+1, c.MaxAttempts())
			uargs := []any{p.Now, attempts, j.ID, j.Attempts}
			if withVersion {
				uargs = append(uargs, j.Version)
			}
			uargs = append(uargs, p.Now, p.Now-p.RetryAfter)
			res, err := c.db.ExecContext(ctx, upd, uargs...)
			if err != nil {
				return casResult{out, lost, passed, skipped}, c.translate(err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				lostRace = true
				lost++
				continue
			}
			j.Attempts, j.ReservedAt = attempts, p.Now
			if withVersion {
				j.Version++
			}
			out = append(out, j)
		}
		for _, j := range order[tried:] {
			if passed == 0 || j.ID < passed {
				passed = j.ID
			}
		}
		if !lostRace {
			break
		}
	}
	slices.SortFunc(out, func(a, b *Job) int { return cmpInt64(a.ID, b.ID) })
	return casResult{out, lost, passed, skipped}, nil
}

// lowestID returns the lower of two ids, 0 standing for none.
func lowestID(a, b int64) int64 {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// casResult is what casClaim took: the rows, the races it lost to other claimers, the lowest id
// among the candidates of its last read that it did not try (0: none), still available as far as it
// knows, which a lower bound set from this claim must not pass, and the rows p.Skip passed over.
type casResult struct {
	jobs    []*Job
	lost    int
	passed  int64
	skipped []*Job
}

// casClaimMany takes up to want of cands in one UPDATE … RETURNING, in id order: the rows whose
// attempts (and version, withVersion) are still those read and that are still available, as casClaim's
// statement per row checks them. It returns the rows taken, updated. Only where one writer runs at a
// time (SQLite): on a server the statement would wait for the row locks of other claimers' updates.
func casClaimMany(ctx context.Context, c *Conn, p *JobClaimParams, cands []*Job, want int, withVersion bool) ([]*Job, error) {
	type read struct{ attempts, version int64 }
	order, ids := groupIDs(cands, func(j *Job) read { return read{int64(j.Attempts), j.Version} })
	set, ret := "", "id, attempts"
	if withVersion {
		set, ret = ", version = version + 1", "id, attempts, version"
	}
	var fence strings.Builder
	var args []any
	args = append(args, p.Now)
	for i, k := range order {
		if i > 0 {
			fence.WriteString(" or ")
		}
		fence.WriteString("(attempts = ?")
		args = append(args, k.attempts)
		if withVersion {
			fence.WriteString(" and version = ?")
			args = append(args, k.version)
		}
		fence.WriteString(" and id in (" + placeholders(len(ids[k])) + "))")
		for _, id := range ids[k] {
			args = append(args, id)
		}
	}
	args = append(args, p.Now, p.Now-p.RetryAfter)
	jobs := c.quote(c.tables.Jobs)
	q := c.rebind(fmt.Sprintf("update %s set reserved_at = ?, attempts = %s(attempts + 1, %d)%s where id in (select id from %s where (%s) and ((reserved_at is null and available_at <= ?) or (reserved_at <= ?)) order by id limit %d) returning %s",
		jobs, c.d.least(), c.MaxAttempts(), set, jobs, fence.String(), want, ret))
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[int64]*Job, len(cands))
	for _, j := range cands {
		byID[j.ID] = j
	}
	var out []*Job
	for rows.Next() {
		var id, attempts, version int64
		dest := []any{&id, &attempts}
		if withVersion {
			dest = append(dest, &version)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		j := byID[id]
		if j == nil {
			return nil, fmt.Errorf("claim returned row %d, which was not a candidate", id)
		}
		j.Attempts, j.ReservedAt, j.Version = int(attempts), p.Now, version
		out = append(out, j)
	}
	return out, rows.Err()
}

// groupIDs groups the ids of jobs by key, and returns the keys in the order they first came.
func groupIDs[K comparable](jobs []*Job, key func(*Job) K) ([]K, map[K][]int64) {
	var order []K
	ids := map[K][]int64{}
	for _, j := range jobs {
		k := key(j)
		if _, ok := ids[k]; !ok {
			order = append(order, k)
		}
		ids[k] = append(ids[k], j.ID)
	}
	return order, ids
}

// selectCandidates reads candidate rows without locks.
func selectCandidates(ctx context.Context, c *Conn, sel string, args []any, withVersion, walk bool) ([]*Job, error) {
	if walk && c.caps.Pipeline {
		if steps := c.indexOrderSteps(); len(steps) > 0 {
			// PostgreSQL walks the primary key from the bound only with sorting off, which holds in a
			// transaction: one round trip, BEGIN and COMMIT included.
			var out []*Job
			read := func(rows pgx.Rows) (err error) {
				out, err = readCandidates(rows, withVersion)
				return err
			}
			err := c.pgPipelineRead(ctx, append(steps, pgStep{sql: sel, args: args, read: read})...)
			return out, err
		}
	}
	rows, err := c.db.QueryxContext(ctx, sel, args...)
	if err != nil {
		return nil, c.translate(err)
	}
	defer rows.Close()
	out, err := readCandidates(rows, withVersion)
	return out, c.translate(err)
}

// readCandidates reads rows of jobColumns, and the version column after them withVersion.
func readCandidates(rows rowReader, withVersion bool) ([]*Job, error) {
	if !withVersion {
		return readJobs(rows)
	}
	var out []*Job
	for rows.Next() {
		var j Job
		var reserved sql.NullInt64
		if err := rows.Scan(&j.ID, &j.Queue, &j.Payload, &j.Attempts, &reserved, &j.AvailableAt, &j.CreatedAt, &j.Version); err != nil {
			return nil, err
		}
		j.ReservedAt = reserved.Int64
		out = append(out, &j)
	}
	return out, rows.Err()
}

func shuffled(jobs []*Job) []*Job {
	out := slices.Clone(jobs)
	rand.Shuffle(len(out), func(i, k int) { out[i], out[k] = out[k], out[i] })
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// jobsColumns returns the lower-cased column names of the jobs table.
func (c *Conn) jobsColumns(ctx context.Context) (map[string]bool, error) {
	rows, err := c.db.QueryxContext(ctx, c.d.freshSelect("select * from "+c.quote(c.tables.Jobs)+" where 1 = 0"))
	if err != nil {
		return nil, c.translate(err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, c.translate(err)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[strings.ToLower(n)] = true
	}
	return out, nil
}

// columnProbe reports once, when the table can be read, whether the jobs table has a column that a
// strategy uses when present.
type columnProbe struct {
	name  string
	mu    sync.Mutex
	known bool
	has   bool
}

func (p *columnProbe) check(ctx context.Context, c *Conn) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.known {
		cols, err := c.jobsColumns(ctx)
		if err != nil {
			return false, err
		}
		p.has, p.known = cols[p.name], true
	}
	return p.has, nil
}
