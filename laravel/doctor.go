package laravel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Column is one column of the jobs table as the server reports it.
type Column struct {
	Name       string
	Type       string // lower-case, as the server spells it: "tinyint(3) unsigned", "smallint", "integer"
	Nullable   bool
	HasDefault bool // the column has a default value (not known on SQLite: false)
}

// Index is one index of the jobs table.
type Index struct {
	Name    string
	Columns []string // in index order, lower-case
	Unique  bool
	Primary bool
	Invalid bool // PostgreSQL: left behind by a failed CREATE INDEX CONCURRENTLY
}

// timeAfterQueue reports whether ix is a secondary index on queue followed by a time column (Laravel
// 5.4's (queue, reserved_at), or one like it): every claim, release and delete moves rows within it.
func (ix Index) timeAfterQueue() bool {
	return !ix.Primary && len(ix.Columns) >= 2 && ix.Columns[0] == "queue" &&
		(slices.Contains(ix.Columns, "reserved_at") || slices.Contains(ix.Columns, "available_at"))
}

// JobsTable is the jobs table's structure.
type JobsTable struct {
	Name    string
	Columns []Column
	Indexes []Index
	Engine  string // MySQL's storage engine, lower-case ("innodb", "myisam"); "" elsewhere
	View    bool   // the name is a view, not a table
}

// Column returns the named column, or false.
func (t *JobsTable) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return Column{}, false
}

// InspectJobs reads the columns and indexes of the jobs table from the server's catalog. A missing
// table is an error wrapping ErrMissingTable.
func InspectJobs(ctx context.Context, c *Conn) (*JobsTable, error) {
	t := &JobsTable{Name: c.tables.Jobs}
	if err := c.d.inspect(ctx, c, t); err != nil {
		return nil, fmt.Errorf("inspect table %s: %w", c.tables.Jobs, err)
	}
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("inspect table %s: %w", c.tables.Jobs, c.newMissingTable(c.tables.Jobs, errors.New("no columns in the catalog")))
	}
	return t, nil
}

// schemaColumns reads the columns from an information_schema query of name, type, is_nullable and
// whether the column has a default (1 or 0).
func (c *Conn) schemaColumns(ctx context.Context, t *JobsTable, q string) error {
	rows, err := c.db.QueryContext(ctx, q, t.Name)
	if err != nil {
		return c.translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var col Column
		var null string
		var def int
		if err := rows.Scan(&col.Name, &col.Type, &null, &def); err != nil {
			return err
		}
		col.Name, col.Type, col.Nullable, col.HasDefault = strings.ToLower(col.Name), strings.ToLower(col.Type), null == "YES", def != 0
		t.Columns = append(t.Columns, col)
	}
	return rows.Err()
}

// addIndexColumn appends col to the index named ix.Name, adding the index when it is new.
func (t *JobsTable) addIndexColumn(ix Index, col string) {
	col = strings.ToLower(col)
	for i := range t.Indexes {
		if t.Indexes[i].Name == ix.Name {
			t.Indexes[i].Columns = append(t.Indexes[i].Columns, col)
			return
		}
	}
	ix.Columns = []string{col}
	t.Indexes = append(t.Indexes, ix)
}

// Severity says how urgent a finding is.
type Severity string

// Severities. Errors and warnings need fixing; notes do not.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityNote    Severity = "note"
)

// Finding is one thing the doctor noticed about the jobs table or the worker settings, with the fix.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix"`
}

// DoctorParams are the worker settings the doctor checks the table against.
type DoctorParams struct {
	// Strategy is the claim strategy the workers use; empty or "auto" checks the one ChooseStrategy
	// picks.
	Strategy string
	// RetryAfter is the connection's retry_after; Timeout is the longest job timeout (--timeout or a
	// job's $timeout). Zero skips the check.
	RetryAfter, Timeout time.Duration
	// LongTransaction is the age from which an open transaction is reported because it holds back
	// the removal of deleted jobs rows; 0 skips the check.
	LongTransaction time.Duration
	// FailedJobs says the workers write failed_jobs (every failed-job driver but null): its table and
	// grants are checked too.
	FailedJobs bool
	// Batches says the Laravel version has job batches (8+): job_batches is checked when it exists,
	// and a missing one is a note.
	Batches bool
	// Cache says the cache store is the database: its tables and grants are checked too, as the
	// worker checks them before it starts.
	Cache bool
}

