package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/artisan-go/artisan-go/dispatch"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/metrics"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

var bg = context.Background()

const (
	okClass    = `App\Jobs\Ok`
	boomClass  = `App\Jobs\Boom`
	againClass = `App\Jobs\Again`
	phpClass   = `App\Jobs\OnlyPHP`
)

// env is one database with Laravel's tables, a queue and a way to push jobs.
type env struct {
	db    testenv.Database
	conn  *laravel.Conn
	queue laravel.Queue
	disp  *dispatch.Dispatcher
}

func newEnv(t testing.TB, db testenv.Database) *env {
	t.Helper()
	p := queuetest.OpenParams(db)
	p.Tables = laravel.Tables{} // Laravel's names: the database is the test's own
	c := queuetest.Open(t, p)
	if err := laravel.CreateSchema(bg, c, laravel.SchemaParams{}); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	q, err := laravel.NewQueue(c, laravel.QueueParams{Strategy: "batch"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.ForConn(c, dispatch.Params{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, conn: c, queue: q, disp: d}
}

// push enqueues n jobs of class on queue, available at availableAt, with the job's $tries.
func (e *env) push(t testing.TB, class, queue string, n int, availableAt int64, tries int) {
	t.Helper()
	for range n {
		p, _, err := e.disp.Payload(dispatch.Job{Command: payload.NewObject(class), Queue: queue, Tries: tries})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.queue.JobPush(bg, &laravel.JobPushParams{Queue: queue, Payload: p, Now: availableAt, AvailableAt: availableAt}); err != nil {
			t.Fatal(err)
		}
	}
}

// serve serves the collector's endpoints on a free local port until the test ends.
func serve(t *testing.T, c *metrics.Collector, ready func(context.Context) error) string {
	t.Helper()
	reg, err := metrics.NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	l, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		done <- metrics.Serve(ctx, l, metrics.Handler(metrics.ServerParams{Gatherer: reg, Ready: ready}))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + l.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// scrape reads /metrics as Prometheus parses it.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// value sums a family's samples whose labels include want (counter, gauge, or histogram count).
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	sum := 0.0
next:
	for _, m := range f.GetMetric() {
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// TestMetricsWhileJobsRun works real jobs on each database, scrapes the endpoint while one is running
// and after all are done, and compares the counters with what the worker and the table say.
func TestMetricsWhileJobsRun(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		e := newEnv(t, db)
		now := time.Now().Unix()
		const ok, boom, again, php = 7, 3, 2, 2
		e.push(t, okClass, "default", ok, now, 0)
		e.push(t, boomClass, "default", boom, now, 1)
		e.push(t, againClass, "default", again, now, 0)
		e.push(t, phpClass, "default", php, now, 0)

		running := make(chan struct{})
		proceed := make(chan struct{})
		first := make(chan struct{}, 1)
		first <- struct{}{}
		reg := handlers.NewRegistry()
		reg.Register(okClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			select {
			case <-first: // the first one waits until the test has scraped while it runs
				close(running)
				<-proceed
			default:
			}
			return nil
		}))
		reg.Register(boomClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			return errors.New("boom")
		}))
		reg.Register(againClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			if j.Attempts == 1 {
				j.Release(0)
			}
			return nil
		}))

		c := metrics.New(metrics.Params{Classes: []string{okClass, boomClass, againClass}})
		cfg := worker.Defaults()
		cfg.Concurrency, cfg.StopWhenEmpty, cfg.Sleep, cfg.Timeout, cfg.Tries = 4, true, 10*time.Millisecond, 0, 0
		w, err := worker.New(worker.Params{Queue: e.queue, Conn: e.conn, Registry: reg, Config: cfg, Observer: c})
		if err != nil {
			t.Fatal(err)
		}
		base, ran := watchAndRun(t, c, w, e)
		<-running
		fams := scrape(t, base)
		if v := value(fams, "artisan_go_jobs_in_flight", nil); v < 1 {
			t.Errorf("jobs_in_flight = %v while a job runs, want at least 1", v)
		}
		if v, f := value(fams, "artisan_go_jobs_in_flight", nil), value(fams, "artisan_go_free_slots", nil); v+f != 4 {
			t.Errorf("in flight %v + free slots %v, want the concurrency 4", v, f)
		}
		if code, body := get(t, base+"/healthz"); code != http.StatusOK {
			t.Errorf("/healthz: %d %s", code, body)
		}
		if code, body := get(t, base+"/readyz"); code != http.StatusOK {
			t.Errorf("/readyz while working: %d %s", code, body)
		}
		close(proceed)
		if err := <-ran; err != nil {
			t.Fatal(err)
		}

		fams = scrape(t, base)
		st := w.Stats()
		conn := map[string]string{"connection": "database", "queue": "default"}
		checks := []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"artisan_go_jobs_processed_total", map[string]string{"class": okClass}, ok},
			{"artisan_go_jobs_processed_total", map[string]string{"class": againClass}, again}, // after their release
			{"artisan_go_jobs_processed_total", nil, float64(st.Processed + st.Deleted)},
			{"artisan_go_jobs_failed_total", map[string]string{"class": boomClass}, boom},
			{"artisan_go_jobs_failed_total", nil, float64(st.Failed)},
			{"artisan_go_jobs_released_total", map[string]string{"class": againClass}, again},
			{"artisan_go_jobs_released_total", nil, float64(st.Released)},
			{"artisan_go_jobs_left_for_php_total", map[string]string{"class": metrics.OtherClass}, php},
			{"artisan_go_jobs_left_for_php_total", nil, float64(st.LeftForPHP)},
			{"artisan_go_jobs_claimed_total", nil, float64(st.Claimed)},
			// Every job that started, and only those, is timed; each claim is one batch.
			{"artisan_go_job_duration_seconds", conn, ok + boom + 2*again},
			{"artisan_go_job_wait_seconds", conn, ok + boom + 2*again},
			{"artisan_go_jobs_in_flight", nil, 0},
			{"artisan_go_free_slots", nil, 4},
			{"artisan_go_db_deadlocks_total", nil, float64(e.conn.Stats().Deadlocks)},
			{"artisan_go_reservations_lost_total", nil, 0},
			{"artisan_go_completions_reapplied_total", nil, float64(st.Reapplied)},
			{"artisan_go_completions_unapplied_total", nil, float64(st.Unapplied)},
			{"artisan_go_completions_refused_total", nil, float64(st.Refused)},
			{"artisan_go_completions_waiting", nil, 0},
		}
		for _, ch := range checks {
			if got := value(fams, ch.name, ch.labels); got != ch.want {
				t.Errorf("%s%v = %v, want %v", ch.name, ch.labels, got, ch.want)
			}
		}
		if rows := histogramSum(fams, "artisan_go_claim_batch_size"); rows != float64(st.Claimed) {
			t.Errorf("claim batch sizes add up to %v rows, want the %d claimed", rows, st.Claimed)
		}
		if calls, batches := value(fams, "artisan_go_claims_total", nil), value(fams, "artisan_go_claim_batch_size", nil); calls != batches || calls == 0 {
			t.Errorf("claims_total %v, claim_batch_size count %v: want one batch per claim call", calls, batches)
		}
		if calls, timed := value(fams, "artisan_go_claims_total", nil), value(fams, "artisan_go_claim_duration_seconds", nil); calls != timed || histogramSum(fams, "artisan_go_claim_duration_seconds") <= 0 {
			t.Errorf("claims_total %v, claim_duration_seconds count %v (sum %v s): want every claim call timed", calls, timed, histogramSum(fams, "artisan_go_claim_duration_seconds"))
		}
		if f := fams["artisan_go_claim_errors_total"]; f == nil || len(f.GetMetric()) == 0 {
			t.Error("artisan_go_claim_errors_total has no series before a claim failed; want one at 0 per queue")
		}
		checkDocumented(t, c)
		for name := range fams {
			if strings.HasPrefix(name, "artisan_go_") && strings.Contains(name, "left_for_php") && value(fams, name, map[string]string{"class": phpClass}) != 0 {
				t.Errorf("%s has a series for %s, which is not in the allow-list", name, phpClass)
			}
		}
	})
}

