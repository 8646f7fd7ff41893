package cli

import (
	"strconv"
	"strings"
)

// phpMax is PHP 8's max() of two strings, as Laravel's queue:work combines --backoff and --delay:
// two numeric strings compare as numbers, any other pair byte by byte, and of two equal values the
// first is returned. So max("10,20", "5") is "5" in PHP, as here.
func phpMax(a, b string) string {
	if phpCompare(a, b) < 0 {
		return b
	}
	return a
}

// phpCompare is PHP 8's comparison of two strings (the <=> operator).
func phpCompare(a, b string) int {
	x, aNum := phpNumeric(a)
	y, bNum := phpNumeric(b)
	if aNum && bNum {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}

// phpNumeric reports whether s is a numeric string as PHP 8 reads one (an integer or a decimal
// float, with an optional exponent and surrounding whitespace) and its value.
func phpNumeric(s string) (float64, bool) {
	t := strings.Trim(s, " \t\n\r\v\f")
	if t == "" || strings.ContainsAny(t, "xXpP_iInN") {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	return f, err == nil
}
