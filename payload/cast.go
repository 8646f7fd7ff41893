package payload

import "strconv"

// StringCast returns a scalar as PHP's (string) cast writes it: strings as they are, integers in
// decimal, floats with 14 significant digits, true as "1", false and null as "". Arrays and objects
// give "".
func StringCast(v Value) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'G', 14, 64)
	case bool:
		if v {
			return "1"
		}
		return ""
	}
	return ""
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
