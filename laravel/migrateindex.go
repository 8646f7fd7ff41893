package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// MigrateParams says how to migrate the jobs table.
type MigrateParams struct {
	// Strategy adds the columns this strategy uses (see StrategyColumns); empty adds none.
	Strategy string
	// DryRun returns the statements without running them.
	DryRun bool
	// Rollback removes what a migration added beyond Laravel's own 5.5+ table: the strategy columns
	// and their indexes. With LegacyIndex it also restores Laravel 5.4's (queue, reserved_at) index in
	// place of (queue).
	Rollback    bool
	LegacyIndex bool
	// Force drops a strategy column in a rollback, which workers using it must have stopped first.
	Force bool
	// Statement is called with each statement before it runs (or instead, in a dry run).
	Statement func(sql string)
	// Waiting is called each time a statement gave up waiting for the table's lock, held by a
	// transaction open beside it, before it is tried again; nil says nothing.
	Waiting func(sql string, try int, err error)
}

// ErrDDLInProgress is returned by a migration while another session changes the jobs table.
var ErrDDLInProgress = errors.New("the jobs table is being changed")

// ErrStrategyColumnInUse is returned by a rollback that would drop a strategy column without Force.
var ErrStrategyColumnInUse = errors.New("a claim strategy's column would be dropped")

// migrateLockWait bounds how long one statement waits for the table's lock: while an ALTER waits for
// it behind an open transaction, every worker's statements on the table queue behind the ALTER. Given
// up, the statement is tried again migrateLockTries times, the workers running in between.
const (
	migrateLockWait  = 3 * time.Second
	migrateLockTries = 40
)

// MigrateIndex brings a jobs table to the index layout current claims need, in place and online where
// the server allows it, so PHP and Go workers can keep running: MySQL and MariaDB use ALGORITHM=INPLACE,
// LOCK=NONE; PostgreSQL builds and drops indexes CONCURRENTLY, outside any transaction; SQLite's DDL
// is quick under its write lock. The (queue) index is created before deadlock-prone composite indexes
// are dropped, so claims never lose their index. It is idempotent: it plans from what the table has
// and returns only the statements it ran (none when there is nothing to do).
func MigrateIndex(ctx context.Context, c *Conn, p MigrateParams) ([]string, error) {
	t, err := InspectJobs(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("migrate index: %w", err)
	}
	if p.Strategy != "" && !slices.Contains(Strategies(), p.Strategy) {
		return nil, fmt.Errorf("migrate index: %w %q", ErrUnknownStrategy, p.Strategy)
	}
	if q := c.d.ddlInProgressSQL(); q != "" {
		var pids []string
		rows, err := c.db.QueryContext(ctx, q, c.tables.Jobs)
		if err == nil {
			for rows.Next() {
				var pid string
				if rows.Scan(&pid) == nil {
					pids = append(pids, pid)
				}
			}
			rows.Close()
		}
		if len(pids) > 0 {
			return nil, fmt.Errorf("migrate index: %w: process %s is changing table %s now (a migration stopped midway goes on in the server, or another host runs one); wait until it is done, then run this again",
				ErrDDLInProgress, strings.Join(pids, ", "), c.tables.Jobs)
		}
	}
	var plan []string
	if p.Rollback {
		plan = c.rollbackPlan(t, p)
		if dropped := droppedStrategyColumns(t); len(dropped) > 0 && !p.Force && !p.DryRun {
			return nil, fmt.Errorf("migrate index: %w (%s): an artisan-go worker that claims with it (strategy delete-mark or optimistic, which auto picks while the column is there) cannot complete the jobs it runs once it is gone, and they run again after retry_after. "+
				"Stop those workers, or restart them with --strategy batch, then run the rollback again with --force", ErrStrategyColumnInUse, strings.Join(dropped, ", "))
		}
	} else {
		plan = c.migratePlan(t, p)
	}
	if p.DryRun {
		for _, stmt := range plan {
			if p.Statement != nil {
				p.Statement(stmt)
			}
		}
		return plan, nil
	}
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate index: %w", c.translate(err))
	}
	defer conn.Close()
	if reset := c.d.lockWaitSQL(0, ""); reset != "" {
		defer conn.ExecContext(context.WithoutCancel(ctx), reset) //nolint:errcheck // the session goes back to the pool as it came
	}
	for _, stmt := range plan {
		if p.Statement != nil {
			p.Statement(stmt)
		}
		if err := c.execBounded(ctx, conn, stmt, p.Waiting); err != nil {
			return nil, fmt.Errorf("migrate index: %s: %w", stmt, err)
		}
	}
	return plan, nil
}

