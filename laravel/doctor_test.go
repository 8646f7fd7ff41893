package laravel_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

func codes(fs []laravel.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
		if f.Fix == "" || f.Message == "" {
			panic("a finding without message or fix: " + f.Code)
		}
	}
	return out
}

func indexColumns(t *testing.T, c *laravel.Conn) [][]string {
	t.Helper()
	tab, err := laravel.InspectJobs(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, ix := range tab.Indexes {
		if !ix.Primary {
			out = append(out, ix.Columns)
		}
	}
	slices.SortFunc(out, slices.Compare)
	return out
}

// TestDoctorAndMigrateLegacyTable takes a Laravel 5.4 jobs table on each dialect through the doctor,
// a dry run, the migration, a second (idempotent) migration, and both rollbacks.
func TestDoctorAndMigrateLegacyTable(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		s := queuetest.NewSetup(t, db, "delete-retry", queuetest.Options{Schema: laravel.SchemaParams{LegacyJobsIndex: true}})
		c := s.Conn
		fs, err := laravel.Diagnose(ctx, c, laravel.DoctorParams{Strategy: "delete-mark", RetryAfter: 60 * time.Second, Timeout: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		got := codes(fs)
		want := []string{"legacy-index", "strategy-column", "retry-after"}
		if db.Dialect == "mysql" {
			want = []string{"legacy-index", "attempts-limit", "strategy-column", "retry-after"}
		}
		if !slices.Equal(got, want) || !laravel.NeedsFix(fs) {
			t.Fatalf("findings %v, want %v", got, want)
		}
		// The index deadlocks under InnoDB's range locks; elsewhere it only costs its churn.
		for _, f := range fs {
			if wantSev := map[bool]laravel.Severity{true: laravel.SeverityError, false: laravel.SeverityWarning}[db.Dialect == "mysql"]; f.Code == "legacy-index" &&
				(f.Severity != wantSev || strings.Contains(f.Message, "deadlock") != (db.Dialect == "mysql")) {
				t.Errorf("legacy-index on %s: %s %q", db.Dialect, f.Severity, f.Message)
			}
		}
		before := indexColumns(t, c)
		var printed []string
		plan, err := laravel.MigrateIndex(ctx, c, laravel.MigrateParams{Strategy: "delete-mark", DryRun: true, Statement: func(s string) { printed = append(printed, s) }})
		if err != nil || len(plan) != 4 || !slices.Equal(plan, printed) {
			t.Fatalf("dry run: %v, %v (printed %v)", plan, err, printed)
		}
		if after := indexColumns(t, c); !slices.EqualFunc(before, after, slices.Equal) {
			t.Fatalf("the dry run changed the indexes: %v → %v", before, after)
		}
		if plan, err = laravel.MigrateIndex(ctx, c, laravel.MigrateParams{Strategy: "delete-mark"}); err != nil {
			t.Fatal(err)
		}
		t.Logf("migration on %s:\n%s", db.Dialect, plan)
		if got := indexColumns(t, c); !slices.EqualFunc(got, [][]string{{"delete_mark"}, {"queue"}}, slices.Equal) {
			t.Fatalf("indexes after the migration: %v", got)
		}
		fs, err = laravel.Diagnose(ctx, c, laravel.DoctorParams{Strategy: "delete-mark", RetryAfter: 90 * time.Second, Timeout: 60 * time.Second})
		if err != nil || laravel.NeedsFix(fs) {
			t.Fatalf("findings after the migration: %+v, %v", fs, err)
		}
		if again, err := laravel.MigrateIndex(ctx, c, laravel.MigrateParams{Strategy: "delete-mark"}); err != nil || len(again) != 0 {
			t.Fatalf("second migration: %v, %v; want nothing to do", again, err)
		}
		// The table still works for Laravel's claim and the strategy that uses the new column.
		if name, _, _ := laravel.ChooseStrategy(ctx, c); name != "delete-mark" {
			t.Fatalf("chosen after the migration: %s", name)
		}
		// Dropping the strategy's column needs Force: a worker claiming with it could not complete.
		if _, err := laravel.MigrateIndex(ctx, c, laravel.MigrateParams{Rollback: true}); !errors.Is(err, laravel.ErrStrategyColumnInUse) || !strings.Contains(err.Error(), "delete_mark") {
			t.Fatalf("rollback without Force: %v, want it refused naming delete_mark", err)
		}
		if got := indexColumns(t, c); !slices.EqualFunc(got, [][]string{{"delete_mark"}, {"queue"}}, slices.Equal) {
			t.Fatalf("indexes after a refused rollback: %v", got)
		}
		if _, err := laravel.MigrateIndex(ctx, c, laravel.MigrateParams{Rollback: true, Force: true}); err != nil {
			t.Fatal(err)
		}
		if got := indexColumns(t, c); !slices.EqualFunc(got, [][]string{{"queue"}}, slices.Equal) {
			t.Fatalf("indexes after the rollback: %v", got)
		}
		if tab, _ := laravel.InspectJobs(ctx, c); func() bool { _, ok := tab.Column("delete_mark"); return ok }() {
			t.Fatalf("delete_mark survived the rollback")
		}
		if _, err := laravel.MigrateIndex(ctx, c, laravel.MigrateParams{Rollback: true, LegacyIndex: true}); err != nil {
			t.Fatal(err)
		}
		if got := indexColumns(t, c); !slices.EqualFunc(got, before, slices.Equal) {
			t.Fatalf("indexes after the rollback to 5.4: %v, want %v", got, before)
		}
	})
}

// TestMigrateIndexPrefixedTable migrates a legacy table behind a connection's table prefix: the
// statements name the prefixed table, and the new index carries the prefix only with PrefixIndexes,
// as Laravel's schema builder names it.
func TestMigrateIndexPrefixedTable(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		for _, prefixIndexes := range []bool{true, false} {
			p := queuetest.OpenParams(db)
			p.TablePrefix, p.PrefixIndexes = testenv.Name("p")+"_", prefixIndexes
			c := queuetest.Open(t, p)
			if got := c.Tables().Jobs; got != p.TablePrefix+p.Tables.Jobs {
				t.Fatalf("Tables().Jobs = %q, want %q", got, p.TablePrefix+p.Tables.Jobs)
			}
			ctx := context.Background()
			if err := laravel.CreateSchema(ctx, c, laravel.SchemaParams{LegacyJobsIndex: true}); err != nil {
				t.Fatal(err)
			}
			plan, err := laravel.MigrateIndex(ctx, c, laravel.MigrateParams{Strategy: "batch"})
			if err != nil {
				t.Fatal(err)
			}
			name := p.Tables.Jobs + "_queue_index"
			if prefixIndexes {
				name = p.TablePrefix + name
			}
			if len(plan) == 0 || !strings.Contains(plan[0], name) || !strings.Contains(plan[0], p.TablePrefix+p.Tables.Jobs) {
				t.Errorf("prefix_indexes %v: plan %q, want the index %s on %s", prefixIndexes, plan, name, p.TablePrefix+p.Tables.Jobs)
			}
			if got := indexColumns(t, c); !slices.EqualFunc(got, [][]string{{"queue"}}, slices.Equal) {
				t.Errorf("prefix_indexes %v: indexes after the migration %v", prefixIndexes, got)
			}
		}
	})
}

