package interop

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/cli"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// The differential suite runs each scenario of diffScenarios twice on identical tables: once with PHP's
// own `queue:work`, once with artisan-go (Go handlers that do what the PHP jobs' handle() does), and
// compares jobs, failed_jobs, job_batches, cache, cache_locks, users and interop_log after every step.
//
// Dispatches before any other step run on the PHP copy only; its tables are then copied, row for row,
// to the Go copy, so both workers start from the same bytes. Every later step runs on both copies. Snapshots are normalized only where two correct runs must
// differ: row ids and uuids (numbered in order of appearance), times (a row's delay is kept, the
// instant is not), lock owners, and exception traces (the first line, "Class: message", is kept; file
// and line are PHP's or Go's own). Everything else must be equal.

// diffScenario is one row of the suite: a name and its steps.
type diffScenario struct {
	name  string
	steps []diffStep
	// differs names a known difference from PHP (listed in the README); the scenario is skipped with
	// that reason.
	differs string
	// env sets more variables of both copies' Laravel application. Not CACHE_DRIVER=redis: the copies
	// share a cache prefix, which only the database store (one cache table per copy) keeps apart.
	env []string
	// goConfig changes the Go worker's configuration for every work step (middleware limits, say).
	goConfig func(*worker.Config)
}

// diffStep is one step; exactly one of its fields is set.
type diffStep struct {
	dispatch *scenarioSpec // PHP dispatches jobs (interop:scenario)
	work     *diffWork     // PHP's worker on one copy, artisan-go's on the other
	artisan  []string      // a php artisan command, run on both copies
	sql      string        // one statement, run on both copies (for example, deleting a model's row)
}

// diffWork is a run of the workers until the queue is empty, with options that mean the same to both.
type diffWork struct {
	tries   int // --tries (default 1, as Laravel 8's)
	backoff int // --backoff
	timeout int // --timeout in seconds (default 60)
	once    bool
	queue   string
	force   bool // --force
	// phpFinishes lets a PHP worker run, after the Go worker, what Go queued for it (batch callbacks,
	// failed() hooks through the companion jobs) or left to it; without it, a job Go leaves is an error.
	phpFinishes bool
	// phpExits is set when PHP's worker is expected to exit non-zero (a timeout kills the process).
	phpExits bool
}

// scenarioSpec is what interop:scenario dispatches (see testdata/laravel/app/Console/Commands).
type scenarioSpec struct {
	Mode          string `json:"mode,omitempty"` // jobs (default), chain or batch
	Jobs          []sjob `json:"jobs"`
	Catch         bool   `json:"catch,omitempty"`
	Callbacks     bool   `json:"callbacks,omitempty"`
	AllowFailures bool   `json:"allowFailures,omitempty"`
}

// sjob describes one App\Jobs\Scenario\* job: class (default Scenario), name, plan and the
// properties interop:scenario sets (tries, backoff, maxExceptions, timeout, failOnTimeout, retryUntil
// in seconds from now, delay, queue, key, users).
type sjob map[string]any

// job returns a Scenario job with a plan (see Scenario.php): ok, throw, release:N, fail, fail-throw,
// delete, delete-throw, sleep:N.
func job(name string, plan ...string) sjob {
	if len(plan) == 0 {
		plan = []string{"ok"}
	}
	return sjob{"name": name, "plan": plan}
}

// with sets one property and returns the job.
func (j sjob) with(key string, v any) sjob { j[key] = v; return j }

// class sets the job's class, a basename under App\Jobs\Scenario.
func (j sjob) class(c string) sjob { return j.with("class", c) }

func dispatchJobs(jobs ...sjob) diffStep {
	return diffStep{dispatch: &scenarioSpec{Jobs: jobs}}
}

func work(w diffWork) diffStep { return diffStep{work: &w} }

// passTime moves every queued job an hour into the past, on both copies, so delayed and released
// jobs become available while their delays stay visible.
var passTime = diffStep{sql: "UPDATE jobs SET available_at = available_at - 3600, created_at = created_at - 3600"}

// diffTables are the tables compared after each step, in the order their uuids are numbered.
var diffTables = []string{"jobs", "failed_jobs", "interop_log", "job_batches", "cache", "cache_locks", "users"}

