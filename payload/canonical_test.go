package payload

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/artisan-go/artisan-go/fixtures"
)

// decodeJSON parses JSON keeping numbers as their text, so that 2.5 and 2.50 or 1 and 1.0 differ.
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

// TestDocumentGolden decodes every Laravel 8.83 fixture and compares the document with PHP's own reading
// in NAME.decoded.json, and the envelope fields with the payload's top-level keys.
func TestDocumentGolden(t *testing.T) {
	kr, err := NewKeyring(fixtures.AppKey, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range fixtures.Laravel883() {
		t.Run(name, func(t *testing.T) {
			env, err := ParseEnvelope(f.Payload)
			if err != nil {
				t.Fatal(err)
			}
			var cmd Value
			if !env.IsRaw() {
				obj, err := DecodeCommand(env, kr)
				if err != nil {
					t.Fatal(err)
				}
				cmd = obj
			}
			out, err := json.Marshal(Document(env, cmd))
			if err != nil {
				t.Fatal(err)
			}
			got := decodeJSON(t, out).(map[string]any)
			for k, want := range decodeJSON(t, f.Decoded).(map[string]any) {
				if !reflect.DeepEqual(got[k], want) {
					t.Errorf("%q differs\n got: %v\nwant: %v", k, got[k], want)
				}
			}
			for k, want := range decodeJSON(t, f.Payload).(map[string]any) {
				if k == "data" {
					continue
				}
				if !reflect.DeepEqual(got[k], want) {
					t.Errorf("envelope key %q: got %v, want %v", k, got[k], want)
				}
			}
			if !env.IsRaw() && (got["commandName"] != env.CommandName || got["encrypted"] != (name == "secret")) {
				t.Errorf("commandName/encrypted: %v %v", got["commandName"], got["encrypted"])
			}
		})
	}
}

func TestCanonicalJSON(t *testing.T) {
	base := NewObject(`App\Child`)
	base.SetPrivate(`App\Base`, "secret", "b").SetPrivate(`App\Child`, "secret", "c").SetProtected("p", 0.0)
	base.Set("self", base)
	tests := []struct {
		v    Value
		want string
	}{
		{nil, `null`},
		{0.0, `0.0`},
		{math.Copysign(0, -1), `-0.0`},
		{3.0, `3.0`},
		{2.5, `2.5`},
		{1e25, `1e+25`},
		{1e-7, `1e-07`},
		{math.NaN(), `"NAN"`},
		{math.Inf(-1), `"-INF"`},
		{int64(-3), `-3`},
		{"a\"\\\n\x01<ü\xff", `"a\"\\\n\u0001<ü` + "\ufffd" + `"`},
		{NewList(1, "x"), `[1,"x"]`},
		{(&Array{}).Set(1, true).Set("k", nil), `{"1":true,"k":null}`},
		{&Array{}, `[]`},
		{&Enum{Class: `App\Status`, Case: "On"}, `{"@enum":"App\\Status","case":"On"}`},
		{&Custom{Class: "L", Data: "x"}, `{"@class":"L","@serialized":"x"}`},
		{base, `{"@class":"App\\Child","App\\Base::secret":"b","secret":"c","p":0.0,"self":{"@recursion":"App\\Child"}}`},
	}
	for _, tt := range tests {
		got := CanonicalJSON(tt.v)
		if string(got) != tt.want {
			t.Errorf("CanonicalJSON(%#v) = %s, want %s", tt.v, got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s is not valid JSON", got)
		}
	}
}

func TestDocumentWithoutRaw(t *testing.T) {
	tries := 2
	env := &Envelope{UUID: "u", DisplayName: "A", Job: CallQueuedHandler, MaxTries: &tries, CommandName: "A", Command: `O:1:"A":0:{}`}
	out, err := json.Marshal(Document(env, NewObject("A")))
	if err != nil {
		t.Fatal(err)
	}
	got := decodeJSON(t, out).(map[string]any)
	if got["uuid"] != "u" || got["maxTries"] != json.Number("2") || got["encrypted"] != false || got["command"].(map[string]any)["@class"] != "A" {
		t.Errorf("document %s", out)
	}
	raw := &Envelope{Job: "X@y", Data: json.RawMessage(`""`)}
	out, _ = json.Marshal(Document(raw, nil))
	if got := decodeJSON(t, out).(map[string]any); got["command"] != nil || got["data"] != "" || got["job"] != "X@y" {
		t.Errorf("raw document %s", out)
	}
}