// checkDocumented checks that the README and the Grafana dashboard name only metrics the collector
// serves, and that the README lists every one.
func checkDocumented(t *testing.T, c *metrics.Collector) {
	t.Helper()
	fams := map[string]bool{}
	descs := make(chan *prometheus.Desc, 100)
	go func() { c.Describe(descs); close(descs) }()
	fqName := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range descs {
		fams[fqName.FindStringSubmatch(d.String())[1]] = true
	}
	names := regexp.MustCompile(`artisan_go_[a-z_]+[a-z]`)
	for _, doc := range []string{"../README.md", "../docs/grafana-dashboard.json"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, n := range names.FindAllString(string(b), -1) {
			base := n
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if _, ok := fams[n]; !ok {
					base = strings.TrimSuffix(base, suffix)
				}
			}
			seen[base] = true
			if !fams[base] {
				t.Errorf("%s names %s, which is not served", doc, n)
			}
		}
		if doc == "../README.md" {
			for name := range fams {
				if strings.HasPrefix(name, "artisan_go_") && !seen[name] {
					t.Errorf("README does not list %s", name)
				}
			}
		}
	}
}

func histogramSum(fams map[string]*dto.MetricFamily, name string) float64 {
	sum := 0.0
	if f := fams[name]; f != nil {
		for _, m := range f.GetMetric() {
			sum += m.GetHistogram().GetSampleSum()
		}
	}
	return sum
}

