package laravel

import (
	"math"
	"strconv"
	"strings"
)

// SerializeInt returns PHP's serialize() of an int, e.g. "i:1700000000;".
func SerializeInt(n int64) string { return "i:" + strconv.FormatInt(n, 10) + ";" }

// SerializeString returns PHP's serialize() of a byte string, e.g. `s:3:"abc";`.
func SerializeString(s string) string { return "s:" + strconv.Itoa(len(s)) + ":\"" + s + "\";" }

// UnserializeString parses PHP's serialize() of a string.
func UnserializeString(v string) (string, bool) {
	rest, ok := strings.CutPrefix(v, "s:")
	if !ok {
		return "", false
	}
	ls, rest, ok := strings.Cut(rest, ":")
	n, err := strconv.Atoi(ls)
	if !ok || err != nil || n < 0 || len(rest) != n+3 || rest[0] != '"' || rest[n+1:] != "\";" {
		return "", false
	}
	return rest[1 : n+1], true
}

// UnserializeNumber parses a serialized PHP value that PHP's is_numeric accepts (an int, a float or a
// numeric string) and converts it as PHP's (int) cast does.
func UnserializeNumber(v string) (int64, bool) {
	var num string
	switch {
	case strings.HasPrefix(v, "i:") && strings.HasSuffix(v, ";"):
		n, err := strconv.ParseInt(v[2:len(v)-1], 10, 64)
		return n, err == nil
	case strings.HasPrefix(v, "d:") && strings.HasSuffix(v, ";"):
		num = v[2 : len(v)-1]
	default:
		s, ok := UnserializeString(v)
		if !ok {
			return 0, false
		}
		num = strings.TrimLeft(strings.TrimRight(s, " \t\n\r\v\f"), " \t\n\r\v\f")
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(num, "xXpP_") {
		return 0, false
	}
	return int64(f), true
}
