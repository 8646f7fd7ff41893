package pulse_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/dispatch"
	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/pulse"
	"github.com/artisan-go/artisan-go/worker"
)

var bg = context.Background()

const (
	okClass     = `App\Jobs\Ok`
	boomClass   = `App\Jobs\Boom`
	againClass  = `App\Jobs\Again`
	manualClass = `App\Jobs\GivesUp`
	phpClass    = `App\Jobs\OnlyPHP`
	spentClass  = `App\Jobs\Spent`
)

// pulseEvent is one record() call of Pulse's Queues or SlowJobs recorder.
type pulseEvent struct {
	typ, key  string
	timestamp int64
	value     int64
	aggs      []string // the aggregations it asks for
	entry     bool     // stored in pulse_entries (not onlyBuckets)
}

// expectedRows applies Pulse's DatabaseStorage::store to events: entries kept as they are, and for
// each period a bucket of floor(timestamp / period) * period per type, aggregate and key (count adds
// one per event, max keeps the greatest value).
func expectedRows(events []pulseEvent) (entries, aggregates []string) {
	type key struct {
		bucket, period      int64
		typ, aggregate, key string
	}
	vals := map[key]int64{}
	for _, e := range events {
		if e.entry {
			entries = append(entries, fmt.Sprintf("%d %s %s %d", e.timestamp, e.typ, e.key, e.value))
		}
		for _, a := range e.aggs {
			for _, period := range []int64{60, 360, 1440, 10080} {
				k := key{int64(float64(e.timestamp)/float64(period)) * period, period, e.typ, a, e.key}
				old, seen := vals[k]
				switch {
				case a == "count":
					vals[k] = old + 1
				case !seen || e.value > old:
					vals[k] = e.value
				}
			}
		}
	}
	for k, v := range vals {
		aggregates = append(aggregates, fmt.Sprintf("%d %d %s %s %s %d <nil>", k.bucket, k.period, k.typ, k.aggregate, k.key, v))
	}
	sort.Strings(entries)
	sort.Strings(aggregates)
	return entries, aggregates
}

// TestPulseBehindTablePrefix: behind the connection's table prefix (DB_PREFIX) Pulse's tables are
// prefix_pulse_entries and prefix_pulse_aggregates, as Pulse names them through the query builder;
// they are found and written there. Before, the unprefixed names were looked for, and Pulse's tables
// read as missing.
func TestPulseBehindTablePrefix(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		p := queuetest.OpenParams(db)
		p.Tables, p.TablePrefix = laravel.Tables{}, "a_" // MySQL takes 64 characters for an index name
		conn := queuetest.Open(t, p)
		if err := laravel.CreatePulseTables(bg, conn); err != nil {
			t.Fatal(err)
		}
		schema, err := conn.PulseInspect(bg)
		if err != nil || !schema.Present {
			t.Fatalf("%+v, %v; want Pulse's prefixed tables present", schema, err)
		}
		rec := &laravel.PulseRecordParams{Schema: schema,
			Entries:    []laravel.PulseEntry{{Timestamp: 1_700_000_000, Type: "slow_job", Key: okClass, Value: 5}},
			Aggregates: []laravel.PulseAggregate{{Bucket: 1_699_999_980, Period: 60, Type: "slow_job", Aggregate: "count", Key: okClass, Value: 1}}}
		if err := conn.PulseRecord(bg, rec); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"a_pulse_entries", "a_pulse_aggregates"} {
			var n int
			if err := queuetest.DB(conn).QueryRow("select count(*) from " + table).Scan(&n); err != nil || n != 1 {
				t.Errorf("%s holds %d rows (%v), want 1", table, n, err)
			}
		}
	})
}

