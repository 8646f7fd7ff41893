package payload

import (
	"math"
	"strconv"
	"strings"
)

// StringCast returns a scalar as PHP's (string) cast writes it: strings as they are, integers in
// decimal, floats with 14 significant digits (see floatString), true as "1", false and null as "". Arrays and objects
// give "".
func StringCast(v Value) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return floatString(v)
	case bool:
		if v {
			return "1"
		}
		return ""
	}
	return ""
}

// floatString writes f as PHP's (string) cast does with its default precision of 14: the shortest of
// plain and exponent notation that %G chooses, but an exponent's mantissa keeps ".0" and its
// exponent has no leading zeros (1.0E+20, 1.0E-5, 1.5E-7), and INF, -INF and NAN are upper case.
func floatString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NAN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	s := strconv.FormatFloat(f, 'G', 14, 64)
	mant, exp, ok := strings.Cut(s, "E")
	if !ok {
		return s
	}
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	return mant + "E" + exp[:1] + strings.TrimLeft(exp[1:], "0")
}

// IntCast returns a scalar as PHP's (int) cast reads it: integers as they are, floats truncated, true
// as 1, and a string's leading integer (after white space, with an optional sign; the digits stop
// once past 2^31); anything else 0.
func IntCast(v Value) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case bool:
		if v {
			return 1
		}
	case string:
		return leadingInt(v)
	}
	return 0
}

// leadingInt is PHP's (int) of a string, bounded: the digits are read until the value passes 2^31.
func leadingInt(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' || s[i] == '\f') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var n int64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
		if n > 1<<31 {
			break
		}
	}
	if neg {
		return -n
	}
	return n
}