// TestQueueDepthMatchesTable samples queues holding available, delayed, reserved and expired rows and
// compares the gauges with what the table says.
func TestQueueDepthMatchesTable(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		e := newEnv(t, db)
		now := time.Now().Unix()
		e.push(t, okClass, "mail", 3, now-120, 0)
		e.push(t, okClass, "mail", 2, now-30, 0)
		e.push(t, okClass, "mail", 4, now+600, 0) // delayed
		e.push(t, okClass, "reports", 1, now-5, 0)
		// One reserved now (not available) and one whose reservation expired (available again).
		sqlDB := db.Open(t)
		mark := func(queue string, reservedAt int64) {
			q := "update jobs set reserved_at = ?, attempts = 1 where id = (select min(id) from jobs where queue = ? and reserved_at is null)"
			if db.Dialect == "pgsql" {
				q = "update jobs set reserved_at = $1, attempts = 1 where id = (select min(id) from jobs where queue = $2 and reserved_at is null)"
			}
			if db.Dialect == "mysql" {
				q = "update jobs j join (select min(id) id from jobs where queue = ? and reserved_at is null) m on j.id = m.id set j.reserved_at = ?, j.attempts = 1"
				if _, err := sqlDB.Exec(q, queue, reservedAt); err != nil {
					t.Fatal(err)
				}
				return
			}
			if _, err := sqlDB.Exec(q, reservedAt, queue); err != nil {
				t.Fatal(err)
			}
		}
		mark("mail", now)      // the oldest row is now reserved
		mark("mail", now-3600) // the next one's reservation expired: available, as a claim would see it

		c := metrics.New(metrics.Params{})
		p := metrics.SamplerParams{Conn: e.conn, Connection: "database", Queues: []string{"mail", "reports", "empty"}, RetryAfter: 90 * time.Second, Clock: func() time.Time { return time.Unix(now, 0) }}
		if err := c.Sample(bg, &p); err != nil {
			t.Fatal(err)
		}
		fams := scrape(t, serve(t, c, nil))
		for _, q := range p.Queues {
			var count int64
			var oldest *int64
			ph := func(i int) string {
				if db.Dialect == "pgsql" {
					return "$" + string(rune('0'+i))
				}
				return "?"
			}
			where := " from jobs where queue = " + ph(1) + " and ((reserved_at is null and available_at <= " + ph(2) + ") or reserved_at <= " + ph(3) + ")"
			if err := sqlDB.QueryRow("select count(*), min(available_at)"+where, q, now, now-90).Scan(&count, &oldest); err != nil {
				t.Fatal(err)
			}
			wantAge := 0.0
			if oldest != nil {
				wantAge = float64(now - *oldest)
			}
			labels := map[string]string{"connection": "database", "queue": q}
			if got := value(fams, "artisan_go_queue_depth", labels); got != float64(count) {
				t.Errorf("queue_depth{%s} = %v, the table has %d available", q, got, count)
			}
			if got := value(fams, "artisan_go_queue_oldest_available_age_seconds", labels); got != wantAge {
				t.Errorf("queue_oldest_available_age_seconds{%s} = %v, the table's oldest available is %v s old", q, got, wantAge)
			}
		}
		if got := value(fams, "artisan_go_queue_sampled_timestamp_seconds", map[string]string{"connection": "database"}); got != float64(now) {
			t.Errorf("queue_sampled_timestamp_seconds = %v, want the sample's time %d", got, now)
		}
		// The count stops at the limit.
		p.Limit, p.Queues = 2, []string{"mail"}
		if err := c.Sample(bg, &p); err != nil {
			t.Fatal(err)
		}
		if got := value(scrape(t, serve(t, c, nil)), "artisan_go_queue_depth", map[string]string{"queue": "mail"}); got != 2 {
			t.Errorf("queue_depth with limit 2 = %v, want 2", got)
		}
	})
}

