package worker

import (
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/artisan-go/artisan-go/payload"
)

// newJobPayload writes a new envelope for a command as Laravel's Queue::createPayload does for the
// configured version: the keys in PHP's insertion order and json_encode's escaping (slashes escaped,
// non-ASCII escaped before 8.82). Values PHP computes from methods (displayName(), backoff(),
// retryUntil()) are read from the properties of the same name when present.
func (w *Worker) newJobPayload(cmd *payload.Object, now time.Time, delay int64) ([]byte, error) {
	ser, err := payload.Serialize(cmd)
	if err != nil {
		return nil, fmt.Errorf("serialize %s: %w", cmd.Class, err)
	}
	v := w.version
	e := &phpJSON{unescapedUnicode: v.AtLeast(8, 82)}
	prop := func(name string) payload.Value { x, _ := cmd.Get(name); return x }
	e.open('{')
	if v.AtLeast(7, 0) {
		e.key("uuid")
		e.str(newUUID())
	}
	e.key("displayName")
	e.str(cmd.Class)
	e.key("job")
	e.str(`Illuminate\Queue\CallQueuedHandler@call`)
	e.key("maxTries")
	e.scalar(prop("tries"))
	if v.AtLeast(7, 0) {
		e.key("maxExceptions")
		e.scalar(prop("maxExceptions"))
	}
	if v.AtLeast(5, 8) && !v.AtLeast(8, 0) {
		e.key("delay")
		e.scalar(prop("retryAfter"))
	}
	if v.AtLeast(8, 43) {
		e.key("failOnTimeout")
		f := prop("failOnTimeout")
		if f == nil {
			f = false
		}
		e.scalar(f)
	}
	if v.AtLeast(8, 0) {
		e.key("backoff")
		e.scalar(backoffString(prop("backoff")))
	}
	e.key("timeout")
	e.scalar(prop("timeout"))
	if v.AtLeast(8, 0) {
		e.key("retryUntil")
	} else if v.AtLeast(5, 5) {
		e.key("timeoutAt")
	}
	if v.AtLeast(5, 5) {
		if t, ok := prop("retryUntil").(int64); ok {
			e.scalar(t)
		} else {
			e.scalar(nil)
		}
	}
	e.key("data")
	e.open('{')
	e.key("commandName")
	e.str(cmd.Class)
	e.key("command")
	e.str(string(ser))
	if v.AtLeast(12, 51) {
		e.key("batchId")
		e.scalar(prop("batchId"))
	}
	e.close('}')
	if v.AtLeast(12, 11) {
		e.key("createdAt")
		e.scalar(now.Unix())
		e.key("delay")
		if delay > 0 {
			e.scalar(delay)
		} else {
			e.scalar(nil)
		}
	}
	e.close('}')
	return []byte(e.b.String()), nil
}

// backoffString is Laravel's getJobBackoff: an array joined with commas, a number as its string.
func backoffString(v payload.Value) payload.Value {
	switch v := v.(type) {
	case *payload.Array:
		parts := make([]string, 0, v.Len())
		for _, x := range v.Values() {
			parts = append(parts, phpString(x))
		}
		return strings.Join(parts, ",")
	case int64, float64, string:
		return phpString(v)
	}
	return nil
}

// newUUID returns a random (version 4) UUID as Str::uuid does.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0xf])
	}
	return string(out)
}

// phpJSON writes JSON the way PHP's json_encode does with default flags (plus JSON_UNESCAPED_UNICODE
// when set).
type phpJSON struct {
	b                strings.Builder
	first            bool
	unescapedUnicode bool
}

func (e *phpJSON) open(c byte) { e.b.WriteByte(c); e.first = true }

func (e *phpJSON) close(c byte) { e.b.WriteByte(c); e.first = false }

func (e *phpJSON) key(k string) {
	if !e.first {
		e.b.WriteByte(',')
	}
	e.first = false
	e.str(k)
	e.b.WriteByte(':')
}

func (e *phpJSON) scalar(v payload.Value) {
	switch v := v.(type) {
	case nil:
		e.b.WriteString("null")
	case bool:
		e.b.WriteString(strconv.FormatBool(v))
	case int64:
		e.b.WriteString(strconv.FormatInt(v, 10))
	case int:
		e.b.WriteString(strconv.Itoa(v))
	case float64:
		e.b.WriteString(strconv.FormatFloat(v, 'g', 17, 64))
	case string:
		e.str(v)
	default:
		e.b.WriteString("null")
	}
}

func (e *phpJSON) str(s string) {
	b := &e.b
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '/':
			b.WriteString(`\/`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(b, `\u%04x`, c)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b.WriteString(`\ufffd`) // PHP rejects invalid UTF-8; substitute as JSON_INVALID_UTF8_SUBSTITUTE would
			case e.unescapedUnicode && r != 0x2028 && r != 0x2029:
				b.WriteString(s[i : i+size])
			case r > 0xffff:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			default:
				fmt.Fprintf(b, `\u%04x`, r)
			}
			i += size
			continue
		}
		i++
	}
	b.WriteByte('"')
}
