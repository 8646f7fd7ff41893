package payload

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// CanonicalJSON writes a decoded value in the canonical JSON form artisan-go prints (and that the
// fixtures' NAME.decoded.json files hold):
//
//   - an object is a JSON object with "@class" first, then one key per property in order, without
//     visibility mangling; a private property declared by another class (an ancestor) is keyed
//     "Ancestor\Class::name";
//   - an enum case is {"@enum": "Class", "case": "Name"}; a Serializable object is
//     {"@class": "Class", "@serialized": "data"};
//   - an array with the keys 0..n-1 in order is a JSON array, any other array a JSON object;
//   - back-references appear as the value they point to; a cycle back to an enclosing object or array
//     is {"@recursion": "Class"} (or "array");
//   - an integral float keeps a fraction ("0.0", "3.0"), so floats stay floats; NAN, INF and -INF, which
//     JSON cannot hold, are the strings "NAN", "INF" and "-INF";
//   - strings are written as UTF-8; bytes that are not valid UTF-8 become U+FFFD.
//
// Back-references can make a small input stand for an exponentially large tree, so the output is capped
// at CanonicalLimit bytes: past it, each remaining value is written as the string "@truncated".
func CanonicalJSON(v Value) []byte {
	return appendCanonical(make([]byte, 0, 256), v, nil)
}

func onStack(stack []any, p any) bool {
	for _, s := range stack {
		if s == p {
			return true
		}
	}
	return false
}

// CanonicalLimit is the size past which CanonicalJSON stops expanding values.
const CanonicalLimit = 32 << 20

func appendCanonical(b []byte, v Value, stack []any) []byte {
	if len(b) > CanonicalLimit {
		return append(b, `"@truncated"`...)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case float64:
		return appendJSONFloat(b, x)
	case string:
		return appendJSONString(b, x)
	case *Enum:
		b = append(b, `{"@enum":`...)
		b = appendJSONString(b, x.Class)
		b = append(b, `,"case":`...)
		b = appendJSONString(b, x.Case)
		return append(b, '}')
	case *Custom:
		b = append(b, `{"@class":`...)
		b = appendJSONString(b, x.Class)
		b = append(b, `,"@serialized":`...)
		b = appendJSONString(b, x.Data)
		return append(b, '}')
	case *Object:
		if x == nil {
			return append(b, "null"...)
		}
		if onStack(stack, x) {
			b = append(b, `{"@recursion":`...)
			b = appendJSONString(b, x.Class)
			return append(b, '}')
		}
		stack = append(stack, x)
		b = append(b, `{"@class":`...)
		b = appendJSONString(b, x.Class)
		for _, p := range x.Props {
			b = append(b, ',')
			name := p.Name
			if p.Visibility == Private && p.Declarer != x.Class {
				name = p.Declarer + "::" + p.Name
			}
			b = appendJSONString(b, name)
			b = append(b, ':')
			b = appendCanonical(b, p.Value, stack)
		}
		return append(b, '}')
	case *Array:
		if x == nil {
			return append(b, "null"...)
		}
		if onStack(stack, x) {
			return append(b, `{"@recursion":"array"}`...)
		}
		stack = append(stack, x)
		if x.IsList() {
			b = append(b, '[')
			for i, e := range x.Entries {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendCanonical(b, e.Value, stack)
			}
			return append(b, ']')
		}
		b = append(b, '{')
		for i, e := range x.Entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, keyString(e.Key))
			b = append(b, ':')
			b = appendCanonical(b, e.Value, stack)
		}
		return append(b, '}')
	case []Value:
		return appendCanonical(b, NewList(x...), stack)
	}
	return append(b, "null"...)
}

func appendJSONFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NAN"`...)
	case math.IsInf(f, 1):
		return append(b, `"INF"`...)
	case math.IsInf(f, -1):
		return append(b, `"-INF"`...)
	}
	start := len(b)
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
	} else {
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	for _, c := range b[start:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, '.', '0')
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string, escaping only what JSON requires.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// Document returns the JSON object `artisan-go payload:decode` prints for a job, also used by the exec
// and HTTP routes: "command" is the canonical JSON of cmd (null for raw jobs), "commandName" and
// "encrypted" describe data.command, raw jobs get their "data", and every other top-level key of the
// envelope is copied as it is in the payload (uuid, displayName, job, maxTries, …, unknown keys).
func Document(env *Envelope, cmd Value) map[string]any {
	doc := make(map[string]any)
	// Every top-level key is copied as the payload has it; an Envelope built in Go has no Raw bytes.
	copied := env != nil && validJSON(env.Raw) && objectFields(env.Raw, func(k string, v []byte) {
		if k != "data" {
			doc[k] = json.RawMessage(v)
		}
	})
	if env != nil && !copied {
		typedFields(env, doc)
	}
	if cmd == nil {
		doc["command"] = nil
	} else {
		doc["command"] = json.RawMessage(CanonicalJSON(cmd))
	}
	if env == nil {
		return doc
	}
	if env.IsRaw() {
		doc["data"] = env.Data
		return doc
	}
	doc["commandName"] = env.CommandName
	doc["encrypted"] = env.CommandEncrypted()
	if env.BatchID != nil {
		doc["batchId"] = *env.BatchID
	}
	return doc
}

// typedFields fills doc from an Envelope built in Go, which has no Raw bytes.
func typedFields(env *Envelope, doc map[string]any) {
	doc["uuid"] = env.UUID
	doc["displayName"] = env.DisplayName
	doc["job"] = env.Job
	doc["maxTries"] = env.MaxTries
	doc["maxExceptions"] = env.MaxExceptions
	doc["failOnTimeout"] = env.FailOnTimeout
	doc["backoff"] = env.Backoff
	doc["timeout"] = env.Timeout
	doc["retryUntil"] = env.RetryUntil
	for k, v := range env.Extra {
		doc[k] = v
	}
}
