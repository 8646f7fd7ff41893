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
