package config

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/artisan-go/artisan-go/payload"
)

// This file reads an application's config/*.php as PHP evaluates it when no configuration is cached,
// for the simple values the worker needs: the array the file returns, with strings, numbers, booleans,
// null, nested arrays ([...] and array(...)), arithmetic and concatenation, env('NAME', default),
// Str::slug, array_merge, the conditionals ?:, ?? and ? : and the casts (int), (bool), (string) and
// (float). Anything else (another function call,
// a constant) is unknown: phpUnknown, so that the caller falls back to what it reads otherwise.

// phpUnknown is a value the reader does not evaluate.
type phpUnknown struct{}

// phpToken is one token of PHP source: kind is 's' (a quoted string, its value in text), 'n' (a
// number), 'i' (a name), 'x' (a double-quoted string with interpolation), '>' for =>, 'a' for ->, 'c'
// for < and >, or the punctuation itself ('[', ']', '(', ')', ',', ';', '.', '?' and any other byte).
type phpToken struct {
	kind byte
	text string
}

// phpTokens splits PHP source after its opening tag into tokens, without comments.
func phpTokens(src string) []phpToken {
	if i := strings.Index(src, "<?php"); i >= 0 {
		src = src[i+5:]
	}
	var out []phpToken
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' && i+1 < len(src) && src[i+1] == '[':
			// An attribute, #[Name(args)]: passed over to its closing bracket (strings in it kept whole).
			depth := 0
			for i++; i < len(src); {
				switch src[i] {
				case '[':
					depth++
				case ']':
					depth--
				case '\'', '"':
					q := src[i]
					for i++; i < len(src) && src[i] != q; i++ {
						if src[i] == '\\' {
							i++
						}
					}
				}
				i++
				if depth == 0 {
					break
				}
			}
		case c == '<' && strings.HasPrefix(src[i:], "<<<"):
			// A heredoc or nowdoc: <<<ID or <<<'ID' (or "ID") to a line that starts, after blanks,
			// with ID. A nowdoc's text, and a heredoc's without $ or escapes, is a string.
			j := i + 3
			for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
				j++
			}
			quote := byte(0)
			if j < len(src) && (src[j] == '\'' || src[j] == '"') {
				quote = src[j]
				j++
			}
			k := j
			for k < len(src) && (isAlnum(src[k]) || src[k] == '_') {
				k++
			}
			id := src[j:k]
			if quote != 0 && k < len(src) && src[k] == quote {
				k++
			}
			nl := strings.IndexByte(src[k:], '\n')
			if id == "" || nl < 0 {
				out = append(out, phpToken{'x', ""})
				i = len(src)
				continue
			}
			body, rest := src[k+nl+1:], len(src)
			var lines []string
			end, indent := -1, 0
			for off := 0; off <= len(body); {
				line := body[off:]
				if n := strings.IndexByte(line, '\n'); n >= 0 {
					line = line[:n]
				}
				trimmed := strings.TrimLeft(line, " \t")
				if strings.HasPrefix(trimmed, id) && (len(trimmed) == len(id) || !isAlnum(trimmed[len(id)]) && trimmed[len(id)] != '_') {
					indent = len(line) - len(trimmed)
					end = k + nl + 1 + off + indent + len(id)
					break
				}
				lines = append(lines, line)
				off += len(line) + 1
			}
			if end < 0 {
				out = append(out, phpToken{'x', ""})
				i = rest
				continue
			}
			for n, l := range lines {
				lines[n] = l[min(indent, len(l)-len(strings.TrimLeft(l, " \t"))):] // PHP 7.3+ strips the closing line's indentation
			}
			text := strings.Join(lines, "\n")
			kind := byte('s')
			if quote != '\'' && strings.ContainsAny(text, "$\\") {
				kind = 'x'
			}
			out = append(out, phpToken{kind, text})
			i = end
		case c == '.' && strings.HasPrefix(src[i:], "..."):
			out = append(out, phpToken{'e', "..."}) // a spread: what it adds is not known
			i += 3
		case c == '#' || c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 4
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != '\''; j++ {
				if src[j] == '\\' && j+1 < len(src) && (src[j+1] == '\'' || src[j+1] == '\\') {
					j++
				}
				b.WriteByte(src[j])
			}
			out = append(out, phpToken{'s', b.String()})
			i = j + 1
		case c == '"':
			j := i + 1
			plain := true
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' || src[j] == '$' {
					plain = false
					if src[j] == '\\' {
						j++
					}
				}
			}
			kind := byte('s')
			if !plain {
				kind = 'x'
			}
			out = append(out, phpToken{kind, src[min(i+1, len(src)):min(j, len(src))]})
			i = j + 1
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			// Decimal, 0x/0o/0b and leading-zero octal integers, and floats with an exponent.
			j := i
			for j < len(src) && (isAlnum(src[j]) || src[j] == '.' || src[j] == '_' ||
				(src[j] == '+' || src[j] == '-') && j > i && (src[j-1] == 'e' || src[j-1] == 'E') && !strings.ContainsAny(src[i:j], "xX")) {
				j++
			}
			out = append(out, phpToken{'n', src[i:j]})
			i = j
		case c == '\\' || c == '_' || unicode.IsLetter(rune(c)):
			j := i
			for j < len(src) && (src[j] == '\\' || src[j] == '_' || src[j] == ':' || unicode.IsLetter(rune(src[j])) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, phpToken{'i', src[i:j]})
			i = j
		case c == '=' && i+1 < len(src) && src[i+1] == '>':
			out = append(out, phpToken{'>', "=>"})
			i += 2
		case c == '-' && i+1 < len(src) && src[i+1] == '>':
			out = append(out, phpToken{'a', "->"}) // a method call, never a key's arrow
			i += 2
		case c == '>' || c == '<':
			out = append(out, phpToken{'c', string(c)}) // a comparison, never a key's arrow
			i++
		case c == '*' && i+1 < len(src) && src[i+1] == '*':
			out = append(out, phpToken{'p', "**"})
			i += 2
		default:
			out = append(out, phpToken{c, string(c)})
			i++
		}
	}
	markArrowFunctions(out)
	return out
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// markArrowFunctions gives the => of each arrow function, fn (...) => expr, its own kind 'F', so that
// it is not read as an array key's arrow.
func markArrowFunctions(toks []phpToken) {
	for i := range toks {
		if toks[i].kind != 'i' || !strings.EqualFold(toks[i].text, "fn") || i+1 >= len(toks) || toks[i+1].kind != '(' {
			continue
		}
		depth := 0
		for j := i + 1; j < len(toks); j++ {
			switch toks[j].kind {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				// fn (...): type => the arrow follows the parameters, after an optional return type.
				for k := j + 1; k < len(toks) && k <= j+4; k++ {
					if toks[k].kind == '>' {
						toks[k].kind = 'F'
						break
					}
				}
				break
			}
		}
	}
}