// TestPulseRowsAsPulseWritesThem runs real jobs with every outcome on each database, with Pulse's
// tables as its migration creates them, and compares the rows with what Pulse's recorders and storage
// would write for the same events.
func TestPulseRowsAsPulseWritesThem(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		p := queuetest.OpenParams(db)
		p.Tables = laravel.Tables{}
		conn := queuetest.Open(t, p)
		if err := laravel.CreateSchema(bg, conn, laravel.SchemaParams{}); err != nil {
			t.Fatal(err)
		}
		schema, err := conn.PulseInspect(bg)
		if err != nil || schema.Present {
			t.Fatalf("before the migration: %+v, %v; want no Pulse tables", schema, err)
		}
		if err := laravel.CreatePulseTables(bg, conn); err != nil {
			t.Fatal(err)
		}
		schema, err = conn.PulseInspect(bg)
		if err != nil || !schema.Present || schema.KeyHashGenerated != (db.Dialect != "sqlite") {
			t.Fatalf("after the migration: %+v, %v; want present, key_hash generated except on SQLite", schema, err)
		}
		q, err := laravel.NewQueue(conn, laravel.QueueParams{})
		if err != nil {
			t.Fatal(err)
		}
		disp, err := dispatch.ForConn(conn, dispatch.Params{})
		if err != nil {
			t.Fatal(err)
		}
		push := func(class string, n, tries int) {
			for range n {
				body, _, err := disp.Payload(dispatch.Job{Command: payload.NewObject(class), Tries: tries})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := q.JobPush(bg, &laravel.JobPushParams{Queue: "default", Payload: body, Now: 1, AvailableAt: 1}); err != nil {
					t.Fatal(err)
				}
			}
		}
		reg := handlers.NewRegistry()
		reg.Register(okClass, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
		reg.Register(boomClass, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return errors.New("boom") }))
		reg.Register(againClass, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error {
			if j.Attempts == 1 {
				j.Release(0)
			}
			return nil
		}))
		reg.Register(spentClass, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
		reg.Register(manualClass, handlers.HandlerFunc(func(_ context.Context, j *handlers.Job) error {
			j.Fail(errors.New("gave up"))
			return nil
		}))

		now := time.Unix(1_700_000_123, 0)
		rec := pulse.New(pulse.Params{Conn: conn, Schema: schema, SlowJobThreshold: 0, Clock: func() time.Time { return now }})
		run := func() {
			cfg := worker.Defaults()
			cfg.StopWhenEmpty, cfg.Sleep, cfg.Timeout, cfg.Tries, cfg.Concurrency = true, 0, 0, 0, 2
			w, err := worker.New(worker.Params{Queue: q, Conn: conn, Registry: reg, Config: cfg, Observer: rec})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Run(bg); err != nil {
				t.Fatal(err)
			}
			if err := rec.Flush(bg); err != nil {
				t.Fatal(err)
			}
		}
		push(okClass, 3, 0)
		push(boomClass, 2, 2)
		push(againClass, 1, 0)
		push(manualClass, 1, 0)
		push(phpClass, 1, 0)
		// A job that has used its one try already: the attempts check fails it before it runs.
		spent, _, err := disp.Payload(dispatch.Job{Command: payload.NewObject(spentClass), Tries: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.JobPush(bg, &laravel.JobPushParams{Queue: "default", Payload: spent, Attempts: 1, Now: 1, AvailableAt: 1}); err != nil {
			t.Fatal(err)
		}
		run()
		// A second run adds to the stored aggregates, as Pulse's upserts do.
		push(okClass, 1, 0)
		run()

		// What Laravel's worker raises for these jobs, and so what Pulse's recorders record.
		ts := now.Unix()
		var events []pulseEvent
		queued := func(typ string, n int) {
			for range n {
				events = append(events, pulseEvent{typ: typ, key: "database:default", timestamp: ts, aggs: []string{"count"}})
			}
		}
		queued("processing", 4+2*2+2+1+1) // ok, boom twice each, again twice, the one that gives up, spent
		queued("processed", 4+2+1)        // ok, again (released by itself, then done), gave up (Fail); not spent
		queued("released", 2)             // boom's first attempts
		queued("failed", 2+1+1)           // boom's second attempts, gave up, spent
		// Every job is slow at threshold 0; durations are read back from the entries PHP's SlowJobs
		// would have written, and their aggregates must agree with them.
		entries := readRows(t, db, "select timestamp, type, "+quoteKey(db)+", value from pulse_entries")
		slow := map[string]int{}
		for _, row := range entries {
			f := strings.Fields(row)
			var ets, ms int64
			if _, err := fmt.Sscan(f[0]+" "+f[3], &ets, &ms); err != nil || len(f) != 4 || f[1] != "slow_job" {
				t.Fatalf("entry %q: %v", row, err)
			}
			slow[strings.TrimPrefix(f[2], `App\Jobs\`)]++
			events = append(events, pulseEvent{typ: "slow_job", key: f[2], timestamp: ets, value: ms, aggs: []string{"max", "count"}, entry: true})
		}
		wantSlow := map[string]int{"Ok": 4, "Boom": 4, "Again": 2, "GivesUp": 1, "Spent": 1}
		if fmt.Sprint(slow) != fmt.Sprint(wantSlow) {
			t.Errorf("slow_job entries per class %v, want one per processed job %v", slow, wantSlow)
		}
		wantEntries, wantAggs := expectedRows(events)
		if got := entries; strings.Join(got, "\n") != strings.Join(wantEntries, "\n") {
			t.Errorf("pulse_entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEntries, "\n"))
		}
		value := "cast(value as integer)"
		if db.Dialect == "mysql" {
			value = "cast(value as signed)"
		}
		aggs := readRows(t, db, "select bucket, period, type, aggregate, "+quoteKey(db)+", "+value+", count from pulse_aggregates")
		if strings.Join(aggs, "\n") != strings.Join(wantAggs, "\n") {
			t.Errorf("pulse_aggregates:\n%s\nwant:\n%s", strings.Join(aggs, "\n"), strings.Join(wantAggs, "\n"))
		}
		checkKeyHashes(t, db)
	})
}

func quoteKey(db testenv.Database) string {
	if db.Dialect == "mysql" {
		return "`key`"
	}
	return `"key"`
}

// readRows returns the rows of q, each as its values joined by spaces, sorted.
func readRows(t *testing.T, db testenv.Database, q string) []string {
	t.Helper()
	rows, err := db.Open(t).Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// checkKeyHashes compares every key_hash with what Pulse's migration computes (MySQL's
// unhex(md5(key)), PostgreSQL's md5(key)::uuid) or Pulse's PHP writes on SQLite (md5($key)).
func checkKeyHashes(t *testing.T, db testenv.Database) {
	t.Helper()
	for _, table := range []string{"pulse_entries", "pulse_aggregates"} {
		hash := "key_hash"
		if db.Dialect == "mysql" {
			hash = "hex(key_hash)"
		} else if db.Dialect == "pgsql" {
			hash = "key_hash::text"
		}
		for _, row := range readRows(t, db, "select "+quoteKey(db)+", "+hash+" from "+table) {
			i := strings.LastIndexByte(row, ' ')
			key, got := row[:i], strings.ToLower(strings.ReplaceAll(row[i+1:], "-", ""))
			sum := md5.Sum([]byte(key))
			if want := hex.EncodeToString(sum[:]); got != want {
				t.Errorf("%s: key %q has key_hash %s, want md5 %s", table, key, got, want)
			}
		}
	}
}

// TestPulseFlushesBesideEachOther flushes three recorders at once, as three workers do, onto the same
// aggregate rows on MariaDB: their upserts lock the rows in one order and a deadlock is tried again, as
// Pulse's own storage does, so every count arrives.
func TestPulseFlushesBesideEachOther(t *testing.T) {
	t.Parallel()
	db := testenv.MySQL(t)
	conn, schema := pulseTables(t, db)
	now := time.Unix(1_700_000_123, 0)
	recs := make([]*pulse.Recorder, 3)
	for i := range recs {
		recs[i] = pulse.New(pulse.Params{Conn: conn, Schema: schema, SlowJobThreshold: time.Hour, Clock: func() time.Time { return now }})
	}
	const rounds, perRound = 20, 40
	for range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, len(recs))
		for i, rec := range recs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range perRound {
					queue := fmt.Sprintf("q%d", (n+i)%5) // the keys in another order in each recorder
					rec.JobFinished(bg, &worker.JobEvent{Connection: "database", Queue: queue, Started: now, Finished: now, Outcome: worker.OutcomeProcessed})
				}
				if err := rec.Flush(bg); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("flush: %v", err)
		}
	}
	var total int64
	if err := queuetest.DB(conn).Get(&total, "select cast(coalesce(sum(value), 0) as signed) from pulse_aggregates where type = 'processed' and period = 60"); err != nil {
		t.Fatal(err)
	}
	if want := int64(rounds * perRound * len(recs)); total != want {
		t.Fatalf("processed counts %d, want %d", total, want)
	}
}

// TestPulseQueued records a job the worker pushed (a chain's next link) as Pulse's Queues recorder
// records JobQueued: a "queued" count for connection:queue in each of the four periods.
func TestPulseQueued(t *testing.T) {
	t.Parallel()
	db := testenv.SQLite(t)
	conn, schema := pulseTables(t, db)
	now := time.Unix(1_700_000_123, 0)
	rec := pulse.New(pulse.Params{Conn: conn, Schema: schema, SlowJobThreshold: time.Hour, Clock: func() time.Time { return now }})
	var obs worker.Observer = rec
	q, ok := obs.(worker.QueuedObserver)
	if !ok {
		t.Fatal("the Pulse recorder is not told of queued jobs")
	}
	q.JobQueued("database", "emails", `App\Jobs\Next`)
	q.JobQueued("database", "emails", `App\Jobs\Next`)
	if err := rec.Flush(bg); err != nil {
		t.Fatal(err)
	}
	got := readRows(t, db, "select period, type, aggregate, "+quoteKey(db)+", cast(value as integer) from pulse_aggregates")
	want := []string{"10080 queued count database:emails 2", "1440 queued count database:emails 2", "360 queued count database:emails 2", "60 queued count database:emails 2"} // as readRows sorts them
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("pulse_aggregates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// pulseTables opens db with Pulse's tables created, and returns them as the recorder reads them.
func pulseTables(t *testing.T, db testenv.Database) (*laravel.Conn, laravel.PulseSchema) {
	t.Helper()
	p := queuetest.OpenParams(db)
	p.Tables = laravel.Tables{}
	conn := queuetest.Open(t, p)
	if err := laravel.CreatePulseTables(bg, conn); err != nil {
		t.Fatal(err)
	}
	schema, err := conn.PulseInspect(bg)
	if err != nil {
		t.Fatal(err)
	}
	return conn, schema
}