// TestMigrateIndexWhileDraining migrates a legacy table while workers drain it: nothing lost, nothing
// run twice.
func TestMigrateIndexWhileDraining(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		s := queuetest.NewSetup(t, db, "batch", queuetest.Options{Schema: laravel.SchemaParams{LegacyJobsIndex: true}})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(50 * time.Millisecond)
			c := queuetest.Open(t, s.Params)
			if _, err := laravel.MigrateIndex(context.Background(), c, laravel.MigrateParams{Strategy: "optimistic"}); err != nil {
				t.Errorf("migrate while draining: %v", err)
			}
		}()
		r := queuetest.Race(t, s, queuetest.RaceParams{Workers: 4, Jobs: 400, ReleaseFirst: true})
		wg.Wait()
		if got := indexColumns(t, s.Conn); !slices.EqualFunc(got, [][]string{{"queue"}}, slices.Equal) {
			t.Fatalf("indexes after migrating under load: %v", got)
		}
		t.Logf("drained beside the migration: %+v", r)
	})
}

func TestDoctorMissingTable(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		c := queuetest.Open(t, queuetest.OpenParams(db))
		fs, err := laravel.Diagnose(context.Background(), c, laravel.DoctorParams{})
		if err != nil || len(fs) != 1 || fs[0].Code != "missing-table" {
			t.Fatalf("findings %+v, %v", fs, err)
		}
		if _, err := laravel.Diagnose(context.Background(), c, laravel.DoctorParams{Strategy: "bogus"}); !errors.Is(err, laravel.ErrUnknownStrategy) {
			t.Fatalf("an unknown strategy: %v", err)
		}
	})
}