// diffParallel bounds how many scenario runs (each with two databases, a PHP and a Go worker) go at
// once; they wait on PHP processes and the database servers more than on the CPU, and each holds a few
// server connections.
const diffParallel = 6

// TestDifferential runs every scenario on MariaDB, PostgreSQL and SQLite and fails on any difference between
// the tables PHP's worker leaves and those artisan-go leaves. ARTISAN_GO_DIFF selects scenarios by
// name (a regular expression).
func TestDifferential(t *testing.T) {
	var only *regexp.Regexp
	if v := os.Getenv("ARTISAN_GO_DIFF"); v != "" {
		only = regexp.MustCompile(v)
	}
	sem := make(chan struct{}, diffParallel)
	var wg sync.WaitGroup
	for _, d := range []struct {
		name string
		make func(testing.TB) testenv.Database
		opts []phpapp.Option
		// ownPrefix gives each copy a cache prefix of its own, where nothing else keeps them apart.
		ownPrefix bool
	}{
		{"mysql", testenv.MySQL, nil, false}, {"pgsql", testenv.Postgres, nil, false}, {"sqlite", testenv.SQLite, nil, false},
		// Redis, files and memcached as the cache store, on one database: the store does not depend on it.
		{"mysql-redis", testenv.MySQL, []phpapp.Option{phpapp.WithRedisCache()}, false},
		// The file store with stores.file.permission set, so that the files' and directories' modes
		// are compared too.
		{"mysql-file", testenv.MySQL, []phpapp.Option{phpapp.WithFileCache(), phpapp.WithEnv(
			"CACHE_FILE_PERMISSION=0770", "ARTISAN_GO_CACHE_FILE_PERMISSION=0770")}, false},
		{"mysql-memcached", testenv.MySQL, []phpapp.Option{phpapp.WithMemcachedCache()}, true},
	} {
		pairs := &diffPairs{t: t, mk: d.make, opts: d.opts, ownPrefix: d.ownPrefix, free: make(chan *diffPair, len(diffScenarios))}
		for _, sc := range diffScenarios {
			if only != nil && !only.MatchString(sc.name) {
				continue
			}
			if d.opts != nil && slices.ContainsFunc(sc.env, func(kv string) bool { return strings.HasPrefix(kv, "CACHE_DRIVER=") }) {
				continue // a scenario of its own cache store: the cache store variants would repeat it
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				t.Run(sc.name+"/"+d.name, func(t *testing.T) { runDifferential(t, sc, pairs) })
			}()
		}
	}
	wg.Wait()
}

// diffPair is the two copies a scenario runs on: PHP's and artisan-go's.
type diffPair struct{ php, gos *side }

// diffPairs hands out pairs of copies of one database kind. Creating the tables costs seconds on
// MariaDB, so a pair is emptied and used again by the next scenario.
type diffPairs struct {
	t         *testing.T // the suite's test, which owns the databases
	mk        func(testing.TB) testenv.Database
	opts      []phpapp.Option // the apps' options (the cache store)
	ownPrefix bool            // each copy has a cache prefix of its own
	free      chan *diffPair
}

// get returns an empty pair: a used one when there is one (and the scenario sets no environment of
// its own), a new one otherwise.
func (p *diffPairs) get(t *testing.T, ctx context.Context, sc diffScenario) *diffPair {
	if len(sc.env) == 0 {
		select {
		case pr := <-p.free:
			for _, s := range []*side{pr.php, pr.gos} {
				for _, table := range diffTables {
					if _, err := s.app.DB().ExecContext(ctx, "DELETE FROM "+table); err != nil {
						t.Fatalf("empty %s: %v", table, err)
					}
				}
				if err := os.Remove(filepath.Join(s.app.StoragePath(), "framework", "down")); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				s.clearRedis(t, ctx)
				s.clearFiles(t)
				if s.mc != nil {
					s.clearMemcached(t)
				}
				s.goConfig = nil
			}
			return pr
		default:
		}
	}
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	// Both copies share APP_KEY (encrypted jobs) and the cache prefix (lock and counter keys), unless
	// the prefix is what keeps their keys apart.
	key := "APP_KEY=base64:" + base64.StdEncoding.EncodeToString(k[:])
	shared := "CACHE_PREFIX=" + testenv.Name("cache")
	// A pair of the suite is used again by the next scenario; one with an environment of its own is
	// the scenario's, its databases and connections gone when the scenario ends.
	owner := p.t
	if len(sc.env) != 0 {
		owner = t
	}
	newCopy := func() *side {
		prefix := shared
		if p.ownPrefix {
			prefix = "CACHE_PREFIX=" + testenv.Name("cache")
		}
		env := phpapp.WithEnv(append([]string{key, prefix}, sc.env...)...)
		return newSide(owner, p.mk(owner), append(slices.Clone(p.opts), env)...)
	}
	pr := &diffPair{php: newCopy(), gos: newCopy()}
	for _, s := range []*side{pr.php, pr.gos} {
		// Pairs live until the suite ends, on database servers other tests share: they keep one idle
		// connection each. Snapshots and copies read one table at a time.
		s.app.DB().SetMaxOpenConns(2)
		s.app.DB().SetMaxIdleConns(1)
		queuetest.DB(s.conn).SetMaxIdleConns(1)
	}
	seen := map[string]bool{}
	pr.php.mcSeen, pr.gos.mcSeen = seen, seen
	pr.gos.registerScenarios()
	return pr
}

