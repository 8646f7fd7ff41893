package laravel

import (
	"math"
	"strconv"
	"strings"

	"github.com/artisan-go/artisan-go/payload"
)

// SerializeInt returns PHP's serialize() of an int, e.g. "i:1700000000;".
func SerializeInt(n int64) string { return serialize(n) }

// SerializeString returns PHP's serialize() of a byte string, e.g. `s:3:"abc";`.
func SerializeString(s string) string { return serialize(s) }

// serialize writes a scalar with payload's codec; scalars always serialize.
func serialize(v payload.Value) string {
	b, _ := payload.Serialize(v)
	return string(b)
}

// UnserializeString parses PHP's serialize() of a string.
func UnserializeString(v string) (string, bool) {
	s, err := payload.Unserialize([]byte(v))
	str, ok := s.(string)
	return str, err == nil && ok
}

// UnserializeNumber parses a serialized PHP value that PHP's is_numeric accepts (an int, a float or a
// numeric string) and converts it as PHP's (int) cast does.
func UnserializeNumber(v string) (int64, bool) {
	val, err := payload.Unserialize([]byte(v))
	if err != nil {
		return 0, false
	}
	switch x := val.(type) {
	case int64:
		return x, true
	case float64:
		return floatToInt(x)
	case string:
		num := strings.Trim(x, " \t\n\r\v\f")
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			return n, true
		}
		if strings.ContainsAny(num, "xXpP_") {
			return 0, false
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, false
		}
		return floatToInt(f)
	}
	return 0, false
}

// floatToInt is PHP's (int) cast of a finite float; INF and NAN are not numbers a counter can hold.
func floatToInt(f float64) (int64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return int64(f), true
}