// TestDoctorMissingBatchesTable: without job_batches the doctor notes it (when the version has
// batches), and says nothing of it when the table is there.
func TestDoctorMissingBatchesTable(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		for _, skip := range []bool{true, false} {
			c := queuetest.Open(t, queuetest.OpenParams(db))
			if err := laravel.CreateSchema(context.Background(), c, laravel.SchemaParams{SkipBatches: skip}); err != nil {
				t.Fatal(err)
			}
			fs, err := laravel.Diagnose(context.Background(), c, laravel.DoctorParams{Batches: true})
			if err != nil {
				t.Fatal(err)
			}
			noted := slices.ContainsFunc(fs, func(f laravel.Finding) bool { return f.Code == "missing-batches-table" })
			if noted != skip {
				t.Errorf("without job_batches %v: findings %+v", skip, fs)
			}
			// Laravel 8's failed_job_ids is TEXT, which holds about 1,680 uuids on MySQL.
			text := slices.ContainsFunc(fs, func(f laravel.Finding) bool { return f.Code == "batch-ids-text" })
			if text != (db.Dialect == "mysql" && !skip) {
				t.Errorf("%s without job_batches %v: batch-ids-text %v in %+v", db.Dialect, skip, text, fs)
			}
			if db.Dialect == "mysql" && !skip {
				if _, err := queuetest.DB(c).Exec("alter table " + c.Tables().JobBatches + " modify failed_job_ids longtext not null"); err != nil {
					t.Fatal(err)
				}
				if fs, err = laravel.Diagnose(context.Background(), c, laravel.DoctorParams{Batches: true}); err != nil || slices.ContainsFunc(fs, func(f laravel.Finding) bool { return f.Code == "batch-ids-text" }) {
					t.Errorf("longtext failed_job_ids: %+v, %v; want no batch-ids-text", fs, err)
				}
			}
		}
	})
}