// put gives a pair back for another scenario.
func (p *diffPairs) put(sc diffScenario, pr *diffPair) {
	if len(sc.env) == 0 {
		p.free <- pr
	}
}

// runDifferential runs one scenario on a pair of copies.
func runDifferential(t *testing.T, sc diffScenario, pairs *diffPairs) {
	if sc.differs != "" {
		t.Skip("known difference from PHP: " + sc.differs)
	}
	ctx := testContext(t)
	pr := pairs.get(t, ctx, sc)
	defer pairs.put(sc, pr)
	php, gos := pr.php, pr.gos
	gos.goConfig = sc.goConfig
	copied := false
	for i, st := range sc.steps {
		what := stepName(st)
		if !copied && st.dispatch != nil {
			php.diffApply(t, ctx, st, false)
			continue
		}
		if !copied {
			copyTables(t, ctx, php.app, gos.app)
			copyRedis(t, ctx, php, gos)
			if php.files != nil {
				copyFiles(t, php, gos)
			}
			if php.mc != nil {
				copyMemcached(t, php, gos)
			}
			copied = true
		}
		phpOut := php.diffApply(t, ctx, st, false)
		goOut := gos.diffApply(t, ctx, st, true)
		if st.work != nil && !st.work.phpFinishes && !st.work.phpExits {
			if want, got := consoleLines(phpOut), consoleLines(goOut); want != got {
				t.Errorf("step %d (%s): queue:work printed\n--- PHP's worker\n%s--- artisan-go\n%s", i+1, what, want, got)
			}
		}
		if php.mc != nil {
			// Each copy's keys are listed before either is rendered, so that a key one dump missed
			// is still read on that copy by name.
			php.mcItems(t)
			gos.mcItems(t)
		}
		want, got := snapshot(t, ctx, php), snapshot(t, ctx, gos)
		if want != got && !sameButTick(want, got) {
			t.Fatalf("step %d (%s): tables differ\n--- PHP's worker\n%s\n--- artisan-go\n%s\n--- difference\n%s", i+1, what, want, got, lineDiff(want, got))
		}
		if testing.Verbose() && st.work != nil {
			t.Logf("step %d (%s): equal\n%s", i+1, what, want)
		}
	}
}

func stepName(st diffStep) string {
	switch {
	case st.dispatch != nil:
		b, _ := json.Marshal(st.dispatch)
		return "dispatch " + string(b)
	case st.work != nil:
		return fmt.Sprintf("work %+v", *st.work)
	case st.artisan != nil:
		return "artisan " + strings.Join(st.artisan, " ")
	}
	return "sql " + st.sql
}