// TestReadyz reports a worker whose claims fail as not ready, and one that claims again as ready.
func TestReadyz(t *testing.T) {
	t.Parallel()
	c := metrics.New(metrics.Params{})
	if err := c.Ready(0, 4, time.Minute); err != nil {
		t.Fatalf("a new collector is not ready: %v", err)
	}
	c.Claimed("default", 0, time.Millisecond, laravel.ErrDeadlock)
	if err := c.Ready(0, 4, time.Minute); err != nil {
		t.Fatalf("a lost race made it not ready: %v", err)
	}
	c.Claimed("default", 0, time.Millisecond, errors.New("table jobs does not exist"))
	if err := c.Ready(0, 4, time.Minute); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("after a failed claim: %v, want not ready naming the error", err)
	}
	c.Claimed("default", 2, time.Millisecond, nil)
	if err := c.Ready(0, 4, time.Minute); err != nil {
		t.Fatalf("claims work again, still not ready: %v", err)
	}
	if err := c.Ready(0, 4, 0); err == nil {
		t.Fatal("no claim within stuckAfter with free slots: ready")
	}
	if err := c.Ready(4, 4, 0); err != nil {
		t.Fatalf("every slot busy: not ready: %v", err)
	}
}

// TestReadyzDatabaseGone: /readyz fails, saying why, once the database does not answer.
func TestReadyzDatabaseGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testenv.SQLite(t))
	c := metrics.New(metrics.Params{})
	w, err := worker.New(worker.Params{Queue: e.queue, Conn: e.conn, Registry: handlers.NewRegistry(), Config: worker.Defaults(), Observer: c})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, c, c.ReadyCheck(w, e.conn, time.Minute))
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	if err := e.conn.Close(); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "ping sqlite database") {
		t.Fatalf("/readyz with the database closed: %d %q, want 503 naming the database", code, body)
	}
	if code, _ := get(t, base+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz with the database closed: %d, want 200: the process is alive", code)
	}
}

// TestReadyzAllowsForSleep: an idle worker claims once a --sleep, so /readyz waits stuck_after beyond
// it. A worker sleeping 75 s between claims, with stuck_after 60 s, turned not ready for 15 s of every
// sleep (a probe); here a claim a moment ago with stuck_after 0 is still ready under a sleep of an hour.
func TestReadyzAllowsForSleep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testenv.SQLite(t))
	c := metrics.New(metrics.Params{})
	cfg := worker.Defaults()
	cfg.Sleep = time.Hour
	w, err := worker.New(worker.Params{Queue: e.queue, Conn: e.conn, Registry: handlers.NewRegistry(), Config: cfg, Observer: c})
	if err != nil {
		t.Fatal(err)
	}
	c.Claimed("default", 0, time.Millisecond, nil)
	if err := c.ReadyCheck(w, e.conn, 0)(context.Background()); err != nil {
		t.Fatalf("idle within its --sleep: %v, want ready", err)
	}
}

