package payload

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrDecrypt is what every failed decryption is (errors.Is): a wrong key, a bad MAC or tag, a tampered
// or malformed payload. The error itself is a *DecryptError, which says which as Laravel does.
var ErrDecrypt = errors.New("the payload could not be decrypted with APP_KEY or APP_PREVIOUS_KEYS")

// DecryptError is a failed decryption. Message is what Laravel's Encrypter puts in the
// DecryptException it throws for the same payload and keys.
type DecryptError struct {
	Message string
}

// Laravel's DecryptException messages.
const (
	DecryptPayloadInvalid = "The payload is invalid."
	DecryptMACInvalid     = "The MAC is invalid."
	DecryptFailed         = "Could not decrypt the data."
	DecryptTagUnsupported = "Unable to use tag because the cipher algorithm does not support AEAD."
)

// DecryptExceptionClass is the class of the exception PHP throws for a payload it cannot decrypt.
const DecryptExceptionClass = `Illuminate\Contracts\Encryption\DecryptException`

// KeyException is the exception PHP's worker throws for an encrypted job when the app's encrypter
// cannot be made: with no APP_KEY (missing), or with one the cipher cannot use (a wrong length, bad
// base64, an unknown cipher). The class and message are those of Laravel version v.
func KeyException(v Version, missing bool) (class, message string) {
	switch {
	case missing && v.AtLeast(8, 0):
		return `Illuminate\Encryption\MissingAppKeyException`, "No application encryption key has been specified."
	case missing:
		return "RuntimeException", "No application encryption key has been specified."
	case v.AtLeast(8, 56):
		return "RuntimeException", "Unsupported cipher or incorrect key length. Supported ciphers are: aes-128-cbc, aes-256-cbc, aes-128-gcm, aes-256-gcm."
	}
	return "RuntimeException", "The only supported ciphers are AES-128-CBC and AES-256-CBC with the correct key lengths."
}

func (e *DecryptError) Error() string { return ErrDecrypt.Error() + " (" + e.Message + ")" }

// Is reports whether target is ErrDecrypt.
func (e *DecryptError) Is(target error) bool { return target == ErrDecrypt }

func decryptError(message string) error { return &DecryptError{Message: message} }

// ErrKey is wrapped by NewKeyring's errors about APP_KEY, APP_PREVIOUS_KEYS and APP_CIPHER.
var ErrKey = errors.New("invalid encryption key")

// DefaultCipher is Laravel's default app.cipher.
const DefaultCipher = "AES-256-CBC"

type cipherSpec struct {
	keyLen, ivLen int
	aead          bool
}

var ciphers = map[string]cipherSpec{
	"aes-128-cbc": {16, 16, false},
	"aes-256-cbc": {32, 16, false},
	"aes-128-gcm": {16, 12, true},
	"aes-256-gcm": {32, 12, true},
}

// Keyring decrypts and encrypts values the way Laravel's Illuminate\Encryption\Encrypter does, with the
// application key and, for decryption, the previous keys (APP_PREVIOUS_KEYS, Laravel 11+). It is safe
// for concurrent use.
type Keyring struct {
	cipher string
	spec   cipherSpec
	keys   [][]byte // the current key first
	rand   io.Reader
}

// NewKeyring builds a Keyring from Laravel's settings: appKey is APP_KEY ("base64:..." or the raw key),
// previousKeys are the entries of APP_PREVIOUS_KEYS, cipher is APP_CIPHER (AES-128-CBC, AES-256-CBC,
// AES-128-GCM or AES-256-GCM, any case; empty means AES-256-CBC). Every key must have the cipher's length.
func NewKeyring(appKey string, previousKeys []string, cipher string) (*Keyring, error) {
	if cipher == "" {
		cipher = DefaultCipher
	}
	spec, ok := ciphers[strings.ToLower(cipher)]
	if !ok {
		return nil, fmt.Errorf("APP_CIPHER %q is not supported; use AES-128-CBC, AES-256-CBC, AES-128-GCM or AES-256-GCM: %w", cipher, ErrKey)
	}
	kr := &Keyring{cipher: strings.ToUpper(cipher), spec: spec, rand: rand.Reader}
	for i, k := range append([]string{appKey}, previousKeys...) {
		name := "APP_KEY"
		if i > 0 {
			name = fmt.Sprintf("APP_PREVIOUS_KEYS entry %d", i)
		}
		key, err := parseKey(k)
		if err != nil {
			return nil, fmt.Errorf("%s: %v: %w", name, err, ErrKey)
		}
		if len(key) != spec.keyLen {
			return nil, fmt.Errorf("%s is %d bytes but %s needs %d; generate one with `php artisan key:generate --show`: %w",
				name, len(key), kr.cipher, spec.keyLen, ErrKey)
		}
		kr.keys = append(kr.keys, key)
	}
	return kr, nil
}