// phpSourceReader reads the value a config file returns.
type phpSourceReader struct {
	toks   []phpToken
	pos    int
	lookup func(string) (string, bool) // env(): the process environment first, then .env
	base   string                      // the application's directory, for base_path() and the others; "" leaves them unknown
}

// readPHPConfigSource returns the array a config file's `return` gives, or nil when it has none the
// reader understands; lookup reads a variable for env() as the helper does, and base_path(),
// database_path() and storage_path() are under base, the application's directory.
func readPHPConfigSource(src string, lookup func(string) (string, bool), base string) *phpArray {
	r := &phpSourceReader{toks: phpTokens(src), lookup: lookup, base: base}
	// Braces: a return in a function's body is not the file's; one in another block (an if) may be
	// the one PHP runs, so the file is not read.
	var blocks []bool // true for a function's body
	inFunction, function := 0, false
	for r.pos < len(r.toks) {
		t := r.toks[r.pos]
		r.pos++
		switch {
		case t.kind == 'i' && strings.EqualFold(t.text, "function"):
			function = true
		case t.kind == '{':
			blocks = append(blocks, function)
			if function {
				inFunction++
			}
			function = false
		case t.kind == '}' && len(blocks) > 0:
			if blocks[len(blocks)-1] {
				inFunction--
			}
			blocks = blocks[:len(blocks)-1]
		}
		if t.kind == 'i' && strings.EqualFold(t.text, "return") && len(blocks) > 0 && inFunction == 0 {
			return nil // return [...] inside an if: which one PHP runs is not known
		}
		if t.kind == 'i' && strings.EqualFold(t.text, "return") && len(blocks) == 0 {
			if a, ok := r.value().(*phpArray); ok {
				return a
			}
			return nil
		}
	}
	return nil
}

