package faults_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/handlers"
	"github.com/artisan-go/artisan-go/internal/faults"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

const poisonClass = `App\Jobs\PoisonJob`

// TestPoisonRowsAhead puts rows that cannot run or cannot be failed as they are ahead of good jobs:
// damaged payloads, a failing job whose uuid failed_jobs already has, one whose uuid is longer than the
// column, a class without a handler. Every good job runs once, every poison row reaches a terminal
// state (failed_jobs, or handed back for PHP), and the worker stops when the queue is empty.
func TestPoisonRowsAhead(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		d := newDrain(t, db, laravel.SchemaParams{}, 0)
		now := time.Now().Unix()
		raw := func(p []byte) {
			if _, err := d.Queue.JobPush(bg, &laravel.JobPushParams{Queue: "default", Payload: p, Now: now, AvailableAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		poison := func(uuid string) []byte {
			p, err := payload.NewJobPayload(payload.JobPayloadParams{LaravelVersion: "8.83", UUID: uuid, Command: payload.NewObject(poisonClass)})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		dup := d.pushClass(t, poisonClass) // fails first, so its uuid is in failed_jobs
		for range size(5, 50) {
			raw([]byte(`{"uuid":"x","job":`))                                                                  // damaged
			raw(poison(dup))                                                                                   // uuid already in failed_jobs
			raw(bytes.Replace(poison(""), []byte(`"uuid":"`), []byte(`"uuid":"`+strings.Repeat("u", 300)), 1)) // too long
			d.pushClass(t, `App\Jobs\NoHandler`)                                                               // left for PHP
		}
		d.push(t, size(200, 2000))
		reg := d.registry()
		reg.Register(poisonClass, handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return errors.New("poison") }))
		w := d.worker(t, reg, func(c *worker.Config) { c.Tries = 1 })
		if _, err := w.Run(bg); err != nil {
			t.Fatal(err)
		}
		r := d.result(t)
		faults.Report(t, "poison rows ahead of good jobs ("+db.Dialect+")", r)
		st := w.Stats()
		poisons := size(5, 50)
		if r.Lost != 0 || r.Duplicated != 0 || r.WronglyFailed != 0 || st.Failed != int64(1+3*poisons) || st.Unapplied != 0 {
			t.Errorf("%v, stats %+v; want every good job once and %d failed", r, st, 1+3*poisons)
		}
	})
}