// DefaultLongTransaction is the LongTransaction queue:doctor checks with: a transaction open this
// long lets thousands of deleted rows of a busy queue pile up.
const DefaultLongTransaction = time.Minute

// StrategyColumns lists the columns a strategy uses when the table has them, and what each is for.
var StrategyColumns = map[string][]struct{ Name, Why string }{
	"delete-mark": {{"delete_mark", "lets the sweep find marked rows through an index instead of scanning"}},
	"optimistic":  {{"version", "a counter every claim increments and checks, so the compare-and-set never depends on attempts alone"}},
}

// tableProblem is a shape of the jobs table no worker can use safely.
type tableProblem struct{ code, what, fix string }

// problems lists what makes the jobs table unusable: not a table, a storage engine without
// transactions (two workers, PHP's too, can reserve one job), a column no insert can fill.
func (t *JobsTable) problems(c *Conn) []tableProblem {
	var out []tableProblem
	if t.View {
		out = append(out, tableProblem{"not-a-table", fmt.Sprintf("%q is a view, not a table: claims cannot lock its rows, and indexes cannot be added to it", t.Name),
			"point the queue at the table itself (the database connection's table in config/queue.php, DB_QUEUE_TABLE, or tables.jobs in the YAML file)"})
	}
	if t.Engine != "" && t.Engine != "innodb" && !t.View {
		out = append(out, tableProblem{"non-transactional-engine", fmt.Sprintf("the jobs table uses the %s storage engine, which has no transactions or row locks: two workers, PHP's too, can reserve the same job and run it twice", t.Engine),
			"alter table " + t.Name + " engine=InnoDB (the server copies the table, and jobs wait while it does: run it while the queue is quiet)"})
	}
	if col, ok := t.Column("reserved"); ok && !col.Nullable && !col.HasDefault && c.name != SQLite {
		out = append(out, tableProblem{"reserved-column-required", "the table has Laravel 5.1–5.2's reserved column, not null and without a default: Laravel 5.5+ does not write it, so no job can be dispatched or released (Field 'reserved' doesn't have a default value)",
			"alter table " + t.Name + " drop column reserved (or, while Laravel 5.2 workers still run, give it a default: alter table " + t.Name + " alter reserved set default 0)"})
	}
	return out
}

// CheckJobsTable refuses, before any job is claimed, a jobs table no worker can use safely (see
// problems): a view, a MyISAM table, a column no insert fills. Each error names the fix.
func CheckJobsTable(ctx context.Context, c *Conn) error {
	t, err := InspectJobs(ctx, c)
	if err != nil {
		return nil // a missing table or an unreadable catalog is reported by the claims, as before
	}
	if ps := t.problems(c); len(ps) > 0 {
		return fmt.Errorf("%w: %s; fix: %s (artisan-go queue:doctor lists what else to fix)", ErrUnusableTable, ps[0].what, ps[0].fix)
	}
	return nil
}

// ErrUnusableTable is wrapped by CheckJobsTable's errors.
var ErrUnusableTable = errors.New("the jobs table cannot be worked safely")

// NeedsFix reports whether any finding is an error or a warning.
func NeedsFix(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity != SeverityNote })
}