func (r *phpSourceReader) peek() phpToken {
	if r.pos < len(r.toks) {
		return r.toks[r.pos]
	}
	return phpToken{kind: 0}
}

// value reads one expression: a value it knows, or phpUnknown after skipping the expression to the
// next ',' ']' ')' ';' or '=>' at its own depth.
func (r *phpSourceReader) value() any {
	start := r.pos
	v := r.conditional()
	if _, unknown := v.(phpUnknown); !unknown && r.ends() {
		return v
	}
	r.pos = start
	r.skip()
	return phpUnknown{}
}

// conditional reads `a ? b : c`, `a ?: c` and `a ?? c` on a known a, and only the operand PHP
// evaluates: the one it skips may hold code the reader does not know (a closure for a Redis cluster).
func (r *phpSourceReader) conditional() any {
	v := r.sum()
	for r.peek().kind == '?' {
		if _, unknown := v.(phpUnknown); unknown {
			return v
		}
		r.pos++
		switch r.peek().kind {
		case '?': // a ?? c
			r.pos++
			if v != nil {
				r.skipOperand(false)
				continue
			}
			v = r.sum()
		case ':': // a ?: c
			r.pos++
			if phpTruthy(v) {
				r.skipOperand(false)
				continue
			}
			v = r.sum()
		default: // a ? b : c
			if phpTruthy(v) {
				v = r.sum()
				if r.peek().kind != ':' {
					return phpUnknown{}
				}
				r.pos++
				r.skipOperand(false)
				continue
			}
			r.skipOperand(true)
			if r.peek().kind != ':' {
				return phpUnknown{}
			}
			r.pos++
			v = r.sum()
		}
	}
	return v
}

// skipOperand passes over an operand of a conditional: up to the ':' of its own depth (toColon), or
// to the end of the expression.
func (r *phpSourceReader) skipOperand(toColon bool) {
	if toColon {
		r.skipTo(",;>?:")
	} else {
		r.skipTo(",;>?")
	}
}

// phpTruthy is PHP's truthiness of a known value: null, false, 0, 0.0, "", "0" and an empty array are
// false.
func phpTruthy(v any) bool {
	if a, ok := v.(*phpArray); ok {
		return len(a.keys) > 0 || a.spread
	}
	return payload.Truthy(v)
}

// sum reads terms joined by . (concatenation), + and -, and product terms joined by * and /, of
// numbers written in the file ('retry_after' => 60 * 5): PHP's arithmetic on integers, a float once
// one is or a division does not come out whole. As in PHP 8, + and - bind tighter than .
// ('v' . 1 + 2 is "v3").
func (r *phpSourceReader) sum() any {
	v := r.additive()
	for r.peek().kind == '.' {
		r.pos++
		v = concat(v, r.additive())
	}
	return v
}

// additive reads terms joined by + and -.
func (r *phpSourceReader) additive() any {
	v := r.product()
	for {
		op := r.peek().kind
		if op != '+' && op != '-' {
			return v
		}
		r.pos++
		v = arith(op, v, r.product())
	}
}

// product reads terms joined by *, / and %.
func (r *phpSourceReader) product() any {
	v := r.power()
	for {
		op := r.peek().kind
		if op != '*' && op != '/' && op != '%' {
			return v
		}
		r.pos++
		v = arith(op, v, r.power())
	}
}

// power reads a unary term, raised by ** (right-associative, above the unary minus as in PHP).
func (r *phpSourceReader) power() any {
	switch r.peek().kind {
	case '-', '+':
		op := r.peek().kind
		r.pos++
		v := r.power()
		if f, isFloat := numeric(v).(float64); isFloat && op == '-' {
			return -f // -0.0 stays negative
		}
		if op == '-' {
			return arith('-', int64(0), v)
		}
		return arith('+', int64(0), v)
	}
	v := r.term()
	if r.peek().kind == 'p' {
		r.pos++
		return arith('p', v, r.power())
	}
	return v
}

// concat is PHP's . of two strings or numbers.
func concat(a, b any) any {
	as, aok := phpString(a)
	bs, bok := phpString(b)
	if !aok || !bok {
		return phpUnknown{}
	}
	return as + bs
}