// diffApply runs one step on this copy; goWorker says whether work means artisan-go's worker. A work
// step returns what the worker printed on standard output (artisan-go's: its console lines for the
// app's Laravel version).
func (s *side) diffApply(t *testing.T, ctx context.Context, st diffStep, goWorker bool) string {
	t.Helper()
	switch {
	case st.dispatch != nil:
		b, err := json.Marshal(st.dispatch)
		if err != nil {
			t.Fatal(err)
		}
		s.artisan(t, ctx, "interop:scenario", string(b))
	case st.artisan != nil:
		s.artisan(t, ctx, st.artisan...)
	case st.sql != "":
		if _, err := s.app.DB().ExecContext(ctx, st.sql); err != nil {
			t.Fatalf("%s: %v", st.sql, err)
		}
	case st.work != nil && goWorker:
		var out strings.Builder
		v, err := payload.ParseVersion(s.cfg.LaravelVersion)
		if err != nil {
			t.Fatal(err)
		}
		s.events = cli.ConsoleEvents(&out, cli.ConsoleParams{Version: v, Location: time.UTC, Width: 80})
		defer func() { s.events = nil }()
		s.goWork(t, ctx, *st.work)
		return out.String()
	case st.work != nil:
		return s.phpWork(t, ctx, *st.work)
	}
	return ""
}

// consoleDate and consoleID are the time and the job id of a queue:work line of Laravel 8.
var consoleDate, consoleID = regexp.MustCompile(`^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]`), regexp.MustCompile(`^\[(\d+)\]`)

