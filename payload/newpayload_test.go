package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/fixtures"
)

// paramsFrom rebuilds the parameters that produced env.
func paramsFrom(t *testing.T, env *Envelope, version string) JobPayloadParams {
	t.Helper()
	v, err := ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	p := JobPayloadParams{
		LaravelVersion: version, UUID: env.UUID, DisplayName: env.DisplayName,
		MaxTries: env.MaxTries, MaxExceptions: env.MaxExceptions, Timeout: env.Timeout,
		FailOnTimeout: env.FailOnTimeout, Backoff: env.Backoff, RetryUntil: env.RetryUntil,
		DeleteWhenMissingModels: env.DeleteWhenMissingModels, BatchID: env.BatchID, CreatedAt: env.CreatedAt,
	}
	if env.TimeoutAt != nil {
		p.RetryUntil = env.TimeoutAt
	}
	if v.AtLeast(12, 11) {
		p.Delay = env.Delay
	} else {
		p.RetryAfter = env.Delay
	}
	if env.IsRaw() {
		p.Job, p.Data = env.Job, env.Data
		return p
	}
	p.CommandName = env.CommandName
	if env.CommandEncrypted() {
		p.SerializedCommand = env.Command
		return p
	}
	obj, err := DecodeCommand(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Command = obj
	return p
}

// TestNewJobPayloadRebuildsFixtures rebuilds every envelope Laravel 8.83 wrote (except pushRaw's, which
// createPayload does not make) from its command, uuid and options, and expects the same bytes.
func TestNewJobPayloadRebuildsFixtures(t *testing.T) {
	for name, f := range fixtures.Laravel883() {
		if name == "raw-string" {
			continue
		}
		env, err := ParseEnvelope(f.Payload)
		if err != nil {
			t.Fatal(err)
		}
		got, err := NewJobPayload(paramsFrom(t, env, "8.83"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The fixture files end with the newline of the tool that dumped the column.
		if want := bytes.TrimSuffix(f.Payload, []byte("\n")); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// TestNewJobPayloadVersions rebuilds the envelopes make-envelopes.php wrote with PHP's json_encode for
// the key sets of other versions.
func TestNewJobPayloadVersions(t *testing.T) {
	for file, version := range map[string]string{
		"5.5": "5.5", "6.x": "6.20", "7.x": "7.30", "7.x-raw": "7.30", "11.x": "11.0",
		"12.x": "12.54", "13.x": "13.0", "13.x-raw": "13",
	} {
		raw := readEnvelope(t, file)
		env, err := ParseEnvelope(raw)
		if err != nil {
			t.Fatal(err)
		}
		p := paramsFrom(t, env, version)
		switch file {
		case "11.x":
			p.Extra = []ExtraKey{{"illuminate:log:context", env.Extra["illuminate:log:context"]}}
		case "12.x":
			p.Extra = []ExtraKey{{"pushedAt", env.Extra["pushedAt"]}}
		}
		got, err := NewJobPayload(p)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !bytes.Equal(got, raw) {
			t.Errorf("%s:\n got %s\nwant %s", file, got, raw)
		}
	}
}

func TestNewJobPayloadFromGo(t *testing.T) {
	kr, _ := NewKeyring(fixtures.AppKey, nil, "")
	cmd := NewObject(`App\Jobs\Hello`).Set("name", "wörld/ü").Set("job", nil)
	tries := 3
	b, err := NewJobPayload(JobPayloadParams{LaravelVersion: "8.83", Command: cmd, MaxTries: &tries, Encrypt: true, Keyring: kr})
	if err != nil {
		t.Fatal(err)
	}
	env, err := ParseEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(env.UUID) {
		t.Errorf("uuid %q is not a v4 UUID", env.UUID)
	}
	if env.DisplayName != cmd.Class || env.CommandName != cmd.Class || *env.MaxTries != 3 || !env.CommandEncrypted() {
		t.Errorf("envelope %+v", env)
	}
	got, err := DecodeCommand(env, kr)
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := got.Get("name"); name != "wörld/ü" {
		t.Errorf("name %v", name)
	}

	// Before 8.82 non-ASCII is escaped; a raw job with no data gets "".
	b, err = NewJobPayload(JobPayloadParams{LaravelVersion: "8.81", UUID: "u", Command: cmd})
	if err != nil || !bytes.Contains(b, []byte(`w\u00f6rld\/\u00fc`)) {
		t.Errorf("8.81 escaping: %s %v", b, err)
	}
	b, err = NewJobPayload(JobPayloadParams{LaravelVersion: "12.54", UUID: "u", Job: `App\Legacy@run`, Data: json.RawMessage(`{"0":"a","1":"😀"}`)})
	want := `{"uuid":"u","displayName":"App\\Legacy","job":"App\\Legacy@run","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"data":["a","😀"],"createdAt":`
	if err != nil || !bytes.HasPrefix(b, []byte(want)) || !bytes.HasSuffix(b, []byte(`,"delay":null}`)) {
		t.Errorf("raw 12.54: %s %v", b, err)
	}

	for _, p := range []JobPayloadParams{
		{LaravelVersion: "nine", Command: cmd},
		{LaravelVersion: "8.83"},
		{LaravelVersion: "8.83", Command: cmd, Encrypt: true},
		{LaravelVersion: "8.83", SerializedCommand: "O:1:\"A\":0:{}"},
		{LaravelVersion: "8.83", Command: NewObject("A").Set("b", "\xff")},
		{LaravelVersion: "8.83", Job: "A", Data: json.RawMessage(`{"a":1}{}`)},
	} {
		if _, err := NewJobPayload(p); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
	if _, err := ParseVersion("4.2"); !errors.Is(err, ErrVersion) {
		t.Errorf("4.2: %v", err)
	}
}

// TestParseVersion reads versions as composer and `php artisan --version` print them, and as users
// write them; String gives back a text that reads as the same version.
func TestParseVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Version
		err  bool
	}{
		{"8.83", Version{Major: 8, Minor: 83, Patch: -1}, false},
		{"8.83.26", Version{Major: 8, Minor: 83, Patch: 26}, false},
		{" v10.10.0 ", Version{Major: 10, Minor: 10, Patch: 0}, false},
		{"11", Version{Major: 11, Minor: 999, Patch: -1}, false},
		{"12.x", Version{Major: 12, Minor: 999, Patch: -1}, false},
		{"12.*", Version{Major: 12, Minor: 999, Patch: -1}, false},
		{"10.37.x", Version{Major: 10, Minor: 37, Patch: -1}, false},
		{"11.0-dev", Version{Major: 11, Minor: 0, Patch: -1}, false},
		{"12.54.1-beta.2", Version{Major: 12, Minor: 54, Patch: 1}, false},
		{"", Version{}, true},
		{"laravel", Version{}, true},
		{"12.foo", Version{}, true},
		{"4.2", Version{}, true},
		{"99999999999999999999.1", Version{}, true},
	} {
		got, err := ParseVersion(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "composer show laravel/framework") {
				t.Errorf("ParseVersion(%q): %v, want ErrVersion with the fix", tc.in, err)
			}
			continue
		}
		if again, err := ParseVersion(got.String()); err != nil || again != got {
			t.Errorf("ParseVersion(%q).String() = %q, which reads as %v, %v", tc.in, got.String(), again, err)
		}
	}
}