// phpString is a string, number, boolean or null as PHP's string conversion gives it (floats to 14
// significant digits: 0.1 + 0.2 is "0.3", 1e20 "1.0E+20"); false for arrays and unknowns.
func phpString(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case float64:
		switch {
		case math.IsNaN(x):
			return "NAN", true
		case math.IsInf(x, 1):
			return "INF", true
		case math.IsInf(x, -1):
			return "-INF", true
		}
		s := strconv.FormatFloat(x, 'G', 14, 64)
		mantissa, exp, sci := strings.Cut(s, "E")
		if !sci {
			return s, true
		}
		if !strings.Contains(mantissa, ".") {
			mantissa += ".0"
		}
		sign := exp[:1]
		return mantissa + "E" + sign + strings.TrimLeft(exp[1:], "0"), true
	}
	return exportString(v) // true "1", false ""
}

// arith applies one operator (+ - * / % and p for **) to two numbers, numeric strings read as PHP
// reads them; anything else is unknown.
func arith(op byte, a, b any) any {
	a, b = numeric(a), numeric(b)
	ai, aInt := a.(int64)
	bi, bInt := b.(int64)
	if op == '%' {
		if !aInt || !bInt || bi == 0 {
			return phpUnknown{}
		}
		return ai % bi
	}
	if op == 'p' {
		if aInt && bInt && bi >= 0 && bi < 63 {
			n := int64(1)
			for range bi {
				if arith('*', n, ai) != any(n*ai) {
					return math.Pow(float64(ai), float64(bi)) // overflowed: PHP's float
				}
				n *= ai
			}
			return n
		}
		return phpUnknown{}
	}
	if aInt && bInt && op != '/' {
		// Integers, unless the result overflows: PHP goes on in floats.
		switch op {
		case '+':
			if r := ai + bi; (r > ai) == (bi > 0) {
				return r
			}
		case '-':
			if r := ai - bi; (r < ai) == (bi > 0) {
				return r
			}
		case '*':
			if r := ai * bi; ai == 0 || r/ai == bi && !(ai == -1 && bi == math.MinInt64) && !(bi == -1 && ai == math.MinInt64) {
				return r
			}
		}
	}
	if op == '/' && aInt && bInt && bi != 0 && ai%bi == 0 && !(ai == math.MinInt64 && bi == -1) {
		return ai / bi
	}
	af, aok := toFloat(a)
	bf, bok := toFloat(b)
	if !aok || !bok {
		return phpUnknown{}
	}
	switch op {
	case '+':
		return af + bf
	case '-':
		return af - bf
	case '*':
		return af * bf
	}
	if bf == 0 {
		return phpUnknown{}
	}
	return af / bf
}

// numeric reads a numeric string as the number PHP's arithmetic takes from it; other values stay.
func numeric(v any) any {
	str, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.Trim(str, " \t\n\r\v\f")
	if !numericString.MatchString(t) {
		return phpUnknown{} // not numeric to PHP, or only leading-numeric ("1_000", "5 apples")
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return f
	}
	return phpUnknown{}
}

// numericString is a numeric string as PHP 8 reads one, its surrounding whitespace trimmed.
var numericString = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// toFloat reads a number written in the file.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// ends reports whether the expression ends at the next token.
func (r *phpSourceReader) ends() bool {
	switch r.peek().kind {
	case ',', ']', ')', ';', '>', 0:
		return true
	}
	return false
}

// skip passes over an expression up to the next ',' ']' ')' ';' or '=>' at its depth.
func (r *phpSourceReader) skip() { r.skipTo(",;>") }

// skipTo passes over tokens up to a closing bracket, or one of stops, at the depth it starts at.
func (r *phpSourceReader) skipTo(stops string) {
	depth := 0
	for r.pos < len(r.toks) {
		switch k := r.toks[r.pos].kind; k {
		case '[', '(', '{':
			depth++
		case ']', ')', '}':
			if depth == 0 {
				return
			}
			depth--
		default:
			if depth == 0 && strings.IndexByte(stops, k) >= 0 {
				return
			}
		}
		r.pos++
	}
}

