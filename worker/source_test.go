package worker

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/payload"
)

// TestChainLinkOfLaravelSource runs the head of a chain written by each Laravel release's own queue
// code (../dispatch/testdata/laravel-source, made from laravel/framework's source by make.sh there) and
// compares the next link the worker pushes, byte for byte apart from its uuid and createdAt, with the
// one that release's dispatchNextJobInChain and Queue::createPayload write; and the unique lock keys
// with the ones that release's UniqueLock takes.
func TestChainLinkOfLaravelSource(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "dispatch", "testdata", "laravel-source", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no payloads under dispatch/testdata/laravel-source: %v", err)
	}
	createdAt := regexp.MustCompile(`"createdAt":\d+`)
	for _, file := range files {
		version := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		cases, keys := map[string]string{}, map[string]string{}
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var c struct{ Case, Payload, Key string }
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			cases[c.Case], keys[c.Case] = c.Payload, c.Key
		}
		f.Close()
		v, err := ParseVersion(version)
		if err != nil {
			t.Fatal(err)
		}
		head, next := cases["chain-head"], cases["chain-next"]
		if (head == "" || next == "") && v.AtLeast(5, 5) {
			t.Fatalf("%s: no chain-head or chain-next case", file)
		}
		// The ShouldBeUnique lock key that release's UniqueLock takes, for a class without and with a
		// displayName() of its own (releases before 8.83's UniqueLock have no case).
		for name, args := range map[string]struct {
			class, displayName string
			defines            bool
		}{
			"unique-plain": {`App\Jobs\SendInvoice`, `App\Jobs\SendInvoice`, false},
			"unique-named": {`App\Jobs\Named`, "Invoices for 42", true},
		} {
			if keys[name] == "" && !v.AtLeast(8, 83) {
				continue
			}
			got, ok := UniqueLockKey(v, args.class, args.displayName, args.defines, "42", XXH128)
			if !ok || got != keys[name] {
				t.Errorf("Laravel %s, %s: lock key %q (%v), want %q", version, name, got, ok, keys[name])
			}
		}
		if head == "" {
			continue // no chains before 5.5
		}
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t, testenv.SQLite(t))
			var calls atomic.Int32
			fx.reg.Register(`App\Jobs\SendInvoice`, ok(&calls))
			fx.push(t, "chainq", []byte(head))
			runOnce(t, fx.worker(t, func(c *Config) { c.LaravelVersion = version; c.Queues = []string{"chainq"} }))
			row := fx.onlyRow(t)
			env, err := payload.ParseEnvelope(row.Payload)
			if err != nil {
				t.Fatal(err)
			}
			got := string(row.Payload)
			if env.UUID != "" { // from 7.0 on
				got = strings.Replace(got, env.UUID, "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", 1)
			}
			got = createdAt.ReplaceAllString(got, `"createdAt":1763700000`)
			if got != next || row.Queue != "chainq" {
				t.Errorf("Laravel %s: the next link on %q\n got %s\nwant %s", version, row.Queue, got, next)
			}
		})
	}
}
