package laravel

import "strings"

// VersionCompare compares two version strings exactly as PHP's version_compare does, returning -1, 0
// or 1. Laravel decides the pop lock with it, and its quirks matter: "8.0.mysql_aurora.3.04.0" is below
// "8.0.1", and "16.3 (Debian 16.3-1)" is above "9.5".
func VersionCompare(a, b string) int {
	if a == "" || b == "" {
		switch {
		case a == "" && b == "":
			return 0
		case a != "":
			return 1
		default:
			return -1
		}
	}
	v1, v2 := a, b
	if v1[0] != '#' {
		v1 = canonicalVersion(v1)
	}
	if v2[0] != '#' {
		v2 = canonicalVersion(v2)
	}
	p1, p2 := v1, v2
	more1, more2 := true, true // C's n1/n2 != NULL
	cmp := 0
	for p1 != "" && p2 != "" && more1 && more2 {
		var e1, e2, rest1, rest2 string
		e1, rest1, more1 = strings.Cut(p1, ".")
		e2, rest2, more2 = strings.Cut(p2, ".")
		switch d1, d2 := isDigitAt(e1), isDigitAt(e2); {
		case d1 && d2:
			cmp = sign(leadingInt(e1) - leadingInt(e2))
		case !d1 && !d2:
			cmp = compareSpecialForms(e1, e2)
		case d1:
			cmp = compareSpecialForms("#N#", e2)
		default:
			cmp = compareSpecialForms(e1, "#N#")
		}
		if cmp != 0 {
			break
		}
		if more1 {
			p1 = rest1
		}
		if more2 {
			p2 = rest2
		}
	}
	if cmp == 0 {
		switch {
		case more1:
			if isDigitAt(p1) {
				cmp = 1
			} else {
				cmp = VersionCompare(p1, "#N#")
			}
		case more2:
			if isDigitAt(p2) {
				cmp = -1
			} else {
				cmp = VersionCompare("#N#", p2)
			}
		}
	}
	return cmp
}

// canonicalVersion applies PHP's php_canonicalize_version: '-', '_' and '+' become '.', a '.' is put
// between a run of digits and a run of other characters, and any other non-alphanumeric becomes '.'.
func canonicalVersion(v string) string {
	isDig := func(c byte) bool { return c >= '0' && c <= '9' }
	isNdig := func(c byte) bool { return !isDig(c) && c != '.' }
	isAlnum := func(c byte) bool { return isDig(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	out := []byte{v[0]}
	lp := v[0]
	dot := func() {
		if out[len(out)-1] != '.' {
			out = append(out, '.')
		}
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '-' || c == '_' || c == '+':
			dot()
		case isNdig(lp) && isDig(c) || isDig(lp) && isNdig(c):
			dot()
			out = append(out, c)
		case !isAlnum(c):
			dot()
		default:
			out = append(out, c)
		}
		lp = c
	}
	return string(out)
}

// compareSpecialForms orders PHP's named version parts: unknown < dev < alpha = a < beta = b < RC = rc
// < a number (#) < pl = p, each matched as a prefix.
func compareSpecialForms(a, b string) int {
	order := func(s string) int {
		for _, f := range []struct {
			name  string
			order int
		}{{"dev", 0}, {"alpha", 1}, {"a", 1}, {"beta", 2}, {"b", 2}, {"RC", 3}, {"rc", 3}, {"#", 4}, {"pl", 5}, {"p", 5}} {
			if strings.HasPrefix(s, f.name) {
				return f.order
			}
		}
		return -1
	}
	return sign(int64(order(a) - order(b)))
}

func isDigitAt(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// leadingInt parses the leading digits like C's strtol, saturating instead of overflowing.
func leadingInt(s string) int64 {
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n > (1<<63-1-9)/10 {
			return 1<<63 - 1
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n
}

func sign(n int64) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
