package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/fixtures"
)

func decodeNumbers(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("output %q is not one JSON object: %v", b, err)
	}
	if d.More() {
		t.Fatalf("output %q holds more than one JSON value", b)
	}
	return m
}

// TestPayloadDecodeGolden runs the command on every Laravel 8.83 fixture and compares its output with
// PHP's reading of the command in NAME.decoded.json and with the payload's envelope keys.
func TestPayloadDecodeGolden(t *testing.T) {
	t.Setenv("APP_KEY", "")
	os.Unsetenv("APP_KEY")
	envFile := filepath.Join(t.TempDir(), ".env")
	dotenv := "APP_NAME=Laravel\n# the key\nAPP_KEY=\"" + fixtures.AppKey + "\"\nAPP_CIPHER='AES-256-CBC' \n"
	if err := os.WriteFile(envFile, []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, f := range fixtures.Laravel883() {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := []string{"payload:decode", "-", "--env-file", envFile}
			if code := Do(context.Background(), args, bytes.NewReader(f.Payload), &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			got := decodeNumbers(t, out.Bytes())
			for k, want := range decodeNumbers(t, f.Decoded) {
				if !reflect.DeepEqual(got[k], want) {
					t.Errorf("%q differs\n got: %v\nwant: %v", k, got[k], want)
				}
			}
			for k, want := range decodeNumbers(t, f.Payload) {
				if k != "data" && !reflect.DeepEqual(got[k], want) {
					t.Errorf("envelope key %q: got %v, want %v", k, got[k], want)
				}
			}
		})
	}
}

func TestPayloadDecodeFileAndEnv(t *testing.T) {
	f := fixtures.Laravel883()["secret"]
	path := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(path, f.Payload, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("APP_KEY", fixtures.AppKey)
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"payload:decode", path}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"token":"s3cr3t-token"`) {
		t.Errorf("output %s", out.String())
	}
}

func TestPayloadDecodeDamaged(t *testing.T) {
	t.Setenv("APP_KEY", "base64:"+strings.Repeat("A", 43)+"=")
	secret := fixtures.Laravel883()["secret"].Payload
	tests := []struct {
		name, in, want string
	}{
		{"not json", `{"job":`, "invalid job payload"},
		{"no command", `{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"A"}}`, `"data.command" is missing`},
		{"truncated", `{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"command":"O:1:\"A\":1:{s:1:\"x\";"}}`, "at offset 19"},
		{"bad length", `{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"command":"O:1:\"A\":1:{s:5:\"x\";N;}"}}`, "at offset 21"},
		{"wrong key", string(secret), "could not be decrypted"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := Do(context.Background(), []string{"payload:decode"}, strings.NewReader(tt.in), &out, &errb)
		lines := strings.Split(strings.TrimRight(errb.String(), "\n"), "\n")
		if code == 0 || out.Len() != 0 || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want one line with %q", tt.name, code, out.String(), errb.String(), tt.want)
		}
	}
	// Without APP_KEY, a command in neither form is still damaged, not a missing key.
	t.Setenv("APP_KEY", "")
	var errb bytes.Buffer
	in := `{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"A","command":"a:-1:{}"}}`
	if code := Do(context.Background(), []string{"payload:decode"}, strings.NewReader(in), &bytes.Buffer{}, &errb); code != 1 || !strings.Contains(errb.String(), "neither a serialized PHP object") {
		t.Errorf("damaged command without APP_KEY: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := Do(context.Background(), []string{"payload:decode", "--bogus"}, nil, &bytes.Buffer{}, &errb); code != 2 {
		t.Errorf("unknown option: exit %d", code)
	}
	if code := Do(context.Background(), []string{"payload:decode", "/no/such/file"}, nil, &bytes.Buffer{}, &errb); code != 1 {
		t.Errorf("missing file: exit %d", code)
	}
}

func TestPayloadDecodeDamagedEnvFile(t *testing.T) {
	t.Setenv("APP_KEY", "")
	os.Unsetenv("APP_KEY")
	envFile := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(envFile, []byte("APP_NAME=\"bad \\q escape\"\nAPP_KEY=base64:x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	in := bytes.NewReader(fixtures.Laravel883()["secret"].Payload)
	code := Do(context.Background(), []string{"payload:decode", "-", "--env-file", envFile}, in, &out, &errb)
	msg := errb.String()
	if code == 0 || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q; want a failure and no output", code, out.String())
	}
	if strings.Count(strings.TrimSpace(msg), "\n") != 0 || !strings.Contains(msg, envFile) {
		t.Fatalf("stderr %q: want one line naming %s", msg, envFile)
	}
}