// TestJobCountersFromZero: once Watch starts, every queue's job counters exist at 0 for each class
// with a label of its own and for the others, so that increase() counts the first failure; they
// first appeared at 1, which increase() and rate() do not see.
func TestJobCountersFromZero(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testenv.SQLite(t))
	c := metrics.New(metrics.Params{Classes: []string{okClass}})
	cfg := worker.Defaults()
	cfg.Queues = []string{"high", "default"}
	w, err := worker.New(worker.Params{Queue: e.queue, Conn: e.conn, Registry: handlers.NewRegistry(), Config: cfg, Observer: c})
	if err != nil {
		t.Fatal(err)
	}
	c.Watch(w, e.conn)
	fams := scrape(t, serve(t, c, nil))
	for _, name := range []string{"artisan_go_jobs_processed_total", "artisan_go_jobs_failed_total", "artisan_go_jobs_released_total"} {
		if n := len(fams[name].GetMetric()); n != 4 {
			t.Errorf("%s has %d series before any job, want 4 (two queues, %s and other)", name, n, okClass)
		}
	}
}

// TestTimedOutJob counts a job that runs past its timeout, applied by the worker's timeout watcher,
// once as timed out and once as failed, and times it.
func TestTimedOutJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testenv.SQLite(t))
	e.push(t, okClass, "default", 1, time.Now().Unix(), 1)
	reg := handlers.NewRegistry()
	reg.Register(okClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
		<-ctx.Done()
		return ctx.Err()
	}))
	c := metrics.New(metrics.Params{Classes: []string{okClass}})
	cfg := worker.Defaults()
	cfg.StopWhenEmpty, cfg.Sleep, cfg.Timeout = true, 0, 50*time.Millisecond
	w, err := worker.New(worker.Params{Queue: e.queue, Conn: e.conn, Registry: reg, Config: cfg, Observer: c})
	if err != nil {
		t.Fatal(err)
	}
	c.Watch(w, e.conn)
	if _, err := w.Run(bg); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, serve(t, c, nil))
	for name, want := range map[string]float64{"artisan_go_jobs_timed_out_total": 1, "artisan_go_jobs_failed_total": 1, "artisan_go_job_duration_seconds": 1, "artisan_go_jobs_processed_total": 0} {
		if got := value(fams, name, nil); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// TestMetricsClaimLanes: the claim_lanes gauge shows the lanes the batch strategy runs while the
// worker runs: two when asked for two, on every database.
func TestMetricsClaimLanes(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		e := newEnv(t, db)
		q, err := laravel.NewQueue(e.conn, laravel.QueueParams{Strategy: "batch", Lanes: 2})
		if err != nil {
			t.Fatal(err)
		}
		e.push(t, okClass, "default", 3, time.Now().Unix(), 0)
		running, proceed := make(chan struct{}), make(chan struct{})
		var once sync.Once
		reg := handlers.NewRegistry()
		reg.Register(okClass, handlers.HandlerFunc(func(ctx context.Context, j *handlers.Job) error {
			once.Do(func() { close(running); <-proceed })
			return nil
		}))
		c := metrics.New(metrics.Params{Classes: []string{okClass}})
		cfg := worker.Defaults()
		cfg.Concurrency, cfg.StopWhenEmpty, cfg.Sleep, cfg.Timeout = 4, true, 10*time.Millisecond, 0
		w, err := worker.New(worker.Params{Queue: q, Conn: e.conn, Registry: reg, Config: cfg, Observer: c})
		if err != nil {
			t.Fatal(err)
		}
		base, ran := watchAndRun(t, c, w, e)
		<-running
		if v := value(scrape(t, base), "artisan_go_claim_lanes", nil); v != 2 {
			t.Errorf("claim_lanes = %v while the worker runs two lanes, want 2", v)
		}
		close(proceed)
		if err := <-ran; err != nil {
			t.Fatal(err)
		}
		if v := value(scrape(t, base), "artisan_go_claim_lanes", nil); v != 1 {
			t.Errorf("claim_lanes = %v after the worker stopped, want 1", v)
		}
	})
}

// watchAndRun watches w with c, serves c's endpoints and runs w; the run's error comes on ran.
func watchAndRun(t *testing.T, c *metrics.Collector, w *worker.Worker, e *env) (base string, ran <-chan error) {
	t.Helper()
	c.Watch(w, e.conn)
	base = serve(t, c, c.ReadyCheck(w, e.conn, time.Minute))
	done := make(chan error, 1)
	go func() {
		_, err := w.Run(bg)
		done <- err
	}()
	return base, done
}
