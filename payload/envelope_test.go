package payload

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/fixtures"
)

func ip(n int) *int        { return &n }
func i64p(n int64) *int64  { return &n }
func sp(s string) *string  { return &s }
func bp(b bool) *bool      { return &b }
func eqInt(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func eqI64(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
func eqStr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func eqBool(a, b *bool) bool  { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func readEnvelope(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "envelopes", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseEnvelopeVersions(t *testing.T) {
	const class = `App\Jobs\SendInvoice`
	tests := []struct {
		file          string
		want          Envelope
		raw           bool
		method        string
		backoffSpec   string
		deadline      int64
		extraKeys     []string
		wantDataJSON  string
		wantEncrypted bool
	}{
		{file: "5.5", want: Envelope{DisplayName: class, MaxTries: ip(3), Timeout: ip(60), TimeoutAt: i64p(1700000000)}, deadline: 1700000000},
		{file: "6.x", want: Envelope{DisplayName: class, Delay: ip(15)}, backoffSpec: "15"},
		{file: "7.x", want: Envelope{UUID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", DisplayName: class, MaxTries: ip(5), MaxExceptions: ip(2), Delay: ip(30), Timeout: ip(90), TimeoutAt: i64p(1700000600)}, backoffSpec: "30", deadline: 1700000600},
		{file: "7.x-raw", raw: true, method: "fire", want: Envelope{UUID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", DisplayName: `App\Legacy`}, wantDataJSON: `""`},
		{file: "8.0", want: Envelope{UUID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", DisplayName: class, Backoff: sp("5"), RetryUntil: i64p(1700000900)}, backoffSpec: "5", deadline: 1700000900},
		{file: "11.x", want: Envelope{UUID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", DisplayName: class, MaxTries: ip(3), Backoff: sp("10,30,60"), Timeout: ip(120)}, backoffSpec: "10,30,60", extraKeys: []string{"illuminate:log:context"}},
		{file: "12.x", want: Envelope{UUID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", DisplayName: class, FailOnTimeout: true, RetryUntil: i64p(1800000000), BatchID: sp("9f3c2a5e-0000-4000-8000-000000000001"), CreatedAt: i64p(1763700000), Delay: ip(45)}, backoffSpec: "45", deadline: 1800000000, extraKeys: []string{"pushedAt"}},
		{file: "13.x", want: Envelope{UUID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", DisplayName: class, MaxTries: ip(1), Backoff: sp("5"), Timeout: ip(10), DeleteWhenMissingModels: bp(true), CreatedAt: i64p(1763700000)}, backoffSpec: "5"},
		{file: "13.x-raw", raw: true, method: "handle", want: Envelope{UUID: "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", DisplayName: `App\Handlers\Import`, CreatedAt: i64p(1763700000), Delay: ip(5)}, backoffSpec: "5", wantDataJSON: `[1,2,3]`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw := readEnvelope(t, tt.file)
			e, err := ParseEnvelope(raw)
			if err != nil {
				t.Fatal(err)
			}
			w := tt.want
			if string(e.Raw) != string(raw) {
				t.Error("Raw is not the input")
			}
			if e.UUID != w.UUID || e.DisplayName != w.DisplayName || e.FailOnTimeout != w.FailOnTimeout {
				t.Errorf("uuid/displayName/failOnTimeout = %q %q %v", e.UUID, e.DisplayName, e.FailOnTimeout)
			}
			if !eqInt(e.MaxTries, w.MaxTries) || !eqInt(e.MaxExceptions, w.MaxExceptions) || !eqInt(e.Timeout, w.Timeout) || !eqInt(e.Delay, w.Delay) {
				t.Errorf("maxTries/maxExceptions/timeout/delay differ: %v %v %v %v", e.MaxTries, e.MaxExceptions, e.Timeout, e.Delay)
			}
			if !eqI64(e.TimeoutAt, w.TimeoutAt) || !eqI64(e.RetryUntil, w.RetryUntil) || !eqI64(e.CreatedAt, w.CreatedAt) {
				t.Errorf("timeoutAt/retryUntil/createdAt differ")
			}
			if !eqStr(e.Backoff, w.Backoff) || !eqStr(e.BatchID, w.BatchID) || !eqBool(e.DeleteWhenMissingModels, w.DeleteWhenMissingModels) {
				t.Errorf("backoff/batchId/deleteWhenMissingModels differ")
			}
			if e.IsRaw() != tt.raw {
				t.Errorf("IsRaw() = %v", e.IsRaw())
			}
			if tt.raw {
				if _, m := e.RawTarget(); m != tt.method {
					t.Errorf("method %q, want %q", m, tt.method)
				}
				if string(e.Data) != tt.wantDataJSON {
					t.Errorf("data %s, want %s", e.Data, tt.wantDataJSON)
				}
				if e.CommandEncrypted() {
					t.Error("raw job reported as encrypted")
				}
			} else {
				if e.CommandName != class || e.Command[:2] != "O:" || e.CommandEncrypted() {
					t.Errorf("command %q %q", e.CommandName, e.Command)
				}
			}
			if got, own := e.BackoffSpec(); got != tt.backoffSpec || own != (tt.backoffSpec != "") {
				t.Errorf("BackoffSpec() = %q, %v; want %q", got, own, tt.backoffSpec)
			}
			d, ok := e.RetryDeadline()
			if ok != (tt.deadline != 0) || d != tt.deadline {
				t.Errorf("RetryDeadline() = %d %v", d, ok)
			}
			if len(e.Extra) != len(tt.extraKeys) {
				t.Errorf("Extra = %v, want keys %v", e.Extra, tt.extraKeys)
			}
			for _, k := range tt.extraKeys {
				if !json.Valid(e.Extra[k]) {
					t.Errorf("Extra[%q] missing or invalid", k)
				}
			}
		})
	}
}

func TestParseEnvelopeFixtures(t *testing.T) {
	for name, f := range fixtures.Laravel883() {
		e, err := ParseEnvelope(f.Payload)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw := name == "raw" || name == "raw-string"
		if e.IsRaw() != raw {
			t.Errorf("%s: IsRaw() = %v", name, e.IsRaw())
		}
		if e.CommandEncrypted() != (name == "secret") {
			t.Errorf("%s: CommandEncrypted() = %v", name, e.CommandEncrypted())
		}
	}
	e, _ := ParseEnvelope(fixtures.Laravel883()["flaky"].Payload)
	if backoffSpec(e) != "1,5,10" || *e.MaxTries != 5 || *e.MaxExceptions != 3 || *e.Timeout != 30 || !e.FailOnTimeout {
		t.Errorf("flaky envelope read wrong: %+v", e)
	}
	e, _ = ParseEnvelope(fixtures.Laravel883()["retry-until"].Payload)
	if d, ok := e.RetryDeadline(); !ok || d != 1795239786 || backoffSpec(e) != "3" {
		t.Errorf("retry-until: deadline %d %v, backoff %q", d, ok, backoffSpec(e))
	}
}

func TestRawTarget(t *testing.T) {
	tests := []struct{ job, class, method string }{
		{`App\Handlers\Legacy@fire`, `App\Handlers\Legacy`, "fire"},
		{`App\Handlers\Legacy`, `App\Handlers\Legacy`, "fire"},
		{`A@b@c`, "A", "b@c"},
		{"class@anonymous\x00/app/x.php:3$0", "class@anonymous\x00/app/x.php:3$0", "fire"},
		{"class@anonymous\x00/app/x.php:3$0@run", "class@anonymous\x00/app/x.php:3$0", "run"},
	}
	for _, tt := range tests {
		e := &Envelope{Job: tt.job}
		c, m := e.RawTarget()
		if c != tt.class || m != tt.method {
			t.Errorf("RawTarget(%q) = %q, %q", tt.job, c, m)
		}
	}
}

// TestPeekEnvelope reads the names of payloads ParseEnvelope refuses, and nothing of what is not a JSON
// object with a job.
func TestPeekEnvelope(t *testing.T) {
	for in, want := range map[string]string{
		`{"uuid":"u","displayName":"A","job":"X@y","maxTries":"three","data":{"commandName":"C"}}`: "u A X@y C",
		`{"uuid":5,"displayName":["A"],"job":"X","data":"oops"}`:                                   "  X ",
		`{"job":"X","data":{"commandName":7}}`:                                                     "  X ",
	} {
		e, ok := PeekEnvelope([]byte(in))
		if !ok || strings.Join([]string{e.UUID, e.DisplayName, e.Job, e.CommandName}, " ") != want {
			t.Errorf("PeekEnvelope(%s) = %+v, %v; want %q", in, e, ok, want)
		}
	}
	for _, in := range []string{``, `null`, `[1]`, `{"job":1}`, `{"uuid":"u"}`, `{"job":`} {
		if _, ok := PeekEnvelope([]byte(in)); ok {
			t.Errorf("PeekEnvelope(%s) ok, want no job", in)
		}
	}
}

func TestParseEnvelopeErrors(t *testing.T) {
	tests := []struct{ in, key string }{
		{``, ""},
		{`null`, ""},
		{`[1]`, ""},
		{`{"job":1}`, "job"},
		{`{"data":{}}`, "job"},
		{`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":""}`, "data"},
		{`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"A"}}`, "data.command"},
		{`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"command":5}}`, "data.command"},
		{`{"job":"X","maxTries":"three"}`, "maxTries"},
		{`{"job":"X","maxTries":"1.5x"}`, "maxTries"},
		{`{"job":"X","timeout":99999999999}`, "timeout"},
		{`{"job":"X","backoff":true}`, "backoff"},
		{`{"job":"X","retryUntil":"soon"}`, "retryUntil"},
	}
	for _, tt := range tests {
		_, err := ParseEnvelope([]byte(tt.in))
		var ee *EnvelopeError
		if !errors.As(err, &ee) || !errors.Is(err, ErrEnvelope) {
			t.Errorf("%s: error %v, want an EnvelopeError", tt.in, err)
			continue
		}
		if ee.Key != tt.key {
			t.Errorf("%s: key %q, want %q (%v)", tt.in, ee.Key, tt.key, err)
		}
	}
	e, err := ParseEnvelope([]byte(`{"job":"X","maxTries":3.0,"timeout":"60","backoff":null,"delay":null}`))
	if err != nil || *e.MaxTries != 3 || *e.Timeout != 60 || backoffSpec(e) != "" {
		t.Errorf("integral float or nulls: %v %+v", err, e)
	}
}

// TestParseEnvelopeAsPHPReadsIt: values PHP runs a job with are read, not refused: limits beyond
// int32 (PHP compares attempts with them as they are, so they are never reached) saturate, and a
// backoff that is an object or a list (which Laravel never writes) counts as absent.
func TestParseEnvelopeAsPHPReadsIt(t *testing.T) {
	for _, tt := range []struct {
		in                  string
		maxTries, maxExcept int
	}{
		{`{"job":"X","maxTries":99999999999,"maxExceptions":-99999999999}`, math.MaxInt32, math.MinInt32},
		{`{"job":"X","maxTries":1e20,"maxExceptions":3}`, math.MaxInt32, 3},
		{`{"job":"X","maxTries":-1,"maxExceptions":1,"backoff":{"a":1}}`, -1, 1},
		{`{"job":"X","maxTries":2,"maxExceptions":1,"backoff":[5,10]}`, 2, 1},
	} {
		e, err := ParseEnvelope([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if *e.MaxTries != tt.maxTries || *e.MaxExceptions != tt.maxExcept || backoffSpec(e) != "" {
			t.Errorf("%s: maxTries %d maxExceptions %d backoff %q", tt.in, *e.MaxTries, *e.MaxExceptions, backoffSpec(e))
		}
	}
	// Numbers past any clock or delay: a retryUntil PHP's clock never reaches (or passed long ago), a
	// backoff whose text the worker casts as PHP's (int) does.
	e, err := ParseEnvelope([]byte(`{"job":"X","retryUntil":1e30,"timeoutAt":-1e30,"backoff":1e30}`))
	if err != nil || *e.RetryUntil != 1<<53 || *e.TimeoutAt != -(1<<53) || backoffSpec(e) != "1e30" {
		t.Errorf("huge numbers: %v %+v", err, e)
	}
	// Fractions, as a class's `$tries = 2.5` writes them: PHP compares attempts with them as they
	// are, so tries bound the attempts at claim by their floor (and an exception never reaches them),
	// maxExceptions count up to their ceiling, and a timeout is the whole seconds pcntl_alarm takes;
	// a zero that is a float or a string is no "no limit" to PHP's `=== 0`.
	for _, tt := range []struct {
		in                          string
		maxTries, maxExcept, timout int
		fraction                    bool
	}{
		{`{"job":"X","maxTries":2.5,"maxExceptions":1.5,"timeout":1.5}`, 2, 2, 1, true},
		{`{"job":"X","maxTries":"2.5","maxExceptions":"0.5","timeout":"0.5"}`, 2, 1, 0, true},
		{`{"job":"X","maxTries":0.5,"maxExceptions":-1.5,"timeout":-2.5}`, -1, -1, -2, false},
		{`{"job":"X","maxTries":0.0,"maxExceptions":0,"timeout":0}`, -1, 0, 0, false},
		{`{"job":"X","maxTries":3.0,"maxExceptions":2.0,"timeout":60.0}`, 3, 2, 60, false},
		{`{"job":"X","maxTries":1e10,"maxExceptions":4294967296.5,"timeout":7}`, math.MaxInt32, math.MaxInt32, 7, false},
	} {
		e, err := ParseEnvelope([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if *e.MaxTries != tt.maxTries || e.MaxTriesFraction != tt.fraction || *e.MaxExceptions != tt.maxExcept || *e.Timeout != tt.timout {
			t.Errorf("%s: maxTries %d (fraction %v) maxExceptions %d timeout %d", tt.in, *e.MaxTries, e.MaxTriesFraction, *e.MaxExceptions, *e.Timeout)
		}
	}
}

// backoffSpec is the job's backoff, "" for none.
func backoffSpec(e *Envelope) string {
	spec, _ := e.BackoffSpec()
	return spec
}

// TestEmptyBackoffIsTheJobs: a job's `$backoff = []` is written as "" and is its own backoff (a delay
// of 0), as Job::backoff() returns it rather than null; a null backoff is none.
func TestEmptyBackoffIsTheJobs(t *testing.T) {
	for in, own := range map[string]bool{`,"backoff":""`: true, `,"backoff":null`: false, ``: false} {
		e, err := ParseEnvelope([]byte(`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"A","command":"O:1:\"A\":0:{}"}` + in + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if spec, got := e.BackoffSpec(); spec != "" || got != own {
			t.Errorf("%s: BackoffSpec() = %q, %v; want \"\", %v", in, spec, got, own)
		}
	}
}

// TestEnvelopeFlagsAsPHP reads failOnTimeout and deleteWhenMissingModels with PHP's truthiness, as a
// class declaring `$failOnTimeout = 1` writes them, and a fractional retryUntil (a retryUntil() of
// microtime(true)) as the second it falls in.
func TestEnvelopeFlagsAsPHP(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{`1`: true, `0`: false, `0.0`: false, `-2`: true, `"0"`: false, `""`: false, `"0.0"`: true,
		`"yes"`: true, `[]`: false, `[0]`: true, `{}`: false, `true`: true, `false`: false} {
		e, err := ParseEnvelope([]byte(`{"job":"X","failOnTimeout":` + in + `,"deleteWhenMissingModels":` + in + `}`))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if e.FailOnTimeout != want || e.DeleteWhenMissingModels == nil || *e.DeleteWhenMissingModels != want {
			t.Errorf("%s: failOnTimeout %v, deleteWhenMissingModels %v; want %v", in, e.FailOnTimeout, e.DeleteWhenMissingModels, want)
		}
	}
	for in, want := range map[string]int{`0`: 0, `"0"`: -1, `"3"`: 3, `3`: 3} {
		e, err := ParseEnvelope([]byte(`{"job":"X","maxTries":` + in + `}`))
		if err != nil {
			t.Errorf("maxTries %s: %v", in, err)
			continue
		}
		if *e.MaxTries != want {
			t.Errorf("maxTries %s: %d, want %d (PHP: a string zero is no \"no limit\")", in, *e.MaxTries, want)
		}
	}
	for in, want := range map[string]int64{`1763700000.75`: 1763700000, `1763700000`: 1763700000, `"1763700000"`: 1763700000, `-1.5`: -2} {
		e, err := ParseEnvelope([]byte(`{"job":"X","retryUntil":` + in + `}`))
		if err != nil {
			t.Errorf("retryUntil %s: %v", in, err)
			continue
		}
		if e.RetryUntil == nil || *e.RetryUntil != want {
			t.Errorf("retryUntil %s: %v, want %d", in, e.RetryUntil, want)
		}
	}
}
