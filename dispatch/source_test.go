package dispatch

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// TestPayloadsOfLaravelSource compares what the Dispatcher writes, byte for byte apart from the uuid,
// with the payloads each Laravel release's own Queue::createPayload and queue traits write for the
// same jobs (testdata/laravel-source, made by make.sh from laravel/framework's source: releases PHP
// here cannot install run their queue code there over Laravel 8.83's support classes).
func TestPayloadsOfLaravelSource(t *testing.T) {
	t.Parallel()
	at := time.Unix(1763700000, 0)
	sendInvoice := func(id int64) *payload.Object {
		return payload.NewObject(`App\Jobs\SendInvoice`).Set("invoiceId", id).Set("note", "ünï/€").Set("tries", int64(3))
	}
	jobs := map[string]Job{
		"plain":      {Command: sendInvoice(7)},
		"queued":     {Command: sendInvoice(8), Queue: "emails", Delay: 90 * time.Second},
		"connection": {Command: sendInvoice(9), Connection: "other"},
		"options": {Command: payload.NewObject(`App\Jobs\Flaky`).Set("invoiceId", int64(10)).
			Set("backoff", payload.NewList(int64(1), int64(5), int64(10))).Set("timeout", int64(120)).Set("maxExceptions", int64(2)).
			Set("failOnTimeout", true).Set("deleteWhenMissingModels", true)},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "laravel-source", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no payloads under testdata/laravel-source: %v", err)
	}
	for _, file := range files {
		version := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		d, err := New(Params{Dialect: laravel.SQLite, LaravelVersion: version, Clock: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			var c struct{ Case, Payload string }
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if strings.HasPrefix(c.Case, "chain-") || strings.HasPrefix(c.Case, "unique-") {
				continue // the worker's test (a chain's next link as the worker dispatches it, lock keys)
			}
			j, ok := jobs[c.Case]
			if c.Case == "loose" {
				// The command PHP serialized, dispatched again: its properties of other types than
				// Laravel writes (a string or float tries, dates) are read as createPayload reads them.
				j, ok = Job{Command: phpCommand(t, c.Payload)}, true
			}
			if !ok {
				t.Fatalf("%s: no job for the case %q", file, c.Case)
			}
			got, _, err := d.Payload(j)
			if err != nil {
				t.Fatalf("%s %s: %v", version, c.Case, err)
			}
			env, err := payload.ParseEnvelope(got)
			if err != nil {
				t.Fatal(err)
			}
			g := string(got)
			if env.UUID != "" { // from 7.0 on
				g = strings.Replace(g, env.UUID, "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", 1)
			}
			if g != c.Payload {
				t.Errorf("Laravel %s, %s:\n got %s\nwant %s", version, c.Case, g, c.Payload)
			}
			n++
		}
		f.Close()
		if err := sc.Err(); err != nil || n != len(jobs)+1 {
			t.Errorf("%s: %d cases read (%v), want %d", file, n, err, len(jobs))
		}
	}
}

// phpCommand is the command of a payload PHP wrote.
func phpCommand(t *testing.T, p string) *payload.Object {
	t.Helper()
	env, err := payload.ParseEnvelope([]byte(p))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := payload.DecodeCommand(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}
