package payload

import (
	"errors"
	"math"
	"regexp"
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
// as 1, and a string's leading number (after white space, with an optional sign, a fraction and an
// exponent: "1e1" is 10, "1.9e1" 19, " 12abc" 12, an infinite "1e400" 0); anything else 0. A string's
// number is bounded at ±2^31, where every caller's seconds and counts mean as good as never.
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

// FloatCast returns a scalar as PHP's (float) cast, or its arithmetic, reads it: numbers as they are,
// true as 1, a string's leading number ("0.5" is 0.5, "1e1x" 10, "1e400" +Inf); anything else 0.
func FloatCast(v Value) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	case bool:
		if v {
			return 1
		}
	case string:
		m := strings.TrimLeft(leadingNumber.FindString(v), " \t\n\r\v\f")
		f, _ := strconv.ParseFloat(m, 64) // ±Inf past the float's range, as PHP's
		return f
	}
	return 0
}

// leadingNumber is the numeric prefix PHP's string-to-number conversion reads.
var leadingNumber = regexp.MustCompile(`^[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?`)

// intCastBound bounds leadingInt.
const intCastBound = 1 << 31

// leadingInt is PHP's (int) of a string, bounded at ±intCastBound.
func leadingInt(s string) int64 {
	m := strings.TrimLeft(leadingNumber.FindString(s), " \t\n\r\v\f")
	if m == "" {
		return 0
	}
	f, err := strconv.ParseFloat(m, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange), math.IsNaN(f):
		return 0
	case math.IsInf(f, 0) && !strings.ContainsAny(m, ".eE"):
		// An integer too long for a float: PHP saturates it.
		return int64(math.Copysign(intCastBound, f))
	case math.IsInf(f, 0):
		return 0
	case f > intCastBound:
		return intCastBound
	case f < -intCastBound:
		return -intCastBound
	}
	return int64(f)
}

// Truthy is PHP's truthiness of a value, as `if ($v)` reads it: null, false, 0, 0.0, "", "0" and an
// empty array are false; everything else, objects included, is true.
func Truthy(v Value) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != "" && x != "0"
	case *Array:
		return x.Len() > 0
	}
	return true
}
