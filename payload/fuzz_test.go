package payload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/fixtures"
)

func seedCommands(f *testing.F) {
	for _, fx := range fixtures.Laravel883() {
		if env, err := ParseEnvelope(fx.Payload); err == nil && !env.IsRaw() && !env.CommandEncrypted() {
			f.Add([]byte(env.Command))
		}
	}
	for _, s := range []string{`a:2:{i:0;s:1:"v";i:1;R:2;}`, `E:6:"A\B:C;";`, `C:1:"A":2:{xy}`, `d:-1.5E-7;`, `O:1:"A":1:{i:0;r:1;}`} {
		f.Add([]byte(s))
	}
}

// FuzzUnserialize checks that Unserialize never panics, and that whatever it accepts Serialize writes
// in a form that reads back and writes again to the same bytes.
func FuzzUnserialize(f *testing.F) {
	seedCommands(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := Unserialize(in, WithMaxDepth(64))
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("error %T is not a *SyntaxError", err)
			}
			return
		}
		out, err := Serialize(v)
		if err != nil {
			t.Fatalf("accepted %q but cannot write it: %v", in, err)
		}
		v2, err := Unserialize(out, WithMaxDepth(64))
		if err != nil {
			t.Fatalf("wrote %q from %q, which does not read back: %v", out, in, err)
		}
		out2, _ := Serialize(v2)
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable: %q then %q", out, out2)
		}
		if js := CanonicalJSON(v); !json.Valid(js) {
			t.Fatalf("canonical JSON %q is not valid", js)
		}
	})
}

// FuzzParseEnvelope checks that reading and describing any payload never panics.
func FuzzParseEnvelope(f *testing.F) {
	for _, fx := range fixtures.Laravel883() {
		f.Add(fx.Payload)
	}
	for _, s := range []string{
		`{"job":"A\u00e9\ud83d\ude00\ud800x\/\"","job":"B\\@c","data":[1,{"a":"}"}],"x":{"y":[]} }`,
		` {"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"command":"O:1:\"A\":0:{}","command":"x\u0000\n"},"maxTries":"7"}`,
		"{\"job\":\"\xff\xfe\",\"uuid\":\"\u00e9\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		env, err := ParseEnvelope(in)
		agreeWithEncodingJSON(t, in, env, err)
		if err != nil {
			return
		}
		if !bytes.Equal(env.Raw, in) {
			t.Fatal("Raw is not the input")
		}
		env.RawTarget()
		env.BackoffSpec()
		env.RetryDeadline()
		var cmd Value
		if !env.IsRaw() && !env.CommandEncrypted() {
			if obj, err := DecodeCommand(env, nil); err == nil {
				cmd = obj
			}
		}
		if _, err := json.Marshal(Document(env, cmd)); err != nil {
			t.Fatalf("document does not marshal: %v", err)
		}
	})
}

// FuzzDecrypt checks that Decrypt never panics and that every failure is the one ErrDecrypt.
func FuzzDecrypt(f *testing.F) {
	env, _ := ParseEnvelope(fixtures.Laravel883()["secret"].Payload)
	f.Add(uint8(1), env.Command)
	raw, _ := base64.StdEncoding.DecodeString(env.Command)
	f.Add(uint8(1), string(raw))
	f.Add(uint8(3), base64.StdEncoding.EncodeToString([]byte(`{"iv":"AAAAAAAAAAAAAAAA","value":"AAAA","mac":"","tag":"AAAAAAAAAAAAAAAAAAAAAA=="}`)))
	keys := []string{
		"base64:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 16))),
		fixtures.AppKey,
	}
	var rings []*Keyring
	for _, c := range []string{"AES-128-CBC", "AES-256-CBC", "AES-128-GCM", "AES-256-GCM"} {
		key := keys[0]
		if strings.Contains(c, "256") {
			key = keys[1]
		}
		kr, err := NewKeyring(key, nil, c)
		if err != nil {
			f.Fatal(err)
		}
		rings = append(rings, kr)
	}
	f.Fuzz(func(t *testing.T, which uint8, in string) {
		kr := rings[int(which)%len(rings)]
		pt, err := kr.Decrypt(in)
		if err != nil && !errors.Is(err, ErrDecrypt) {
			t.Fatalf("error %v is not ErrDecrypt", err)
		}
		if err == nil {
			ct, err := kr.Encrypt(pt)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := kr.Decrypt(ct); err != nil || !bytes.Equal(back, pt) {
				t.Fatalf("re-encrypted plaintext does not decrypt: %v", err)
			}
		}
	})
}

// agreeWithEncodingJSON checks ParseEnvelope's own JSON scanning against encoding/json: the same
// documents are objects, and the same strings and unknown keys come out.
func agreeWithEncodingJSON(t *testing.T, in []byte, env *Envelope, err error) {
	t.Helper()
	var top map[string]json.RawMessage
	stdErr := json.Unmarshal(in, &top)
	if stdErr != nil || top == nil {
		if err == nil {
			t.Fatalf("accepted %q, which encoding/json rejects: %v", in, stdErr)
		}
		return
	}
	if err != nil {
		var ee *EnvelopeError
		if !errors.As(err, &ee) || ee.Key == "" {
			t.Fatalf("rejected the JSON object %q: %v", in, err)
		}
		return
	}
	str := func(v json.RawMessage) string {
		var s string
		_ = json.Unmarshal(v, &s)
		return s
	}
	if str(top["uuid"]) != env.UUID || str(top["displayName"]) != env.DisplayName || str(top["job"]) != env.Job {
		t.Fatalf("strings differ from encoding/json for %q: %q %q %q", in, env.UUID, env.DisplayName, env.Job)
	}
	if !env.IsRaw() {
		var data map[string]json.RawMessage
		_ = json.Unmarshal(top["data"], &data)
		if str(data["command"]) != env.Command || str(data["commandName"]) != env.CommandName {
			t.Fatalf("data differs from encoding/json for %q", in)
		}
	}
	for k, v := range env.Extra {
		if !bytes.Equal(bytes.TrimSpace(top[k]), v) {
			t.Fatalf("extra key %q: %q, encoding/json has %q", k, v, top[k])
		}
	}
}
