package payload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/fixtures"
)

const pingCommand = `O:8:"App\Ping":1:{s:1:"n";i:1;}`

type cryptCase struct{ cipher, key, ciphertext string }

// cryptCases reads crypt.txt, written by Laravel's own Encrypter (make-crypt.php).
func cryptCases(t *testing.T) []cryptCase {
	t.Helper()
	b, err := os.ReadFile("testdata/crypt.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []cryptCase
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		out = append(out, cryptCase{f[0], f[1], f[2]})
	}
	return out
}

func wantPlaintext() []byte {
	b, _ := Serialize(pingCommand)
	return b
}

func TestDecryptLaravelCiphertexts(t *testing.T) {
	for _, c := range cryptCases(t) {
		kr, err := NewKeyring(c.key, nil, strings.ToLower(c.cipher))
		if err != nil {
			t.Fatal(err)
		}
		pt, err := kr.Decrypt(c.ciphertext)
		if err != nil || !bytes.Equal(pt, wantPlaintext()) {
			t.Errorf("%s: %q, %v", c.cipher, pt, err)
		}
		// The same key as a previous key, after a wrong current one.
		other := "base64:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, len(mustKey(t, c.key))))
		kr2, err := NewKeyring(other, []string{c.key}, c.cipher)
		if err != nil {
			t.Fatal(err)
		}
		if pt, err := kr2.Decrypt(c.ciphertext); err != nil || !bytes.Equal(pt, wantPlaintext()) {
			t.Errorf("%s with a previous key: %v", c.cipher, err)
		}
		wrong, _ := NewKeyring(other, nil, c.cipher)
		if _, err := wrong.Decrypt(c.ciphertext); !errors.Is(err, ErrDecrypt) {
			t.Errorf("%s with a wrong key: %v", c.cipher, err)
		}
	}
}