// consoleLines is a worker's output with the times left out and the job ids numbered in order of
// appearance, as two correct runs may differ in those.
func consoleLines(out string) string {
	ids := map[string]int{}
	var b strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if line == "" {
			continue
		}
		if loc := consoleDate.FindStringIndex(line); loc != nil {
			line = "[date]" + line[loc[1]:]
			rest := strings.TrimPrefix(line, "[date]")
			if m := consoleID.FindStringSubmatch(rest); m != nil {
				if ids[m[1]] == 0 {
					ids[m[1]] = len(ids) + 1
				}
				line = "[date][#" + strconv.Itoa(ids[m[1]]) + "]" + rest[len(m[0]):]
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

func (w diffWork) withDefaults() diffWork {
	if w.tries == 0 {
		w.tries = 1
	}
	if w.timeout == 0 {
		w.timeout = 60
	}
	if w.queue == "" {
		w.queue = "default"
	}
	return w
}

func (s *side) phpWork(t *testing.T, ctx context.Context, w diffWork) string {
	t.Helper()
	w = w.withDefaults()
	args := []string{"queue:work", "database", "--stop-when-empty", "--sleep=0", "--queue=" + w.queue,
		"--tries=" + strconv.Itoa(w.tries), "--backoff=" + strconv.Itoa(w.backoff), "--timeout=" + strconv.Itoa(w.timeout)}
	if w.once {
		args = append(args, "--once")
	}
	if w.force {
		args = append(args, "--force")
	}
	out, err := s.app.Artisan(ctx, args...)
	if err != nil && !w.phpExits {
		t.Fatalf("PHP's worker: %v\n%s", err, out)
	}
	if err == nil && w.phpExits {
		t.Fatalf("PHP's worker exited normally; the scenario expects its timeout to kill it\n%s", out)
	}
	return out
}

func (s *side) goWork(t *testing.T, ctx context.Context, w diffWork) {
	t.Helper()
	w = w.withDefaults()
	st := s.drain(t, ctx, func(c *worker.Config) {
		c.Queues = strings.Split(w.queue, ",")
		c.Tries = w.tries
		c.Backoff = []int{w.backoff}
		c.Timeout = time.Duration(w.timeout) * time.Second
		c.Concurrency = 1
		c.Once = w.once
		c.Force = w.force
		c.MaintenanceFile = filepath.Join(s.app.StoragePath(), "framework", "down") // APP_STORAGE moves it
		if w.phpFinishes {
			c.BatchCompanion = `App\Jobs\RunBatchCallbacks`
			c.FailedCompanion = `App\Jobs\RunFailedHooks`
		}
		if s.goConfig != nil {
			s.goConfig(c)
		}
	})
	if st.LeftForPHP != 0 && !w.phpFinishes {
		t.Fatalf("artisan-go left %d jobs to PHP: %+v", st.LeftForPHP, st)
	}
	if w.phpFinishes {
		s.phpDrain(t, ctx, "--queue="+w.queue)
	}
}

// scenarioCommand is the part of an App\Jobs\Scenario\* command the Go handler reads.
type scenarioCommand struct {
	Name  string                   `php:"name"`
	Plan  []string                 `php:"plan"`
	User  *payload.ModelIdentifier `php:"user"`
	Users *payload.ModelIdentifier `php:"users"`
}

// scenarioHandler is the Go port of App\Jobs\Scenario\Scenario::handle: it records the run in
// interop_log as PHP's InteropLog::write does and then does what the plan says for this attempt.
type scenarioHandler struct{ s *side }

// untilProcessingHandler marks ScenarioUniqueUntilProcessing.
type untilProcessingHandler struct{ uniqueHandler }

// UniqueUntilProcessing reports that the lock goes as processing starts.
func (untilProcessingHandler) UniqueUntilProcessing() bool { return true }

// registerScenarios registers the Go handlers of every App\Jobs\Scenario class.
func (s *side) registerScenarios() {
	h := scenarioHandler{s}
	const ns = `App\Jobs\Scenario\`
	for _, c := range []string{"Scenario", "ScenarioSecret", "ScenarioModel", "ScenarioModelDeleteWhenMissing", "ScenarioWithFailedHook", "ScenarioWithThrowingFailedHook"} {
		s.reg.Register(ns+c, h)
	}
	s.reg.Register(ns+"ScenarioUnique", uniqueHandler{h})
	s.reg.Register(ns+"ScenarioUniqueUntilProcessing", untilProcessingHandler{uniqueHandler{h}})
	// A route, as the YAML configuration makes one: its unique_id computes what uniqueId() returns.
	if err := handlers.AddRoutes(s.reg, []handlers.Route{{Class: ns + "ScenarioUniqueRouted", Builtin: "noop", UniqueID: "{key}"}}); err != nil {
		panic(err)
	}
}

// Handle runs one attempt.
func (h scenarioHandler) Handle(ctx context.Context, job *handlers.Job) error {
	var cmd scenarioCommand
	if err := payload.Bind(job.Command, &cmd); err != nil {
		return err
	}
	// The same members in the same order as Scenario::record and ScenarioModel::record.
	rec := struct {
		Name  string `json:"name"`
		User  any    `json:"user,omitempty"`
		Users any    `json:"users,omitempty"`
	}{Name: cmd.Name}
	if cmd.User != nil {
		rec.User, rec.Users = cmd.User.ID, cmd.Users.ID
	}
	props, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := h.s.app.Insert(ctx, phpapp.LogEntry{Class: job.Class, UUID: job.UUID, JobID: itoa(job.ID),
		Attempts: job.Attempts, Queue: job.Queue, Runner: "go", RawProps: string(props)}); err != nil {
		return err
	}
	step := "ok"
	if n := min(job.Attempts, len(cmd.Plan)); n > 0 {
		step = cmd.Plan[n-1]
	}
	action, arg, _ := strings.Cut(step, ":")
	secs, _ := strconv.Atoi(arg)
	message := fmt.Sprintf("scenario %s attempt %d", cmd.Name, job.Attempts)
	switch action {
	case "ok":
		return nil
	case "throw":
		return errors.New(message)
	case "release":
		job.Release(time.Duration(secs) * time.Second)
		return nil
	case "release-throw":
		job.Release(time.Duration(secs) * time.Second)
		return errors.New(message + " after releasing")
	case "fail":
		job.Fail(errors.New(message))
		return nil
	case "fail-throw":
		job.Fail(errors.New(message))
		return errors.New(message + " after failing")
	case "delete":
		job.Delete()
		return nil
	case "delete-throw":
		job.Delete()
		return errors.New(message + " after deleting")
	case "cancel-batch":
		return job.CancelBatch(ctx)
	case "cancelled-or-throw":
		if b, err := job.Batch(ctx); err != nil || (b != nil && b.Cancelled()) {
			return err
		}
		return errors.New(message + " in a batch not cancelled")
	case "sleep":
		select {
		case <-time.After(time.Duration(secs) * time.Second):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("unknown plan step %s", step)
}

// copyTables copies every compared table from one copy to the other, row for row, and moves
// PostgreSQL's id sequences past the copied ids.
func copyTables(t *testing.T, ctx context.Context, from, to *phpapp.App) {
	t.Helper()
	src, dst := from.DB(), to.DB()
	dialect := to.Database().Dialect
	for _, table := range diffTables {
		if _, err := dst.ExecContext(ctx, "DELETE FROM "+table); err != nil {
			t.Fatalf("copy %s: %v", table, err)
		}
		cols, rows := readTable(t, ctx, src, table, "")
		quoted := make([]string, len(cols))
		marks := make([]string, len(cols))
		for i, c := range cols {
			quoted[i], marks[i] = quoteIdent(dialect, c), "?"
			if dialect == "pgsql" {
				marks[i] = "$" + strconv.Itoa(i+1)
			}
		}
		insert := "INSERT INTO " + table + " (" + strings.Join(quoted, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"
		for _, r := range rows {
			if _, err := dst.ExecContext(ctx, insert, r...); err != nil {
				t.Fatalf("copy %s: %v", table, err)
			}
		}
		if dialect == "pgsql" && slices.Contains(cols, "id") && table != "job_batches" {
			q := "SELECT setval(pg_get_serial_sequence('" + table + "', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM " + table
			if _, err := dst.ExecContext(ctx, q); err != nil {
				t.Fatalf("copy %s: %v", table, err)
			}
		}
	}
}

func quoteIdent(dialect, name string) string {
	if dialect == "pgsql" {
		return `"` + name + `"`
	}
	return "`" + name + "`"
}

// readTable returns a table's columns and rows, ordered by order when it is not empty.
func readTable(t *testing.T, ctx context.Context, db *sql.DB, table, order string) ([]string, [][]any) {
	t.Helper()
	q := "SELECT * FROM " + table
	if order != "" {
		q += " ORDER BY " + order
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	return cols, out
}

var (
	uuidPattern   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	throwLocation = regexp.MustCompile(` in [^ ]+:\d+$`)
	// closureIdentity matches what PHP writes anew each time it serializes a closure (a chain's catch
	// callbacks, when it dispatches the next link): the object hash of its scope ("self") and the
	// signature over the serialized closure. Go passes the callbacks on as they were, still signed.
	closureIdentity = regexp.MustCompile(`s:4:\\"self\\";s:32:\\"[0-9a-f]{32}\\";|s:4:\\"hash\\";s:44:\\"[A-Za-z0-9+=/\\]+?\\";`)
)

// normalizer numbers uuids and job ids in order of appearance, and decrypts encrypted commands.
type normalizer struct {
	uuids   map[string]string
	ids     map[string]string
	keyring *payload.Keyring
}

// encryptedCommand matches an encrypted command in a payload: base64 of Laravel's JSON envelope, with
// json_encode's escaped slashes.
var encryptedCommand = regexp.MustCompile(`"command":"(eyJ[A-Za-z0-9+=\\/]*)"`)

func (n *normalizer) text(s string) string {
	// Each encryption draws a new IV, so PHP and Go encrypt the same command differently: compare
	// what they encrypted.
	s = encryptedCommand.ReplaceAllStringFunc(s, func(m string) string {
		b64 := strings.ReplaceAll(encryptedCommand.FindStringSubmatch(m)[1], `\/`, "/")
		plain, err := n.keyring.Decrypt(b64)
		if err != nil {
			return `"command":"undecryptable: ` + err.Error() + `"`
		}
		q, _ := json.Marshal("decrypted:" + string(plain))
		return `"command":` + string(q)
	})
	s = closureIdentity.ReplaceAllString(s, "closure-identity;")
	return uuidPattern.ReplaceAllStringFunc(s, func(u string) string {
		if v, ok := n.uuids[u]; ok {
			return v
		}
		v := "uuid#" + strconv.Itoa(len(n.uuids)+1)
		n.uuids[u] = v
		return v
	})
}

func (n *normalizer) id(s string) string {
	if s == "NULL" {
		return s
	}
	if v, ok := n.ids[s]; ok {
		return v
	}
	return "id#?" + s
}

// exceptionHead keeps the first line of an exception without its place ("Class: message"), and marks
// a text that is not in the shape of PHP's Throwable::__toString: "Class: message in file:line",
// "Stack trace:", numbered frames ending with {main}, and previous exceptions after "Next ".
func exceptionHead(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	head := throwLocation.ReplaceAllString(first, "")
	for i, line := range strings.Split(s, "\n") {
		if !throwableLine.MatchString(line) {
			return fmt.Sprintf("%s [line %d is not PHP's shape: %q]", head, i+1, line)
		}
	}
	if !strings.HasSuffix(s, " {main}") {
		return head + " [no {main} frame at the end]"
	}
	return head
}

// throwableLine matches each line of a Throwable's text with one-line messages.
var throwableLine = regexp.MustCompile(`^((Next )?[A-Za-z_\\][A-Za-z0-9_\\()., -]*: .* in [^ ]+:\d+|Stack trace:|#\d+ (\[internal function\]|[^ ]+\(\d+\)): .+|#\d+ \{main\}|)$`)

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case time.Time:
		return "time"
	}
	return fmt.Sprint(v)
}

func setOrNull(v any) string {
	if v == nil {
		return "NULL"
	}
	return "set"
}

// snapshot renders the compared tables of one copy, normalized.
func snapshot(t *testing.T, ctx context.Context, s *side) string {
	t.Helper()
	db := s.app.DB()
	n := &normalizer{uuids: map[string]string{}, ids: map[string]string{}, keyring: s.keyring}
	data := map[string][]map[string]any{}
	for _, table := range diffTables {
		order := ""
		if table != "job_batches" && table != "cache" && table != "cache_locks" {
			order = "id"
		}
		cols, rows := readTable(t, ctx, db, table, order)
		for _, r := range rows {
			m := map[string]any{}
			for i, c := range cols {
				m[c] = r[i]
			}
			data[table] = append(data[table], m)
		}
	}
	// Job ids are numbered by value: each copy assigns them in the same order, from different starts.
	var ids []int64
	for _, r := range data["jobs"] {
		id, _ := strconv.ParseInt(cell(r["id"]), 10, 64)
		ids = append(ids, id)
	}
	for _, r := range data["interop_log"] {
		if isCallback(cell(r["class"])) {
			continue // a callback, run by a companion job on Go's side
		}
		if id, err := strconv.ParseInt(cell(r["job_id"]), 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for i, id := range ids {
		n.ids[strconv.FormatInt(id, 10)] = "id#" + strconv.Itoa(i+1)
	}
	var b strings.Builder
	emit := func(table string, lines []string, sorted bool) {
		if sorted {
			sort.Strings(lines)
		}
		fmt.Fprintf(&b, "%s (%d)\n", table, len(lines))
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
	}
	var lines []string
	for _, r := range data["jobs"] {
		avail, _ := strconv.ParseInt(cell(r["available_at"]), 10, 64)
		created, _ := strconv.ParseInt(cell(r["created_at"]), 10, 64)
		delay := avail - created
		if delay == -1 {
			// Laravel reads the clock for available_at, then again for created_at: a job pushed
			// without a delay as the second ticks shows -1.
			delay = 0
		}
		lines = append(lines, fmt.Sprintf("%s queue=%s attempts=%s reserved=%s delay=%d payload=%s", n.id(cell(r["id"])), cell(r["queue"]),
			cell(r["attempts"]), setOrNull(r["reserved_at"]), delay, n.text(cell(r["payload"]))))
	}
	emit("jobs", lines, false)
	lines = nil
	for _, r := range data["failed_jobs"] {
		lines = append(lines, fmt.Sprintf("uuid=%s connection=%s queue=%s failed_at=%s exception=%q payload=%s", n.text(cell(r["uuid"])),
			cell(r["connection"]), cell(r["queue"]), setOrNull(r["failed_at"]), exceptionHead(cell(r["exception"])), n.text(cell(r["payload"]))))
	}
	emit("failed_jobs", lines, false)
	lines = nil
	var callbacks []string
	for _, r := range data["interop_log"] {
		class := cell(r["class"])
		if isCallback(class) {
			// A batch or chain callback or a failed() hook: Go has it run by a companion job queued behind the jobs
			// already waiting, so it runs later and in another job. What it saw (props), and the
			// order of the callbacks, must be the same.
			callbacks = append(callbacks, fmt.Sprintf("%s queue=%s props=%s", class, cell(r["queue"]), n.text(cell(r["props"]))))
			continue
		}
		lines = append(lines, fmt.Sprintf("%s uuid=%s job=%s attempts=%s queue=%s props=%s", class, n.text(cell(r["uuid"])),
			n.id(cell(r["job_id"])), cell(r["attempts"]), cell(r["queue"]), n.text(cell(r["props"]))))
	}
	emit("interop_log", lines, false)
	emit("interop_log callbacks", callbacks, false)
	lines = nil
	for _, r := range data["job_batches"] {
		lines = append(lines, fmt.Sprintf("%s name=%s total=%s pending=%s failed=%s failed_ids=%s cancelled=%s finished=%s", n.text(cell(r["id"])),
			cell(r["name"]), cell(r["total_jobs"]), cell(r["pending_jobs"]), cell(r["failed_jobs"]), n.text(cell(r["failed_job_ids"])),
			setOrNull(r["cancelled_at"]), setOrNull(r["finished_at"])))
	}
	emit("job_batches", lines, true)
	lines = nil
	for _, r := range data["cache"] {
		key, value := n.text(cell(r["key"])), n.text(cell(r["value"]))
		if strings.HasSuffix(key, "illuminate:queue:restart") || strings.HasSuffix(key, ":timer") {
			value = "time" // a timestamp: queue:restart's, or a rate limiter's timer
		}
		lines = append(lines, fmt.Sprintf("%s = %s", key, value))
	}
	emit("cache", lines, true)
	lines = nil
	for _, r := range data["cache_locks"] {
		lines = append(lines, n.text(cell(r["key"])))
	}
	emit("cache_locks", lines, true)
	lines = nil
	for _, r := range data["users"] {
		lines = append(lines, fmt.Sprintf("%s %s %s", cell(r["id"]), cell(r["name"]), cell(r["email"])))
	}
	emit("users", lines, false)
	if s.locks != nil {
		emit("redis", s.redisSnapshot(t, ctx, n), false)
	}
	if s.files != nil {
		emit("cache files", s.fileSnapshot(t, n), false)
	}
	if s.mc != nil {
		emit("memcached", s.memcachedSnapshot(t, n), false)
	}
	return b.String()
}

// isCallback reports whether an interop_log row is a callback's (batch.then, chain.catch) or a
// failed() hook's (Class@failed) rather than a job's.
func isCallback(class string) bool {
	return !strings.Contains(class, `\`) || strings.HasSuffix(class, "@failed")
}

// lineDiff lists the lines only one side has.
// delayField is a jobs row's delay in a snapshot.
var delayField = regexp.MustCompile(`delay=(\d+)`)

// sameButTick reports whether two snapshots differ only in delays one second apart. Laravel reads the
// clock for available_at and again for created_at, so a row released or pushed with a delay as the
// second ticks shows one second less (the delay 0 case is folded in the snapshot itself).
func sameButTick(want, got string) bool {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	if len(wl) != len(gl) {
		return false
	}
	for i := range wl {
		if wl[i] == gl[i] {
			continue
		}
		w, g := delayField.FindStringSubmatchIndex(wl[i]), delayField.FindStringSubmatchIndex(gl[i])
		if w == nil || g == nil || wl[i][:w[2]] != gl[i][:g[2]] || wl[i][w[3]:] != gl[i][g[3]:] {
			return false
		}
		wd, _ := strconv.Atoi(wl[i][w[2]:w[3]])
		gd, _ := strconv.Atoi(gl[i][g[2]:g[3]])
		if wd-gd != 1 && gd-wd != 1 {
			return false
		}
	}
	return true
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// TestSameButTick: only delays one second apart, with every other byte equal, pass as the same.
func TestSameButTick(t *testing.T) {
	row := func(delay int, payload string) string {
		return fmt.Sprintf("jobs (1)\n  id#3 queue=default attempts=2 reserved=NULL delay=%d payload=%s\nfailed_jobs (0)\n", delay, payload)
	}
	for _, tc := range []struct {
		want, got string
		same      bool
	}{
		{row(6, "{}"), row(7, "{}"), true},
		{row(7, "{}"), row(6, "{}"), true},
		{row(5, "{}"), row(7, "{}"), false},
		{row(6, "{}"), row(7, "{1}"), false},
		{row(6, "{}"), row(6, "{}") + "cache (0)\n", false},
	} {
		if got := sameButTick(tc.want, tc.got); got != tc.same {
			t.Errorf("sameButTick(%q, %q) = %v", tc.want, tc.got, got)
		}
	}
}