// term reads a simple value.
func (r *phpSourceReader) term() any {
	t := r.peek()
	r.pos++
	switch t.kind {
	case 's':
		return t.text
	case 'n':
		return phpNumber(t.text)
	case '[':
		return r.array(']')
	case '(':
		// A cast: (int) env(...).
		if c := r.peek(); c.kind == 'i' && r.pos+1 < len(r.toks) && r.toks[r.pos+1].kind == ')' {
			r.pos += 2
			return castPHP(strings.ToLower(c.text), r.power())
		}
		// A parenthesized expression: (60 * 5).
		v := r.sum()
		if r.peek().kind == ')' {
			r.pos++
			return v
		}
	case 'i':
		switch strings.ToLower(t.text) {
		case "true":
			return true
		case "false":
			return false
		case "null":
			return nil
		case "array":
			if r.peek().kind == '(' {
				r.pos++
				return r.array(')')
			}
		case "env":
			if r.peek().kind == '(' {
				return r.env()
			}
		case "array_merge", `\array_merge`:
			if r.peek().kind == '(' {
				return r.arrayMerge()
			}
		case "str::slug", `illuminate\support\str::slug`, `\illuminate\support\str::slug`:
			if r.peek().kind == '(' {
				return r.slug()
			}
		case "base_path", "database_path", "storage_path":
			if r.peek().kind == '(' && r.base != "" {
				return r.path(strings.TrimSuffix(strings.ToLower(t.text), "_path"))
			}
		}
	}
	return phpUnknown{}
}

// env reads env('NAME'[, default]) and gives its value.
func (r *phpSourceReader) env() any {
	r.pos++ // (
	name := r.peek()
	if name.kind != 's' {
		return phpUnknown{}
	}
	r.pos++
	var def any
	if r.peek().kind == ',' {
		r.pos++
		def = r.value()
	}
	if r.peek().kind != ')' {
		return phpUnknown{}
	}
	r.pos++
	return envValue(name.text, def, r.lookup)
}

// arrayMerge reads array_merge(...$arrays) of known arrays: string keys replaced in the first one's
// place, integer keys renumbered after the others, as PHP merges them.
func (r *phpSourceReader) arrayMerge() any {
	r.pos++ // (
	out := &phpArray{values: map[string]any{}}
	next := int64(0)
	for r.peek().kind != ')' {
		a, ok := r.value().(*phpArray)
		if !ok || a.spread {
			r.skip()
			for r.peek().kind == ',' {
				r.pos++
				r.skip()
			}
			if r.peek().kind == ')' {
				r.pos++
			}
			return phpUnknown{}
		}
		for _, k := range a.keys {
			if n, err := strconv.ParseInt(k, 10, 64); err == nil && strconv.FormatInt(n, 10) == k {
				out.set(strconv.FormatInt(next, 10), a.values[k])
				next++
				continue
			}
			out.set(k, a.values[k])
		}
		if r.peek().kind == ',' {
			r.pos++
		} else if r.peek().kind != ')' {
			return phpUnknown{}
		}
	}
	r.pos++
	return out
}

// path reads base_path($path), database_path($path) or storage_path($path) (dir "base", "database"
// or "storage"): the application's directory as Laravel's Application makes them by default, with
// the path appended after a separator when it is not empty.
func (r *phpSourceReader) path(dir string) any {
	r.pos++ // (
	var arg any = ""
	if r.peek().kind != ')' {
		arg = r.value()
	}
	if r.peek().kind != ')' {
		return phpUnknown{}
	}
	r.pos++
	p, ok := exportString(arg)
	if !ok && arg != nil {
		return phpUnknown{}
	}
	out := r.base
	if dir != "base" {
		out += string(filepath.Separator) + dir
	}
	if p != "" {
		out += string(filepath.Separator) + p
	}
	return out
}

// slug reads Str::slug($title[, $separator]) and gives what Laravel makes of a title, or unknown for
// one with letters it transliterates with tables of its own, or other arguments.
func (r *phpSourceReader) slug() any {
	r.pos++ // (
	args := []any{r.value()}
	for r.peek().kind == ',' {
		r.pos++
		args = append(args, r.value())
	}
	if r.peek().kind != ')' {
		return phpUnknown{}
	}
	r.pos++
	title, ok := phpString(args[0])
	if !ok || len(args) > 2 {
		return phpUnknown{}
	}
	sep := "-"
	if len(args) == 2 {
		if sep, ok = args[1].(string); !ok || len([]rune(sep)) != 1 {
			return phpUnknown{}
		}
	}
	s, exact := slugExact(title, []rune(sep)[0])
	if !exact {
		return phpUnknown{}
	}
	return s
}

