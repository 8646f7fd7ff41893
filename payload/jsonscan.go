package payload

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The envelope is read in one validating pass (validJSON) and then walked with the small scanner
// below, which may assume valid JSON. Going through encoding/json's map and string decoding instead
// validated the long data.command string three times and dominated the cost of reading a job.

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just after the JSON string starting at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just after the JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// objectFields calls fn with each member of the JSON object b (valid JSON) in order, and reports whether
// b is an object at all.
func objectFields(b []byte, fn func(key string, val []byte)) bool {
	return objectMembers(b, func(key, val []byte) {
		k, _ := unquoteJSON(key)
		fn(k, val)
	})
}

// objectMembers calls fn with each member of the JSON object b (valid JSON) in order, the key as its
// string literal with quotes and escapes, and reports whether b is an object at all.
func objectMembers(b []byte, fn func(key, val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	for i < len(b) && b[i] != '}' {
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
		end := stringEnd(b, i)
		key := b[i:end]
		i = skipWS(b, end)
		i = skipWS(b, i+1) // the ':'
		vend := valueEnd(b, i)
		fn(key, b[i:vend])
		i = skipWS(b, vend)
	}
	return true
}

// keyIndex returns the index in names of the object key whose string literal (quotes included) is
// key, or -1. A key without escapes is compared as it is, with no decoding; as every name is ASCII, raw
// non-ASCII bytes can never match.
func keyIndex(key []byte, names []string) int {
	if len(key) < 2 {
		return -1
	}
	k := key[1 : len(key)-1]
	if hasByte(k, '\\') {
		s, _ := unquoteJSON(key)
		k = []byte(s)
	}
	for i, n := range names {
		if string(k) == n {
			return i
		}
	}
	return -1
}

// unquoteJSON decodes a JSON string literal (with its quotes) as encoding/json does: escapes resolved,
// surrogate pairs joined, and a lone surrogate or a byte that is not UTF-8 replaced by U+FFFD.
func unquoteJSON(s []byte) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	s = s[1 : len(s)-1]
	simple := true
	for _, c := range s {
		if c == '\\' || c >= utf8.RuneSelf {
			simple = false
			break
		}
	}
	if simple || (!hasByte(s, '\\') && utf8.Valid(s)) {
		return string(s), true
	}
	var out strings.Builder
	out.Grow(len(s))
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] != '\\' && s[j] < utf8.RuneSelf {
			j++
		}
		out.Write(s[i:j]) // a run of plain ASCII in one copy
		if i = j; i >= len(s) {
			break
		}
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'b':
				out.WriteByte('\b')
			case 'f':
				out.WriteByte('\f')
			case 'n':
				out.WriteByte('\n')
			case 'r':
				out.WriteByte('\r')
			case 't':
				out.WriteByte('\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(s, i+2); ok && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out.WriteRune(dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				out.WriteRune(r)
				continue
			default: // '"', '\\', '/'
				out.WriteByte(s[i+1])
			}
			i += 2
			continue
		}
		if s[i] < utf8.RuneSelf {
			out.WriteByte(s[i]) // a lone trailing backslash
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			out.WriteRune(utf8.RuneError)
		} else {
			out.Write(s[i : i+size])
		}
		i += size
	}
	return out.String(), true
}

func hasByte(s []byte, c byte) bool {
	for _, x := range s {
		if x == c {
			return true
		}
	}
	return false
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