// execBounded runs one DDL statement waiting at most migrateLockWait for the table's lock each time,
// and tries it again while a transaction open beside it holds the lock. PostgreSQL's CONCURRENTLY
// builds wait for older transactions without holding up the workers, so they wait unbounded.
func (c *Conn) execBounded(ctx context.Context, conn *sql.Conn, stmt string, waiting func(string, int, error)) error {
	bounded := c.d.lockWaitSQL(migrateLockWait, stmt)
	for try := 1; ; try++ {
		if bounded != "" {
			if _, err := conn.ExecContext(ctx, bounded); err != nil {
				return c.translate(err)
			}
		}
		_, err := conn.ExecContext(ctx, stmt)
		err = c.translate(err)
		if err == nil || !errors.Is(err, ErrBusy) || try > migrateLockTries {
			if err != nil && errors.Is(err, ErrBusy) {
				err = fmt.Errorf("%w; a transaction open beside it held the table's lock all the while (see artisan-go queue:doctor, and the server's process list)", err)
			}
			return err
		}
		if waiting != nil {
			waiting(stmt, try, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second): // the workers' statements run in between
		}
	}
}

// droppedStrategyColumns lists the strategy columns the table has, which a rollback drops.
func droppedStrategyColumns(t *JobsTable) []string {
	var out []string
	for _, name := range []string{"delete_mark", "version"} {
		if _, ok := t.Column(name); ok {
			out = append(out, name)
		}
	}
	return out
}

func (c *Conn) migratePlan(t *JobsTable, p MigrateParams) []string {
	var plan []string
	queueIndex := c.indexTable + "_queue_index"
	has := func(name string) bool {
		return slices.ContainsFunc(t.Indexes, func(ix Index) bool { return ix.Name == name })
	}
	hasQueue := false
	for _, ix := range t.Indexes {
		switch {
		case ix.Invalid:
			plan = append(plan, c.dropIndex(ix.Name))
		case slices.Equal(ix.Columns, []string{"queue"}):
			hasQueue = true
		}
	}
	if !hasQueue {
		name := queueIndex
		if has(name) {
			name = c.indexTable + "_queue_only_index"
		}
		plan = append(plan, c.createIndex(name, "queue"))
	}
	for _, ix := range t.Indexes {
		if !ix.Invalid && ix.timeAfterQueue() {
			plan = append(plan, c.dropIndex(ix.Name))
		}
	}
	for _, col := range StrategyColumns[p.Strategy] {
		if _, ok := t.Column(col.Name); !ok {
			plan = append(plan, c.addColumn(col.Name))
		}
		if col.Name == "delete_mark" && !has(c.indexTable+"_delete_mark_index") {
			plan = append(plan, c.createIndex(c.indexTable+"_delete_mark_index", "delete_mark"))
		}
	}
	return plan
}

func (c *Conn) rollbackPlan(t *JobsTable, p MigrateParams) []string {
	var plan []string
	for _, ix := range t.Indexes {
		if slices.Contains(ix.Columns, "delete_mark") || slices.Contains(ix.Columns, "version") {
			plan = append(plan, c.dropIndex(ix.Name))
		}
	}
	for _, name := range []string{"delete_mark", "version"} {
		if _, ok := t.Column(name); ok {
			plan = append(plan, c.dropColumn(name))
		}
	}
	if p.LegacyIndex {
		legacy := false
		for _, ix := range t.Indexes {
			legacy = legacy || slices.Equal(ix.Columns, []string{"queue", "reserved_at"})
		}
		if !legacy {
			plan = append(plan, c.createIndex(c.indexTable+"_queue_reserved_at_index", "queue", "reserved_at"))
		}
		for _, ix := range t.Indexes {
			if slices.Equal(ix.Columns, []string{"queue"}) {
				plan = append(plan, c.dropIndex(ix.Name))
			}
		}
	}
	return plan
}

func (c *Conn) createIndex(name string, cols ...string) string {
	return c.d.onlineIndexDDL(c.tables.Jobs, name, cols)
}

func (c *Conn) dropIndex(name string) string { return c.d.onlineDropIndexDDL(c.tables.Jobs, name) }

func (c *Conn) addColumn(name string) string {
	return fmt.Sprintf("alter table %s add column %s %s default 0", c.quote(c.tables.Jobs), c.quote(name), c.d.columnType(colBigUInt, false)) + c.d.onlineAlterSuffix()
}

func (c *Conn) dropColumn(name string) string {
	return fmt.Sprintf("alter table %s drop column %s", c.quote(c.tables.Jobs), c.quote(name)) + c.d.onlineAlterSuffix()
}
