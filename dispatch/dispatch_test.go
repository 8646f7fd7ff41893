package dispatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

func TestNewRejectsBadParams(t *testing.T) {
	t.Parallel()
	for _, p := range []Params{
		{Dialect: "oracle"},
		{Dialect: laravel.MySQL, Table: "jobs; drop table users"},
		{Dialect: laravel.SQLite, LaravelVersion: "four"},
	} {
		if _, err := New(p); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%+v) = %v, want ErrInvalid", p, err)
		}
	}
	if _, err := New(Params{Dialect: laravel.MariaDB}); err != nil {
		t.Errorf("mariadb: %v", err)
	}
}

func TestPayloadRejectsBadJobs(t *testing.T) {
	t.Parallel()
	d, err := New(Params{Dialect: laravel.SQLite})
	if err != nil {
		t.Fatal(err)
	}
	for name, j := range map[string]Job{
		"no command":       {},
		"no class":         {Command: &payload.Object{}},
		"no keyring":       {Command: payload.NewObject("A"), Encrypt: true},
		"negative delay":   {Command: payload.NewObject("A"), Delay: -time.Second},
		"negative timeout": {Command: payload.NewObject("A"), Timeout: -time.Second},
	} {
		if _, _, err := d.Payload(j); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// TestPayloadByVersion checks the envelope keys and the trait properties each version writes.
func TestPayloadByVersion(t *testing.T) {
	t.Parallel()
	at := time.Unix(1763700000, 0)
	for _, c := range []struct {
		version, keys, props string
		without              bool // WithoutSerializesModels: every property, as before 9.4
	}{
		{"5.5", "displayName job maxTries timeout timeoutAt data", "id job connection queue chainConnection chainQueue delay chained", false},
		{"7.30", "uuid displayName job maxTries maxExceptions delay timeout timeoutAt data", "id job connection queue chainConnection chainQueue delay middleware chained", false},
		{"8.83", "uuid displayName job maxTries maxExceptions failOnTimeout backoff timeout retryUntil data",
			"id job connection queue chainConnection chainQueue chainCatchCallbacks delay afterCommit middleware chained", false},
		{"9.3", "uuid displayName job maxTries maxExceptions failOnTimeout backoff timeout retryUntil data",
			"id job connection queue chainConnection chainQueue chainCatchCallbacks delay afterCommit middleware chained", false},
		// From 9.4 SerializesModels leaves out the properties at their default.
		{"9.4", "uuid displayName job maxTries maxExceptions failOnTimeout backoff timeout retryUntil data", "id delay", false},
		{"12.54", "uuid displayName job maxTries maxExceptions failOnTimeout backoff timeout retryUntil data createdAt delay", "id delay", false},
		{"12.54", "uuid displayName job maxTries maxExceptions failOnTimeout backoff timeout retryUntil data createdAt delay",
			"id job connection queue messageGroup deduplicator delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks", true},
		{"13.0", "uuid displayName job maxTries maxExceptions failOnTimeout backoff timeout retryUntil deleteWhenMissingModels data createdAt delay", "id delay", false},
		{"13.0", "uuid displayName job maxTries maxExceptions failOnTimeout backoff timeout retryUntil deleteWhenMissingModels data createdAt delay",
			"id job connection queue messageGroup deduplicator delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks", true},
	} {
		d, err := New(Params{Dialect: laravel.Postgres, LaravelVersion: c.version, Clock: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		raw, queue, err := d.Payload(Job{Command: payload.NewObject(`App\Jobs\Ship`).Set("id", int64(1)), Delay: 90 * time.Second, Tries: 2, RetryUntil: at.Add(time.Hour), WithoutSerializesModels: c.without})
		if err != nil {
			t.Fatalf("%s: %v", c.version, err)
		}
		if queue != "default" {
			t.Errorf("%s: queue %q", c.version, queue)
		}
		env, err := payload.ParseEnvelope(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.version, err)
		}
		keys := topKeys(t, raw)
		if got := strings.Join(keys, " "); got != c.keys {
			t.Errorf("%s: keys\n got %s\nwant %s", c.version, got, c.keys)
		}
		cmd, err := payload.DecodeCommand(env, nil)
		if err != nil {
			t.Fatal(err)
		}
		var props []string
		for _, p := range cmd.Props {
			props = append(props, p.Name)
		}
		if got := strings.Join(props, " "); got != c.props {
			t.Errorf("%s: properties\n got %s\nwant %s", c.version, got, c.props)
		}
		if v, _ := cmd.Get("delay"); v != int64(90) {
			t.Errorf("%s: delay property %v, want 90", c.version, v)
		}
		if deadline, ok := env.RetryDeadline(); !ok || deadline != at.Add(time.Hour).Unix() {
			t.Errorf("%s: retry deadline %d %v", c.version, deadline, ok)
		}
	}
}

// TestDeleteWhenMissingModelsKey writes 13.x's deleteWhenMissingModels envelope key from the command's
// property, as Queue::createObjectPayload reads it: the 13.x worker reads that key, not the property.
func TestDeleteWhenMissingModelsKey(t *testing.T) {
	t.Parallel()
	d, err := New(Params{Dialect: laravel.Postgres, LaravelVersion: "13.0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []bool{true, false} {
		cmd := payload.NewObject(`App\Jobs\Ship`)
		if set {
			cmd.Set("deleteWhenMissingModels", true)
		}
		raw, _, err := d.Payload(Job{Command: cmd})
		if err != nil {
			t.Fatal(err)
		}
		env, err := payload.ParseEnvelope(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := env.DeleteWhenMissingModels; got == nil || *got != set {
			t.Errorf("property set %v: the key is %v, want %v", set, got, set)
		}
	}
}

func TestFromJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`7`:                       `i:7;`,
		`1.5`:                     `d:1.5;`,
		`"x/y"`:                   `s:3:"x/y";`,
		`null`:                    `N;`,
		`[true,"a"]`:              `a:2:{i:0;b:1;i:1;s:1:"a";}`,
		`{"b":1,"a":{"10":null}}`: `a:2:{s:1:"b";i:1;s:1:"a";a:1:{i:10;N;}}`,
		`[1e400,-1e400,1e-400]`:   `a:3:{i:0;d:INF;i:1;d:-INF;i:2;d:0;}`, // PHP 8.2's serialize(json_decode(…, true))
	} {
		v, err := FromJSON([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, err := payload.Serialize(v)
		if err != nil || string(got) != want {
			t.Errorf("FromJSON(%s) serializes as %s (%v), want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `{`, `1 2`, `[1,]`} {
		if _, err := FromJSON([]byte(bad)); err == nil {
			t.Errorf("FromJSON(%q) succeeded", bad)
		}
	}
}

// topKeys returns the keys of a JSON object in order.
func topKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestQueueablePropertiesByVersion serializes the properties of Laravel's InteractsWithQueue and
// Queueable traits after the class's own, in the order each release declares them (Queueable.php of
// 5.5 through 13.26), with their defaults.
func TestQueueablePropertiesByVersion(t *testing.T) {
	t.Parallel()
	old := "job connection queue chainConnection chainQueue chainCatchCallbacks delay afterCommit middleware chained"
	for version, want := range map[string]string{
		"5.8":   "job connection queue chainConnection chainQueue delay chained",
		"6.20":  "job connection queue chainConnection chainQueue delay middleware chained",
		"8.18":  "job connection queue chainConnection chainQueue chainCatchCallbacks delay middleware chained",
		"8.83":  old,
		"11.1":  old,
		"11.2":  "job connection queue delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks",
		"12.27": "job connection queue group delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks",
		"12.28": "job connection queue messageGroup delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks",
		// 12.28.0 still declares group: 12.28.1 renamed it.
		"12.28.0": "job connection queue group delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks",
		"12.28.1": "job connection queue messageGroup delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks",
		"12.54":   "job connection queue messageGroup deduplicator delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks",
		"13.6":    "job connection queue messageGroup deduplicator debounceOwner delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks",
		"13.24":   "job connection queue messageGroup deduplicator debounceOwner uniqueLockOwner delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks",
	} {
		d, err := New(Params{Dialect: laravel.SQLite, LaravelVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		// Without SerializesModels every property is serialized, so that their order shows.
		p, _, err := d.Payload(Job{Command: payload.NewObject(`App\Jobs\Ship`).Set("orderId", int64(7)), WithoutSerializesModels: true})
		if err != nil {
			t.Fatal(err)
		}
		env, err := payload.ParseEnvelope(p)
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := payload.DecodeCommand(env, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, prop := range cmd.Props[1:] {
			names = append(names, prop.Name)
		}
		if got := strings.Join(names, " "); cmd.Props[0].Name != "orderId" || got != want {
			t.Errorf("%s: %s %s\nwant orderId %s", version, cmd.Props[0].Name, got, want)
		}
		for _, owner := range []string{"debounceOwner", "uniqueLockOwner"} {
			if v, ok := cmd.Get(owner); ok && v != "" {
				t.Errorf("%s: %s is %v, want ''", version, owner, v)
			}
		}
	}
}
