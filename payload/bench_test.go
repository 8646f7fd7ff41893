package payload

import (
	"fmt"
	"sort"
	"testing"

	"github.com/elliotchance/phpserialize"

	"github.com/artisan-go/artisan-go/fixtures"
)

// benchCommands returns each fixture's serialized command (decrypted for `secret`), by name.
func benchCommands(b *testing.B) ([]string, map[string][]byte) {
	kr, err := NewKeyring(fixtures.AppKey, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	out := map[string][]byte{}
	for name, f := range fixtures.Laravel883() {
		env, err := ParseEnvelope(f.Payload)
		if err != nil {
			b.Fatal(err)
		}
		if env.IsRaw() {
			continue
		}
		cmd := []byte(env.Command)
		if env.CommandEncrypted() {
			pt, err := kr.Decrypt(env.Command)
			if err != nil {
				b.Fatal(err)
			}
			v, _ := Unserialize(pt)
			cmd = []byte(v.(string))
		}
		out[name] = cmd
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, out
}

// elliotchanceDecode decodes a serialized object generically with github.com/elliotchance/phpserialize,
// which only reads a top-level object into a Go struct: the object is wrapped in a one-element array so
// that it is read into a map like any nested object. Its panics are returned as errors.
func elliotchanceDecode(cmd []byte) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	wrapped := make([]byte, 0, len(cmd)+12)
	wrapped = append(append(append(wrapped, "a:1:{i:0;"...), cmd...), '}')
	return phpserialize.UnmarshalAssociativeArray(wrapped)
}

// BenchmarkUnserialize decodes each fixture's command with this package and, beside it, with
// elliotchance/phpserialize v1.4.0 doing the same work where it can; the inputs it cannot read are
// skipped with its error.
func BenchmarkUnserialize(b *testing.B) {
	names, cmds := benchCommands(b)
	for _, name := range names {
		cmd := cmds[name]
		b.Run(name+"/payload", func(b *testing.B) {
			b.SetBytes(int64(len(cmd)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Unserialize(cmd); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/elliotchance", func(b *testing.B) {
			if _, err := elliotchanceDecode(cmd); err != nil {
				b.Skipf("elliotchance/phpserialize cannot decode %s: %v", name, err)
			}
			b.SetBytes(int64(len(cmd)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = elliotchanceDecode(cmd)
			}
		})
	}
}

// BenchmarkSerialize writes each fixture's decoded command back.
func BenchmarkSerialize(b *testing.B) {
	names, cmds := benchCommands(b)
	for _, name := range names {
		v, err := Unserialize(cmds[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Serialize(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeJob is what a worker does per job: read the envelope and decode (and for `secret`
// decrypt) the command.
func BenchmarkDecodeJob(b *testing.B) {
	kr, _ := NewKeyring(fixtures.AppKey, nil, "")
	for _, name := range []string{"welcome", "podcast", "secret"} {
		raw := fixtures.Laravel883()[name].Payload
		b.Run(name, func(b *testing.B) { benchDecode(b, raw, kr) })
	}
}

// benchDecode reads the envelope raw and decodes its command with kr, b.N times.
func benchDecode(b *testing.B, raw []byte, kr *Keyring) {
	b.ReportAllocs()
	for b.Loop() {
		env, err := ParseEnvelope(raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeCommand(env, kr); err != nil {
			b.Fatal(err)
		}
	}
}

// noopPayload builds the payload of a job that does nothing, App\Jobs\Noop(0), as Laravel 8.83
// dispatches it: the job's own public $n, then the Queueable and InteractsWithQueue properties.
func noopPayload(b *testing.B) []byte {
	cmd := NewObject(`App\Jobs\Noop`).Set("n", int64(0))
	for _, name := range []string{"job", "connection", "queue", "chainConnection", "chainQueue", "chainCatchCallbacks", "delay", "afterCommit"} {
		cmd.Set(name, nil)
	}
	cmd.Set("middleware", &Array{})
	cmd.Set("chained", &Array{})
	raw, err := NewJobPayload(JobPayloadParams{LaravelVersion: "8.83", Command: cmd})
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// benchPayload returns the fixture called name, or the no-op job's payload for "noop".
func benchPayload(b *testing.B, name string) []byte {
	if name == "noop" {
		return noopPayload(b)
	}
	return fixtures.Laravel883()[name].Payload
}

// BenchmarkDecodeCommand reads each unencrypted object job's envelope and decodes its command, as a
// worker does per job without a keyring.
func BenchmarkDecodeCommand(b *testing.B) {
	for _, name := range []string{"noop", "welcome", "podcast"} {
		raw := benchPayload(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			benchDecode(b, raw, nil)
		})
	}
}

// BenchmarkParseEnvelope reads each fixture's envelope and the no-op job's.
func BenchmarkParseEnvelope(b *testing.B) {
	for _, name := range []string{"noop", "welcome", "podcast", "raw"} {
		raw := benchPayload(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseEnvelope(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