// Diagnose inspects the jobs table and reports, each with its fix: Laravel 5.4's composite
// (queue, reserved_at) index and other composite indexes known to deadlock with concurrent claims, a
// missing queue index, an invalid index, the attempts column's limit, columns the strategy would use,
// a transaction open long enough to hold back the removal of deleted rows, a retry_after that is
// not longer than the longest job timeout, and a server that is a node of a Galera cluster.
func Diagnose(ctx context.Context, c *Conn, p DoctorParams) ([]Finding, error) {
	if p.Strategy != "" && p.Strategy != AutoStrategy && !slices.Contains(Strategies(), p.Strategy) {
		return nil, fmt.Errorf("%w %q: use %s or %s", ErrUnknownStrategy, p.Strategy, AutoStrategy, strings.Join(Strategies(), ", "))
	}
	t, err := InspectJobs(ctx, c)
	if errors.Is(err, ErrMissingTable) {
		return []Finding{{Code: "missing-table", Severity: SeverityError,
			Message: fmt.Sprintf("the jobs table %q does not exist", c.tables.Jobs),
			Fix:     "run php artisan queue:table && php artisan migrate (or set DB_QUEUE_TABLE to the table Laravel uses)"}}, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Finding
	add := func(code string, sev Severity, fix, format string, args ...any) {
		out = append(out, Finding{Code: code, Severity: sev, Message: fmt.Sprintf(format, args...), Fix: fix})
	}
	for _, p := range t.problems(c) {
		add(p.code, SeverityError, p.fix, "%s", p.what)
	}
	migrate := "artisan-go queue:migrate-index (online; --dry-run prints the statements first; as a user with the " + c.d.alterPrivilege() + ")"
	hasQueueIndex := false
	for _, ix := range t.Indexes {
		if ix.Invalid {
			add("invalid-index", SeverityError, migrate+", which drops and rebuilds it",
				"index %s is invalid (a CREATE INDEX CONCURRENTLY that did not finish): PostgreSQL maintains it but never uses it", ix.Name)
			continue
		}
		if len(ix.Columns) > 0 && ix.Columns[0] == "queue" {
			hasQueueIndex = true // a claim's lookup by queue uses its first column
		}
		if !ix.timeAfterQueue() {
			continue
		}
		legacy := slices.Equal(ix.Columns, []string{"queue", "reserved_at"})
		if c.name != MySQL {
			// Without InnoDB's range locks there is no deadlock; the cost is the index's churn.
			code, what := "composite-index", "has a time column after queue"
			if legacy {
				code, what = "legacy-index", "(Laravel 5.4's) has reserved_at after queue"
			}
			add(code, SeverityWarning, migrate,
				"index %s (%s) %s: every claim, release and delete moves the row within it (on PostgreSQL none of these updates can be HOT), which the claims do not need; Laravel 5.5+ indexes (queue) alone", ix.Name, strings.Join(ix.Columns, ", "), what)
			continue
		}
		if legacy {
			add("legacy-index", SeverityError, migrate,
				"index %s (queue, reserved_at) is Laravel 5.4's: concurrent claims lock ranges of it while releases and deletes change reserved_at, the deadlock pattern of laravel/framework #7046 and #31660; Laravel 5.5+ indexes (queue) alone", ix.Name)
			continue
		}
		add("composite-index", SeverityError, migrate,
			"index %s (%s) has a time column after queue: every claim and release moves rows within it, which deadlocks concurrent claimers (Laravel reverted such an index in #59202)", ix.Name, strings.Join(ix.Columns, ", "))
	}
	if !hasQueueIndex {
		add("missing-queue-index", SeverityError, migrate,
			"no index on (queue): every claim scans the table")
	}
	if col, ok := t.Column("attempts"); ok && c.caps.TypedIntegers && strings.HasPrefix(col.Type, "tinyint") {
		add("attempts-limit", SeverityNote, "nothing while jobs are retried fewer than 255 times; to lift the limit: alter table "+c.tables.Jobs+" modify attempts smallint unsigned not null (the server copies the table, and jobs wait while it does: run it while the queue is quiet)",
			"attempts is %s: it holds at most 255, so a job released more often fails to be reserved on PHP before 12.54 (artisan-go counts to 255 and then fails the job where it would release it again, whatever its tries)", col.Type)
	}
	if col, ok := t.Column("reserved"); ok && (col.Nullable || col.HasDefault || c.name == SQLite) {
		add("legacy-reserved-column", SeverityWarning, "alter table "+c.tables.Jobs+" drop column reserved, once no Laravel 5.2 worker runs",
			"the table has Laravel 5.1–5.2's reserved column: later Laravel versions do not write it")
	}
	if col, ok := t.Column("payload"); ok && c.name == MySQL && (col.Type == "text" || col.Type == "tinytext") {
		add("payload-text", SeverityWarning, "alter table "+c.tables.Jobs+" modify payload longtext not null (the server copies the table, and jobs wait while it does: run it while the queue is quiet)",
			"payload is %s (Laravel 5.0's): a job whose payload is longer than %s cannot be dispatched (Data too long for column 'payload')", col.Type, map[string]string{"text": "64 KB", "tinytext": "255 bytes"}[col.Type])
	}
	strategy := p.Strategy
	if strategy == "" || strategy == AutoStrategy {
		if strategy, _, err = ChooseStrategy(ctx, c); err != nil {
			return nil, err
		}
	}
	for _, col := range StrategyColumns[strategy] {
		if _, ok := t.Column(col.Name); !ok {
			add("strategy-column", SeverityWarning, "artisan-go queue:migrate-index --strategy "+strategy,
				"strategy %s works without a %s column, but one %s", strategy, col.Name, col.Why)
		}
	}
	if err := c.diagnoseCleanup(ctx, p, add); err != nil {
		return nil, err
	}
	if p.RetryAfter > 0 && p.Timeout > 0 && p.RetryAfter <= p.Timeout {
		add("retry-after", SeverityError, fmt.Sprintf("set retry_after in config/queue.php (DB_QUEUE_RETRY_AFTER) above the longest timeout, e.g. %d", int((p.Timeout+30*time.Second)/time.Second)),
			"retry_after (%v) is not longer than the longest job timeout (%v): a PHP worker takes a job that is still running and runs it twice", p.RetryAfter, p.Timeout)
	}
	if c.cluster {
		add("galera-node", SeverityNote, "point every worker, PHP's too, at one node (a proxy that sends writes to one node: MaxScale, ProxySQL, HAProxy with one active backend); the others stay for failover",
			"the server is a node of a Galera cluster: a node locks rows for its own sessions only, so workers that claim through different nodes take the same rows and all but one fail certification at commit (deadlock errors, retried). Three queue:work processes drained 20,000 jobs in 3.1–3.6 s through one node of a cluster on one machine, and in 4.7–5.4 s with 258–332 such conflicts through three")
	}
	if pooled, err := c.TransactionPooled(ctx); err == nil && pooled {
		add("transaction-pooler", SeverityNote, "nothing to change for artisan-go; in the Laravel application behind the same pooler set PDO::ATTR_EMULATE_PREPARES => true in the connection's options (config/database.php), and keep DB_SCHEMA unset (set the role's search_path on the server)",
			"the server session changes between transactions (a transaction pooler such as PgBouncer): artisan-go keeps nothing in a session between transactions (the second claim lane's lead is a lock of a transaction it keeps open, which the pooler keeps with its client); PHP's PDO prepares named statements on one server connection and runs them on another (\"prepared statement pdo_stmt_… does not exist\") unless it emulates them")
	}
	out = append(out, grantFindings(ctx, c, GrantsParams{FailedJobs: p.FailedJobs, Batches: p.Batches, Cache: p.Cache})...)
	if p.Cache {
		if _, err := c.hasGrant(ctx, Grant{c.tables.Cache, "SELECT"}); errors.Is(err, ErrMissingTable) {
			add("missing-table", SeverityError, "php artisan cache:table && php artisan migrate",
				"the table %q does not exist and the cache store is database: the worker does not start (php artisan queue:restart could not stop it), and PHP's workers stop on it", c.tables.Cache)
		}
	}
	if p.Batches {
		if ok, err := c.BatchesTableExists(ctx); err == nil && !ok {
			add("missing-batches-table", SeverityNote, "php artisan queue:batches-table && php artisan migrate, if the application dispatches batches",
				"the table %q does not exist: the jobs of a Bus::batch() would run and stay reserved, their batch never counted", c.tables.JobBatches)
		}
		if c.name == MySQL {
			if limit, kind, err := c.failedJobIDsColumn(ctx, c.db); err == nil && limit > 0 && limit <= mysqlTextBytes {
				add("batch-ids-text", SeverityNote, c.failedJobIDsFix()+" (as Laravel 9.44+ creates it)",
					"%s.failed_job_ids is %s (Laravel 8's): it lists about %d failed uuids; past that PHP's workers fail to count a batch's failures (Data too long), and artisan-go counts them without listing them, so queue:retry-batch leaves those",
					c.tables.JobBatches, kind, limit/39)
			}
		}
	}
	if c.name == MySQL {
		// Tables of Laravel 5.3 and older (utf8) hold no emoji: PHP cannot dispatch a job holding one,
		// and PHP's worker loses the failure of one whose exception or payload holds one.
		for _, tc := range []struct{ table, what string }{
			{c.tables.Jobs, "PHP cannot dispatch a job whose payload holds one (Incorrect string value)"},
			{c.tables.FailedJobs, "PHP's worker loses a failed job whose exception or payload holds one (Incorrect string value); artisan-go writes it with the payload's escaped and U+FFFD in the exception"},
		} {
			if cols, err := c.narrowCharset(ctx, tc.table); err == nil && len(cols) > 0 {
				add("narrow-charset", SeverityWarning, "alter table "+tc.table+" convert to character set utf8mb4 collate utf8mb4_unicode_ci (the server copies the table: run it while the queue is quiet)",
					"%s.%s holds no character outside the Basic Multilingual Plane (an emoji): %s", tc.table, strings.Join(cols, ", "), tc.what)
			}
		}
	}
	if skew, err := ClockSkew(ctx, c, ClockSkewParams{}); err == nil && skew.Abs() >= MaxClockSkew {
		add("clock-skew", SeverityWarning, "synchronise this machine's clock and the database server's (NTP)",
			"this machine's clock is %v ahead of the database server's (negative: behind): workers compare reservations with their own clocks, so one ahead takes running jobs before retry_after", skew.Round(time.Millisecond))
	}
	return out, nil
}

// grantConsequence says what a worker cannot do without g.
func (c *Conn) grantConsequence(g Grant) string {
	switch {
	case strings.HasPrefix(g.Table, "SEQUENCE "):
		return "releases, chain links and failed jobs cannot take an id, so those jobs stay reserved and run again after retry_after"
	case g.Table == c.tables.Jobs && (g.Privilege == "SELECT" || g.Privilege == "UPDATE"):
		return "no job can be claimed"
	case g.Table == c.tables.Jobs && g.Privilege == "DELETE":
		return "jobs would run but never complete: their rows stay reserved and run again after retry_after"
	case g.Table == c.tables.Jobs:
		return "released jobs and the next links of chains cannot be queued, so those jobs stay reserved and run again after retry_after"
	case g.Table == c.tables.FailedJobs:
		return "failed jobs cannot be recorded: they stay reserved and run again after retry_after"
	case g.Table == c.tables.JobBatches:
		return "batch counters cannot be kept: the members of batches stay reserved"
	}
	return "the cache store's queue:restart signal, maintenance mode, maxExceptions counts and unique locks cannot be kept"
}

// grantFindings reports missing privileges and a missing failed_jobs table as findings.
func grantFindings(ctx context.Context, c *Conn, p GrantsParams) []Finding {
	err := CheckGrants(ctx, c, p)
	var mg *MissingGrantsError
	var mt *MissingTableError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mg):
		var out []Finding
		for _, g := range mg.Missing {
			out = append(out, Finding{Code: "missing-grant", Severity: SeverityError,
				Message: fmt.Sprintf("the database user lacks %s on %s: %s", g.Privilege, g.Table, c.grantConsequence(g)), Fix: mg.Fixes[g.Table]})
		}
		return out
	case errors.As(err, &mt):
		if mt.Hidden != "" {
			return []Finding{{Code: "missing-table", Severity: SeverityError, Message: fmt.Sprintf("the table %q is not in the worker's search_path", mt.Table), Fix: mt.Hidden}}
		}
		return []Finding{{Code: "missing-table", Severity: SeverityError, Message: fmt.Sprintf("the table %q does not exist", mt.Table), Fix: "run " + mt.Fix}}
	}
	return []Finding{{Code: "grants-unknown", Severity: SeverityWarning, Message: "could not check the database user's privileges: " + err.Error(), Fix: "check that the user may select, insert, update and delete jobs rows and insert failed_jobs rows"}}
}

// narrowCharset lists a MySQL table's payload and exception columns whose character set is not
// utf8mb4, each with its character set.
func (c *Conn) narrowCharset(ctx context.Context, table string) ([]string, error) {
	rows, err := c.db.QueryContext(ctx, mysqlNarrowCharsetSQL, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var col, set string
		if err := rows.Scan(&col, &set); err != nil {
			return nil, err
		}
		out = append(out, col+" ("+set+")")
	}
	return out, rows.Err()
}