func parseKey(k string) ([]byte, error) {
	k = strings.TrimSpace(k)
	if k == "" {
		return nil, errors.New("is empty")
	}
	if b64, ok := strings.CutPrefix(k, "base64:"); ok {
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, errors.New("the part after base64: is not valid base64")
		}
		return key, nil
	}
	return []byte(k), nil
}

// Cipher returns the cipher name in Laravel's spelling, e.g. "AES-256-CBC".
func (kr *Keyring) Cipher() string { return kr.cipher }

// laravelEnvelope is the JSON inside Laravel's ciphertext.
type laravelEnvelope struct {
	IV    *string `json:"iv"`
	Value *string `json:"value"`
	MAC   *string `json:"mac"`
	Tag   *string `json:"tag"`
}

// Decrypt reverses Laravel's Crypt::encrypt (without the final unserialize): it reads base64(JSON{iv,
// value, mac, tag}), and for CBC checks the HMAC-SHA256 in constant time before decrypting; GCM checks
// its tag. It tries the current key, then each previous key. Every failure is a *DecryptError with
// the message Laravel's Encrypter gives, checked in its order: the payload's shape, the MAC, the tag,
// then the decryption.
func (kr *Keyring) Decrypt(payload string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, decryptError(DecryptPayloadInvalid)
	}
	var env laravelEnvelope
	if json.Unmarshal(raw, &env) != nil || env.IV == nil || env.Value == nil || env.MAC == nil {
		return nil, decryptError(DecryptPayloadInvalid)
	}
	iv, err := base64.StdEncoding.DecodeString(*env.IV)
	if err != nil || len(iv) != kr.spec.ivLen {
		return nil, decryptError(DecryptPayloadInvalid)
	}
	hasTag := env.Tag != nil && *env.Tag != "" && *env.Tag != "0" // PHP's empty()
	if !kr.spec.aead {
		var keys [][]byte // the keys the MAC is valid for
		for _, key := range kr.keys {
			want := macHex(key, *env.IV, *env.Value)
			if subtle.ConstantTimeCompare([]byte(want), []byte(*env.MAC)) == 1 {
				keys = append(keys, key)
			}
		}
		if len(keys) == 0 {
			return nil, decryptError(DecryptMACInvalid)
		}
		if hasTag {
			return nil, decryptError(DecryptTagUnsupported)
		}
		if ct, err := base64.StdEncoding.DecodeString(*env.Value); err == nil {
			for _, key := range keys {
				if pt, ok := openCBC(key, iv, ct); ok {
					return pt, nil
				}
			}
		}
		return nil, decryptError(DecryptFailed)
	}
	var tag []byte
	if hasTag {
		tag, _ = base64.StdEncoding.DecodeString(*env.Tag)
	}
	ct, err := base64.StdEncoding.DecodeString(*env.Value)
	if len(tag) != 16 || err != nil {
		return nil, decryptError(DecryptFailed)
	}
	for _, key := range kr.keys {
		if pt, ok := openGCM(key, iv, ct, tag); ok {
			return pt, nil
		}
	}
	return nil, decryptError(DecryptFailed)
}

func macHex(key []byte, iv, value string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(iv))
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil))
}

func openGCM(key, iv, ct, tag []byte) ([]byte, bool) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, false
	}
	g, err := cipher.NewGCM(block)
	if err != nil {
		return nil, false
	}
	sealed := make([]byte, 0, len(ct)+len(tag))
	sealed = append(append(sealed, ct...), tag...)
	pt, err := g.Open(nil, iv, sealed, nil)
	return pt, err == nil
}

func openCBC(key, iv, ct []byte) ([]byte, bool) {
	if len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return nil, false
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, false
	}
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(pt, ct)
	pad := int(pt[len(pt)-1])
	if pad == 0 || pad > aes.BlockSize || !bytes.Equal(pt[len(pt)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, false
	}
	return pt[:len(pt)-pad], true
}