// TestDoctorReportsLongTransaction holds a transaction open with a snapshot and asks the doctor to
// report any transaction older than a nanosecond: on MariaDB and PostgreSQL it names a process and the
// rows waiting for clean-up; SQLite has nothing to report. On PostgreSQL a transaction that holds no
// snapshot (begun and idle) is not reported.
func TestDoctorReportsLongTransaction(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		s := queuetest.NewSetup(t, db, "batch", queuetest.Options{})
		if db.Dialect == "pgsql" {
			// A transaction begun and idle, holding no snapshot and no transaction id, holds nothing
			// back: not reported. (On MariaDB such a transaction does not exist yet for InnoDB, and
			// innodb_trx would answer the next read from its 0.1 s cache.)
			// Other tests' transactions in the same database may be reported: only this one's pid
			// is looked for.
			idle, err := db.Open(t).Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer idle.Close()
			var pid int64
			if err := idle.QueryRowContext(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			if _, err := idle.ExecContext(ctx, "begin"); err != nil {
				t.Fatal(err)
			}
			fs, err := laravel.Diagnose(ctx, s.Conn, laravel.DoctorParams{LongTransaction: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fs {
				if f.Code == "long-transaction" && strings.Contains(f.Message, fmt.Sprintf("(pid %d,", pid)) {
					t.Errorf("a transaction holding nothing back is reported: %s", f.Message)
				}
			}
			if _, err := idle.ExecContext(ctx, "rollback"); err != nil {
				t.Fatal(err)
			}
		}
		other := queuetest.Open(t, s.Params)
		release, err := other.HoldSnapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		fs, err := laravel.Diagnose(ctx, s.Conn, laravel.DoctorParams{LongTransaction: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		var long *laravel.Finding
		for i := range fs {
			if fs[i].Code == "long-transaction" {
				long = &fs[i]
			}
		}
		if db.Dialect == "sqlite" {
			if long != nil {
				t.Fatalf("SQLite reported %+v", long)
			}
			return
		}
		if long == nil || !strings.Contains(long.Message, "pid ") || !strings.Contains(long.Fix, "end it (") {
			t.Fatalf("findings %+v: want a long-transaction finding naming a pid and how to end it", fs)
		}
	})
}

// TestDoctorReportsAutovacuumOff turns autovacuum off for a PostgreSQL jobs table: deleted rows would
// never be removed, and the doctor says so with the statement that turns it back on.
func TestDoctorReportsAutovacuumOff(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := context.Background()
		s := queuetest.NewSetup(t, db, "batch", queuetest.Options{})
		find := func() *laravel.Finding {
			fs, err := laravel.Diagnose(ctx, s.Conn, laravel.DoctorParams{LongTransaction: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			for i := range fs {
				if fs[i].Code == "autovacuum-off" {
					return &fs[i]
				}
			}
			return nil
		}
		if db.Dialect != "pgsql" {
			if f := find(); f != nil {
				t.Fatalf("%s reported %+v", db.Dialect, f)
			}
			return
		}
		var server string
		if err := queuetest.DB(s.Conn).Get(&server, "show autovacuum"); err != nil {
			t.Fatal(err)
		}
		if f := find(); server == "on" && f != nil {
			t.Fatalf("autovacuum on, reported %+v", f)
		}
		if _, err := queuetest.DB(s.Conn).Exec("alter table " + queuetest.Q(s.Conn, s.Conn.Tables().Jobs) + " set (autovacuum_enabled = off)"); err != nil {
			t.Fatal(err)
		}
		f := find()
		switch {
		case f == nil:
			t.Fatal("no autovacuum-off finding for a table with autovacuum_enabled = off")
		case server == "on" && !strings.Contains(f.Fix, "RESET (autovacuum_enabled)"):
			t.Fatalf("finding %+v: want the statement that resets the table's setting", f)
		case server != "on" && !strings.Contains(f.Fix, "autovacuum = on"):
			t.Fatalf("finding %+v: want the statement that turns the server's autovacuum on", f)
		}
	})
}

// TestDoctorUnusableTables: a MyISAM jobs table (no transactions: two workers can reserve one job),
// Laravel 5.1–5.2's reserved column without a default (nothing can be inserted) and Laravel 5.0's
// text payload are reported with their fixes, and a view is named as one; queue:work's check refuses
// the first three and the view before any claim.
func TestDoctorUnusableTables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.MySQL(t)
	raw := db.Open(t)
	p := queuetest.OpenParams(db)
	c := queuetest.Open(t, p)
	jobs := p.Tables.Jobs
	exec := func(q string) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	exec("create table `" + jobs + "` (`id` bigint unsigned not null auto_increment primary key, `queue` varchar(191) not null, `payload` text not null, " +
		"`attempts` tinyint unsigned not null, `reserved` tinyint unsigned not null, `reserved_at` int unsigned null, `available_at` int unsigned not null, " +
		"`created_at` int unsigned not null, index `jobs_queue_reserved_reserved_at_index` (`queue`, `reserved`, `reserved_at`)) engine = MyISAM")
	fs, err := laravel.Diagnose(ctx, c, laravel.DoctorParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"non-transactional-engine", "reserved-column-required", "payload-text"} {
		if !slices.Contains(codes(fs), want) {
			t.Errorf("findings %v: want %s", codes(fs), want)
		}
	}
	if err := laravel.CheckJobsTable(ctx, c); !errors.Is(err, laravel.ErrUnusableTable) || !strings.Contains(err.Error(), "engine=InnoDB") {
		t.Errorf("CheckJobsTable on a MyISAM table: %v", err)
	}

	exec("alter table `" + jobs + "` engine = InnoDB, modify `reserved` tinyint unsigned not null default 0")
	if err := laravel.CheckJobsTable(ctx, c); err != nil {
		t.Errorf("CheckJobsTable once fixed: %v", err)
	}
	exec("rename table `" + jobs + "` to `" + jobs + "_base`")
	exec("create view `" + jobs + "` as select * from `" + jobs + "_base`")
	if fs, err = laravel.Diagnose(ctx, c, laravel.DoctorParams{}); err != nil || !slices.Contains(codes(fs), "not-a-table") {
		t.Errorf("findings on a view %v (%v): want not-a-table", codes(fs), err)
	}
	if err := laravel.CheckJobsTable(ctx, c); !errors.Is(err, laravel.ErrUnusableTable) || !strings.Contains(err.Error(), "is a view") {
		t.Errorf("CheckJobsTable on a view: %v", err)
	}
}

// TestDoctorSearchPath: with DB_SCHEMA naming two schemas, the jobs table in the second is the one
// the worker's statements reach, and the one the doctor inspects (it looked in the first only).
func TestDoctorSearchPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := testenv.Postgres(t), testenv.Postgres(t)
	s := queuetest.NewSetup(t, a, "delete-retry", queuetest.Options{Schema: laravel.SchemaParams{LegacyJobsIndex: true}})
	p := s.Params
	p.DSN = strings.Replace(p.DSN, "search_path="+a.Schema, "search_path="+b.Schema+"%2C"+a.Schema, 1)
	if p.DSN == s.Params.DSN {
		t.Fatalf("no search_path in %s", p.DSN)
	}
	c := queuetest.Open(t, p)
	fs, err := laravel.Diagnose(ctx, c, laravel.DoctorParams{})
	if err != nil || slices.Contains(codes(fs), "missing-table") || !slices.Contains(codes(fs), "legacy-index") {
		t.Fatalf("findings %v (%v): want the table in %s found, with its legacy index", codes(fs), err, a.Schema)
	}
}

// TestMigrateIndexWaitsBesideOpenTransaction: on MariaDB an online ALTER waits for the table's
// metadata lock, held by any transaction that read the table, and every worker's statement then waits
// behind it. The migration waits a few seconds at a time, says so, lets the workers' statements run in
// between, and finishes once the transaction ends.
func TestMigrateIndexWaitsBesideOpenTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.MySQL(t)
	s := queuetest.NewSetup(t, db, "delete-retry", queuetest.Options{Schema: laravel.SchemaParams{LegacyJobsIndex: true}})
	raw := db.Open(t)
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "select count(*) from `"+s.Conn.Tables().Jobs+"`"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{}, 64)
	done := make(chan error, 1)
	go func() {
		_, err := laravel.MigrateIndex(ctx, s.Conn, laravel.MigrateParams{Waiting: func(string, int, error) { waited <- struct{}{} }})
		done <- err
	}()
	<-waited // the ALTER gave up waiting once
	// Between two tries a worker's write to the table goes through.
	if _, err := raw.ExecContext(ctx, "insert into `"+s.Conn.Tables().Jobs+"` (queue, payload, attempts, available_at, created_at) values ('default', '{}', 0, 0, 0)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("migration once the transaction ended: %v", err)
	}
	if got := indexColumns(t, s.Conn); !slices.EqualFunc(got, [][]string{{"queue"}}, slices.Equal) {
		t.Fatalf("indexes after the migration: %v", got)
	}
}