func mustKey(t *testing.T, k string) []byte {
	key, err := parseKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestDecryptTampered decrypts damaged payloads and payloads under a wrong key; each fails with the
// DecryptException message Laravel's Encrypter gives for it, compared with PHP's own when it is here.
func TestDecryptTampered(t *testing.T) {
	php, autoload := phpEncrypter(t)
	for _, c := range cryptCases(t) {
		kr, _ := NewKeyring(c.key, nil, c.cipher)
		raw, _ := base64.StdEncoding.DecodeString(c.ciphertext)
		var env map[string]string
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		mutate := func(field, val string) string {
			m := map[string]string{}
			for k, v := range env {
				m[k] = v
			}
			m[field] = val
			b, _ := json.Marshal(m)
			return base64.StdEncoding.EncodeToString(b)
		}
		flip := func(s string) string {
			b, _ := base64.StdEncoding.DecodeString(s)
			b[len(b)-1] ^= 1
			return base64.StdEncoding.EncodeToString(b)
		}
		other := "base64:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, len(mustKey(t, c.key))))
		wrong, _ := NewKeyring(other, nil, c.cipher)
		type bad struct {
			kr      *Keyring
			key     string
			payload string
			want    string
		}
		invalid, mac, failed := DecryptPayloadInvalid, DecryptMACInvalid, DecryptFailed
		if env["mac"] == "" {
			mac = failed // GCM: no MAC; a changed value or iv fails the tag
		}
		cases := []bad{
			{kr, c.key, "", invalid},
			{kr, c.key, "not base64!", invalid},
			{kr, c.key, base64.StdEncoding.EncodeToString([]byte("[]")), invalid},
			{kr, c.key, base64.StdEncoding.EncodeToString([]byte(`{"iv":1}`)), invalid},
			{kr, c.key, mutate("value", flip(env["value"])), mac},
			{kr, c.key, mutate("iv", flip(env["iv"])), mac},
			{kr, c.key, mutate("iv", base64.StdEncoding.EncodeToString([]byte("short"))), invalid},
			{kr, c.key, mutate("value", ""), mac},
			{wrong, other, c.ciphertext, mac},
		}
		if env["mac"] != "" {
			cases = append(cases,
				bad{kr, c.key, mutate("mac", strings.Repeat("0", 64)), mac},
				bad{kr, c.key, mutate("tag", base64.StdEncoding.EncodeToString(make([]byte, 16))), DecryptTagUnsupported})
		} else {
			cases = append(cases,
				bad{kr, c.key, mutate("tag", flip(env["tag"])), failed},
				bad{kr, c.key, mutate("tag", ""), failed},
				bad{kr, c.key, mutate("tag", "AAAA"), failed})
		}
		for i, b := range cases {
			_, err := b.kr.Decrypt(b.payload)
			var de *DecryptError
			if !errors.Is(err, ErrDecrypt) || !errors.As(err, &de) || de.Message != b.want {
				t.Errorf("%s case %d: %v, want %q", c.cipher, i, err, b.want)
			}
			if php == "" {
				continue
			}
			script := `require '` + autoload + `'; $e = new Illuminate\Encryption\Encrypter(base64_decode(substr($argv[1], 7)), $argv[2]);
				try { $e->decrypt($argv[3], false); echo "decrypted"; } catch (Throwable $x) { echo get_class($x), ": ", $x->getMessage(); }`
			out, err := exec.Command(php, "-r", script, b.key, c.cipher, b.payload).CombinedOutput()
			if want := DecryptExceptionClass + ": " + b.want; err != nil || string(out) != want {
				t.Errorf("%s case %d: PHP says %q (%v), want %q", c.cipher, i, out, err, want)
			}
		}
	}
}

// phpEncrypter returns the php binary and Laravel's Encrypter's autoloader, or "" when they are
// missing (a failure with ARTISAN_GO_REQUIRE_ALL=1).
func phpEncrypter(t *testing.T) (php, autoload string) {
	autoload = "/usr/share/php/Illuminate/Encryption/autoload.php"
	php, err := exec.LookPath("php")
	if _, serr := os.Stat(autoload); err != nil || serr != nil {
		// internal/testenv.Missing does this too; it is not imported so that the fuzzing build of this
		// package stays free of the database drivers.
		msg := "php with Laravel's Encrypter (" + autoload + ") is missing; install php-cli and php-laravel-framework"
		if os.Getenv("ARTISAN_GO_REQUIRE_ALL") == "1" {
			t.Fatal(msg)
		}
		t.Log(msg)
		return "", ""
	}
	return php, autoload
}

func TestEncryptRoundTrip(t *testing.T) {
	for _, c := range cryptCases(t) {
		kr, _ := NewKeyring(c.key, nil, c.cipher)
		ct, err := kr.Encrypt(wantPlaintext())
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.StdEncoding.DecodeString(ct)
		if !bytes.HasPrefix(raw, []byte(`{"iv":"`)) || !bytes.Contains(raw, []byte(`","value":"`)) || !bytes.Contains(raw, []byte(`","mac":"`)) || !bytes.Contains(raw, []byte(`","tag":"`)) {
			t.Errorf("%s: layout %s", c.cipher, raw)
		}
		if pt, err := kr.Decrypt(ct); err != nil || !bytes.Equal(pt, wantPlaintext()) {
			t.Errorf("%s: %v", c.cipher, err)
		}
	}
}

// TestEncryptReadByLaravel has Laravel's own Encrypter decrypt what Keyring.Encrypt wrote.
func TestEncryptReadByLaravel(t *testing.T) {
	php, autoload := phpEncrypter(t)
	if php == "" {
		t.Skip("no PHP")
	}
	for _, c := range cryptCases(t) {
		kr, _ := NewKeyring(c.key, nil, c.cipher)
		obj, _ := Unserialize([]byte(pingCommand))
		ct, err := EncryptCommand(obj.(*Object), kr)
		if err != nil {
			t.Fatal(err)
		}
		script := `require '` + autoload + `'; $e = new Illuminate\Encryption\Encrypter(base64_decode(substr($argv[1], 7)), $argv[2]); echo $e->decrypt($argv[3]);`
		out, err := exec.Command(php, "-r", script, c.key, c.cipher, ct).CombinedOutput()
		if err != nil || string(out) != pingCommand {
			t.Errorf("%s: PHP read %q (%v)", c.cipher, out, err)
		}
	}
}

func TestDecodeCommand(t *testing.T) {
	kr, err := NewKeyring(fixtures.AppKey, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	env, _ := ParseEnvelope(fixtures.Laravel883()["secret"].Payload)
	if _, err := DecodeCommand(env, nil); !errors.Is(err, ErrNoKeyring) {
		t.Errorf("no keyring: %v", err)
	}
	obj, err := DecodeCommand(env, kr)
	if err != nil {
		t.Fatal(err)
	}
	if tok, _ := obj.Get("token"); obj.Class != `App\Jobs\SecretJob` || tok != "s3cr3t-token" {
		t.Errorf("secret command %s %v", obj.Class, tok)
	}
	wrong, _ := NewKeyring("base64:"+base64.StdEncoding.EncodeToString(make([]byte, 32)), nil, "")
	if _, err := DecodeCommand(env, wrong); !errors.Is(err, ErrDecrypt) {
		t.Errorf("wrong key: %v", err)
	}
	// A command that is neither serialized nor in the Encrypter's form is damaged, not a key problem.
	for _, cmd := range []string{"this is not php serialize", "N;", "a:0:{}", base64.StdEncoding.EncodeToString([]byte(`{"x":1}`))} {
		damaged := *env
		damaged.Command = cmd
		_, err := DecodeCommand(&damaged, kr)
		if !errors.Is(err, ErrSyntax) || errors.Is(err, ErrDecrypt) || !strings.Contains(err.Error(), "neither a serialized PHP object") {
			t.Errorf("command %q: %v, want a syntax error saying it is neither serialized nor encrypted", cmd, err)
		}
		if _, err := DecodeCommand(&damaged, nil); errors.Is(err, ErrNoKeyring) {
			t.Errorf("command %q without a keyring: %v, want no mention of APP_KEY", cmd, err)
		}
	}
	raw, _ := ParseEnvelope(fixtures.Laravel883()["raw"].Payload)
	if _, err := DecodeCommand(raw, kr); !errors.Is(err, ErrNoCommand) {
		t.Errorf("raw: %v", err)
	}
	// An encrypted command that holds something other than a serialized string.
	ct, _ := kr.Encrypt([]byte("i:5;"))
	if _, err := DecodeCommand(&Envelope{Job: CallQueuedHandler, Command: ct}, kr); !errors.Is(err, ErrSyntax) {
		t.Errorf("encrypted int: %v", err)
	}
	if _, err := DecodeCommand(&Envelope{Job: CallQueuedHandler, Command: "O:1:\"A\":0:{}x"}, nil); !errors.Is(err, ErrSyntax) {
		t.Errorf("trailing data: %v", err)
	}
}

func TestNewKeyringErrors(t *testing.T) {
	for _, tt := range []struct{ key, cipher string }{
		{"", ""},
		{"base64:%%%", ""},
		{"base64:" + base64.StdEncoding.EncodeToString(make([]byte, 16)), "AES-256-CBC"},
		{"short", "aes-128-cbc"},
		{fixtures.AppKey, "AES-192-CBC"},
	} {
		if _, err := NewKeyring(tt.key, nil, tt.cipher); !errors.Is(err, ErrKey) {
			t.Errorf("%q %q: %v", tt.key, tt.cipher, err)
		}
	}
	if _, err := NewKeyring(fixtures.AppKey, []string{"base64:AAAA"}, ""); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "APP_PREVIOUS_KEYS") {
		t.Errorf("bad previous key: %v", err)
	}
	kr, err := NewKeyring("0123456789abcdef0123456789abcdef", nil, "aes-256-gcm")
	if err != nil || kr.Cipher() != "AES-256-GCM" {
		t.Errorf("raw 32-byte key: %v", err)
	}
}