// Encrypt writes plaintext as Laravel's Encrypter::encrypt (without its serialize step) does with the
// current key: base64 of the JSON {"iv","value","mac","tag"} in that order, slashes unescaped, a fresh
// random IV, the HMAC-SHA256 in mac for CBC and the GCM tag in tag.
func (kr *Keyring) Encrypt(plaintext []byte) (string, error) {
	iv := make([]byte, kr.spec.ivLen)
	if _, err := io.ReadFull(kr.rand, iv); err != nil {
		return "", fmt.Errorf("encrypt: read random IV: %w", err)
	}
	key := kr.keys[0]
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", fmt.Errorf("encrypt: %w", err)
	}
	var ct, tag []byte
	if kr.spec.aead {
		g, err := cipher.NewGCM(block)
		if err != nil {
			return "", fmt.Errorf("encrypt: %w", err)
		}
		sealed := g.Seal(nil, iv, plaintext, nil)
		ct, tag = sealed[:len(sealed)-g.Overhead()], sealed[len(sealed)-g.Overhead():]
	} else {
		pad := aes.BlockSize - len(plaintext)%aes.BlockSize
		ct = make([]byte, len(plaintext)+pad)
		copy(ct, plaintext)
		for i := len(plaintext); i < len(ct); i++ {
			ct[i] = byte(pad)
		}
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, ct)
	}
	ivB64 := base64.StdEncoding.EncodeToString(iv)
	valB64 := base64.StdEncoding.EncodeToString(ct)
	mac := ""
	if !kr.spec.aead {
		mac = macHex(key, ivB64, valB64)
	}
	// Base64 and hex need no JSON escaping, so the document can be written directly.
	js := `{"iv":"` + ivB64 + `","value":"` + valB64 + `","mac":"` + mac + `","tag":"` + base64.StdEncoding.EncodeToString(tag) + `"}`
	return base64.StdEncoding.EncodeToString([]byte(js)), nil
}

// ErrNoCommand is returned by DecodeCommand for a raw job, which has no serialized command.
var ErrNoCommand = errors.New("raw job has no serialized command")

// ErrNotEncrypted is wrapped by DecodeCommand's error for a data.command that is neither a serialized
// object nor Laravel's encryption (a damaged or truncated one): PHP's worker tries to decrypt it and
// throws DecryptException's "The payload is invalid.".
var ErrNotEncrypted = errors.New("data.command is not encrypted by Laravel")

// ErrNoKeyring is returned by DecodeCommand when data.command is encrypted and no Keyring was given.
var ErrNoKeyring = errors.New("data.command is encrypted (ShouldBeEncrypted); set APP_KEY (and APP_PREVIOUS_KEYS, APP_CIPHER) to decrypt it")

// DecodeCommand returns the job's command object from data.command: unserialized directly when it is
// plain ("O:..."), or decrypted with kr and then unserialized twice (Laravel encrypts the serialized
// command as a serialized string). kr may be nil when the command is not encrypted.
func DecodeCommand(env *Envelope, kr *Keyring, opts ...Option) (*Object, error) {
	if env.IsRaw() {
		return nil, ErrNoCommand
	}
	cmd := env.Command
	if env.CommandEncrypted() {
		if !looksEncrypted(cmd) {
			return nil, fmt.Errorf("decode data.command: %.40q is neither a serialized PHP object (O:…) nor encrypted by Laravel (base64 of {\"iv\", \"value\", …}): %w: %w", cmd, ErrNotEncrypted, ErrSyntax)
		}
		if kr == nil {
			return nil, ErrNoKeyring
		}
		pt, err := kr.Decrypt(env.Command)
		if err != nil {
			return nil, fmt.Errorf("decrypt data.command: %w", err)
		}
		inner, err := Unserialize(pt, opts...)
		if err != nil {
			return nil, fmt.Errorf("decode decrypted data.command: %w", err)
		}
		s, ok := inner.(string)
		if !ok {
			return nil, fmt.Errorf("decode decrypted data.command: got %s, want a serialized string: %w", typeName(inner), ErrSyntax)
		}
		cmd = s
	}
	v, err := unserializeString(cmd, opts...)
	if err != nil {
		return nil, fmt.Errorf("decode data.command: %w", err)
	}
	obj, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("decode data.command: got %s, want an object: %w", typeName(v), ErrSyntax)
	}
	return obj, nil
}

// looksEncrypted reports whether s has the shape of Laravel's Encrypter output: base64 of a JSON
// object with iv and value. Only then is a wrong key the likely reason it does not decrypt.
func looksEncrypted(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return false
	}
	var doc struct {
		IV    *string `json:"iv"`
		Value *string `json:"value"`
	}
	return json.Unmarshal(b, &doc) == nil && doc.IV != nil && doc.Value != nil
}

// EncryptCommand serializes cmd and encrypts it as Laravel does for a ShouldBeEncrypted job, giving the
// value for data.command.
func EncryptCommand(cmd *Object, kr *Keyring) (string, error) {
	ser, err := Serialize(cmd)
	if err != nil {
		return "", fmt.Errorf("encrypt command: %w", err)
	}
	inner, _ := Serialize(string(ser))
	return kr.Encrypt(inner)
}

// typeName names the PHP type of a value for error messages.
func typeName(v Value) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a bool"
	case int64:
		return "an int"
	case float64:
		return "a float"
	case string:
		return "a string"
	case *Array:
		return "an array"
	case *Object:
		return "an object of class " + v.Class
	case *Enum:
		return "enum " + v.Class
	case *Custom:
		return "a Serializable " + v.Class
	}
	return fmt.Sprintf("%T", v)
}