// array reads entries up to close: `key => value` or `value` (an integer key after the last one).
func (r *phpSourceReader) array(close byte) any {
	a := &phpArray{values: map[string]any{}}
	next := int64(0)
	for {
		if r.peek().kind == close {
			r.pos++
			return a
		}
		if r.peek().kind == 0 {
			return phpUnknown{}
		}
		if r.peek().kind == 'e' {
			// ...$other: keys it adds or replaces are not known.
			r.pos++
			r.value()
			a.spread = true
		} else if start := r.pos; true {
			r.element(a, start, &next)
		}
		switch r.peek().kind {
		case ',':
			r.pos++
		case close:
		default:
			r.skip()
			if r.peek().kind == ',' {
				r.pos++
			} else if r.peek().kind != close {
				return phpUnknown{}
			}
		}
	}
}

// element reads one `key => value` or `value` entry of an array.
func (r *phpSourceReader) element(a *phpArray, start int, next *int64) {
	{
		k := r.value()
		if r.peek().kind == '>' {
			r.pos++
			v := r.value()
			switch key := k.(type) {
			case string:
				if n, err := strconv.ParseInt(key, 10, 64); err == nil && strconv.FormatInt(n, 10) == key {
					*next = max(*next, n+1)
				}
				a.set(key, v)
			case int64:
				a.set(strconv.FormatInt(key, 10), v)
				*next = max(*next, key+1)
			default:
				// A key the reader does not know (a constant): it may be any of the others.
				a.spread = true
			}
		} else if r.pos > start {
			a.set(strconv.FormatInt(*next, 10), k)
			*next++
		}
	}
}

// set adds or replaces an entry, keeping the first position.
func (a *phpArray) set(key string, v any) {
	if _, ok := a.values[key]; !ok {
		a.keys = append(a.keys, key)
	}
	a.values[key] = v
}

// phpNumber reads a number as PHP writes it: decimal, 0x, 0o, 0b or a leading-zero octal integer
// (underscores between digits), or a float.
func phpNumber(text string) any {
	t := strings.ReplaceAll(text, "_", "")
	if len(t) > 1 && t[0] == '0' && t[1] >= '0' && t[1] <= '9' {
		t = "0o" + t[1:] // PHP's 0454 is octal
	}
	if n, err := strconv.ParseInt(t, 0, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64); err == nil {
		return f
	}
	return phpUnknown{}
}

// castPHP applies a cast to a known value; others stay unknown.
func castPHP(cast string, v any) any {
	switch cast {
	case "int", "integer":
		switch x := v.(type) {
		case string:
			return int64(phpIntCast(x))
		case int64:
			return x
		case bool:
			if x {
				return int64(1)
			}
			return int64(0)
		case nil:
			return int64(0)
		}
	case "string":
		if s, ok := phpString(v); ok {
			return s // true "1", false and null "", floats as PHP writes them
		}
	case "float", "double":
		switch x := numeric(v).(type) {
		case int64:
			return float64(x)
		case float64:
			return x
		}
	case "bool", "boolean":
		switch x := v.(type) {
		case string:
			return x != "" && x != "0"
		case int64:
			return x != 0
		case bool:
			return x
		case nil:
			return false
		}
	}
	return phpUnknown{}
}

// envValue is env(name, def) as Laravel's helper gives it, with lookup reading the variable (the
// process environment first, then the .env file, as phpdotenv's immutable loading does): "true",
// "false", "null", "empty" (and their parenthesized forms) become their values, and an unset variable
// gives the default.
func envValue(name string, def any, lookup func(string) (string, bool)) any {
	if lookup == nil {
		return def
	}
	raw, ok := lookup(name)
	if !ok {
		return def
	}
	switch strings.ToLower(raw) {
	case "true", "(true)":
		return true
	case "false", "(false)":
		return false
	case "null", "(null)":
		return nil
	case "empty", "(empty)":
		return ""
	}
	if n := len(raw); n >= 2 && (raw[0] == '"' || raw[0] == '\'') && raw[n-1] == raw[0] {
		return raw[1 : n-1] // Env::get strips one pair of quotes
	}
	return raw
}