// TestMigrateIndexRefusesDuringOtherDDL: while another session changes the jobs table (a migration
// stopped midway goes on in the server; another host runs one), queue:migrate-index says so and which
// process it is, instead of failing on the index the other is creating, or dropping it.
func TestMigrateIndexRefusesDuringOtherDDL(t *testing.T) {
	t.Parallel()
	for _, open := range []func(testing.TB) testenv.Database{testenv.MySQL, testenv.Postgres} {
		db := open(t)
		t.Run(db.Dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := queuetest.NewSetup(t, db, "delete-retry", queuetest.Options{Schema: laravel.SchemaParams{LegacyJobsIndex: true}})
			jobs := s.Conn.Tables().Jobs
			raw := db.Open(t)
			// A transaction that read the table, and keeps its snapshot, holds the other session's
			// change back (MariaDB's ALTER waits for its metadata lock, PostgreSQL's build for its
			// snapshot), so the change stays in progress.
			tx, err := raw.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "select count(*) from "+queuetest.Q(s.Conn, jobs)); err != nil {
				t.Fatal(err)
			}
			other := map[string]string{
				"mysql": "alter table `" + jobs + "` add index `" + jobs + "_other_index` (`created_at`)",
				"pgsql": `create index concurrently "` + jobs + `_other_index" on "` + jobs + `" (created_at)`,
			}[db.Dialect]
			done := make(chan error, 1)
			go func() { _, err := raw.ExecContext(ctx, other); done <- err }()
			var err2 error
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, err2 = laravel.MigrateIndex(ctx, s.Conn, laravel.MigrateParams{DryRun: true}); errors.Is(err2, laravel.ErrDDLInProgress) {
					break
				}
			}
			if !errors.Is(err2, laravel.ErrDDLInProgress) || !strings.Contains(err2.Error(), "wait until it is done") {
				t.Errorf("migration beside another session's change: %v, want it refused", err2)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("the other session's change: %v", err)
			}
			if _, err := laravel.MigrateIndex(ctx, s.Conn, laravel.MigrateParams{}); err != nil {
				t.Fatalf("migration once it is done: %v", err)
			}
		})
	}
}
