package payload

// validJSON reports whether b is one JSON value with optional surrounding whitespace, exactly as
// encoding/json.Valid does (the same grammar, no UTF-8 check inside strings, at most maxJSONDepth
// nested arrays and objects), in a single tight pass. encoding/json's byte-at-a-time state machine
// was the largest part of reading an envelope.
func validJSON(b []byte) bool { return scanJSON(b, nil) }

// scanJSON is validJSON that also tells scan, when it is not nil, about the members of the top-level
// object and of the objects directly inside it as it checks them, so that reading an envelope takes a
// single pass over it.
func scanJSON(b []byte, scan *envScan) bool {
	v := jsonValidator{b: b}
	i, ok := v.value(skipWS(b, 0), 0, scan)
	return ok && skipWS(b, i) == len(b)
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

type jsonValidator struct{ b []byte }

// value checks the value starting at b[i] and returns the index after it. scan, when not nil, is told
// about the members of the objects at depth 1 and 2 (see scanJSON); it is a parameter rather than a
// field so that the validator's input bytes, which scan keeps, do not make scan itself escape.
func (v *jsonValidator) value(i, depth int, scan *envScan) (int, bool) {
	b := v.b
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return v.str(i)
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return i, false
		}
		return v.container(i, depth+1, scan)
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number(i)
	case c == 't':
		return v.literal(i, "true")
	case c == 'f':
		return v.literal(i, "false")
	case c == 'n':
		return v.literal(i, "null")
	}
	return i, false
}

func (v *jsonValidator) literal(i int, word string) (int, bool) {
	if len(v.b)-i < len(word) || string(v.b[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// container checks an object or array starting at b[i], telling scan about its members (see value).
func (v *jsonValidator) container(i, depth int, scan *envScan) (int, bool) {
	b := v.b
	object := b[i] == '{'
	closing := byte(']')
	if object {
		closing = '}'
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1, true
	}
	if !object || depth > 2 {
		scan = nil
	}
	for {
		var ok bool
		var key []byte
		if object {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			start := i
			if i, ok = v.str(i); !ok {
				return i, false
			}
			key = b[start:i]
			if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
		if scan != nil && depth == 1 {
			scan.enter(key)
		}
		start := i
		if i, ok = v.value(i, depth, scan); !ok {
			return i, false
		}
		if scan != nil {
			scan.member(depth, key, b[start:i])
		}
		if i = skipWS(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case closing:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// str checks a string starting at b[i] == '"'.
func (v *jsonValidator) str(i int) (int, bool) {
	b := v.b
	for j := i + 1; j < len(b); j++ {
		c := b[j]
		switch {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		case c == '\\':
			j++
			if j >= len(b) {
				return j, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-j <= 4 || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return j, false
				}
				j += 4
			default:
				return j, false
			}
		}
	}
	return len(b), false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? starting at b[i].
func (v *jsonValidator) number(i int) (int, bool) {
	b := v.b
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}
