package payload

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by every error about malformed PHP serialized data.
var ErrSyntax = errors.New("malformed PHP serialized data")

// SyntaxError reports malformed PHP serialized data and the byte offset where reading stopped.
type SyntaxError struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	// Msg says what was expected or what is wrong.
	Msg string
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("php unserialize: %s at offset %d", e.Msg, e.Offset)
}

// Unwrap returns ErrSyntax.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Default limits of Unserialize. The depth is PHP's own default (unserialize_max_depth): what PHP's
// worker reads, this reads, and the bound keeps a hostile payload from exhausting the stack.
const (
	// DefaultMaxDepth is how deeply arrays and objects may nest.
	DefaultMaxDepth = 4096
	// DefaultMaxSize is the largest input accepted, in bytes.
	DefaultMaxSize = 64 << 20
)

type options struct {
	maxDepth int
	maxSize  int
}

// Option changes a limit of Unserialize.
type Option func(*options)

// WithMaxDepth sets how deeply arrays and objects may nest (DefaultMaxDepth when not given).
func WithMaxDepth(n int) Option { return func(o *options) { o.maxDepth = n } }

// WithMaxSize sets the largest input accepted, in bytes (DefaultMaxSize when not given).
func WithMaxSize(n int) Option { return func(o *options) { o.maxSize = n } }

// Unserialize decodes one value written by PHP's serialize(). It is strict where PHP is lenient: declared
// lengths and counts must match, nothing may follow the value, integers must fit in int64, and nesting
// and size are bounded by the options. Every failure is a *SyntaxError (wrapping ErrSyntax) with the
// byte offset; Unserialize never panics. See Value for the Go types it returns.
func Unserialize(b []byte, opts ...Option) (Value, error) {
	o := newOptions(opts)
	if err := o.checkSize(len(b)); err != nil {
		return nil, err
	}
	// One string copy of the input backs every decoded string, so reading a string allocates nothing.
	return unserialize(string(b), o)
}

// unserializeString is Unserialize for input that is already a string, which then backs every decoded
// string without a copy.
func unserializeString(s string, opts ...Option) (Value, error) {
	o := newOptions(opts)
	if err := o.checkSize(len(s)); err != nil {
		return nil, err
	}
	return unserialize(s, o)
}

// newOptions applies opts to the defaults.
func newOptions(opts []Option) options {
	o := options{maxDepth: DefaultMaxDepth, maxSize: DefaultMaxSize}
	if len(opts) == 0 {
		return o
	}
	return applyOptions(o, opts)
}

// applyOptions applies opts to o. It is apart from newOptions because the options see o's address,
// which puts o on the heap; without options nothing is allocated.
func applyOptions(o options, opts []Option) options {
	for _, fn := range opts {
		fn(&o)
	}
	return o
}

// checkSize fails for an input of n bytes over the size limit.
func (o options) checkSize(n int) error {
	if n > o.maxSize {
		return &SyntaxError{Offset: o.maxSize, Msg: fmt.Sprintf("input of %d bytes is over the %d-byte limit", n, o.maxSize)}
	}
	return nil
}

// unserialize decodes s, which is within the size limit.
func unserialize(s string, o options) (Value, error) {
	// Back-references need every value numbered; inputs without "r:" or "R:" skip that bookkeeping.
	d := decoder{s: s, opts: o}
	d.track = strings.Contains(s, "r:") || strings.Contains(s, "R:")
	v, _, err := d.value()
	if err != nil {
		return nil, err
	}
	if d.pos != len(s) {
		return nil, d.errf("unexpected data after the value")
	}
	return v, nil
}

// decoder reads one serialized value from a string, so that decoded strings share its bytes. slots holds every value PHP numbers for r:/R: (every value but
// R: itself and array keys), in order, starting at 1.
type decoder struct {
	s     string // the input
	track bool   // record slots for back-references
	pos   int
	depth int
	opts  options
	slots []Value
}

func (d *decoder) errf(format string, args ...any) error {
	return &SyntaxError{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) errAt(off int, msg string) error { return &SyntaxError{Offset: off, Msg: msg} }

// expect consumes the literal s.
func (d *decoder) expect(s string) error {
	if len(d.s)-d.pos < len(s) || d.s[d.pos:d.pos+len(s)] != s {
		return d.errf("expected %q", s)
	}
	d.pos += len(s)
	return nil
}

// length reads an unsigned decimal (PHP's uiv) followed by term, and checks it against the bytes left.
func (d *decoder) length(term byte, what string) (int, error) {
	start := d.pos
	n := 0
	for d.pos < len(d.s) && d.s[d.pos] >= '0' && d.s[d.pos] <= '9' {
		if n > len(d.s) {
			return 0, d.errAt(start, what+" is larger than the input")
		}
		n = n*10 + int(d.s[d.pos]-'0')
		d.pos++
	}
	if d.pos == start {
		return 0, d.errf("expected a digit in %s", what)
	}
	if d.pos >= len(d.s) || d.s[d.pos] != term {
		return 0, d.errf("expected %q after %s", term, what)
	}
	d.pos++
	if n > len(d.s)-d.pos {
		return 0, d.errAt(start, fmt.Sprintf("%s %d is larger than the %d bytes left", what, n, len(d.s)-d.pos))
	}
	return n, nil
}

// integer reads PHP's iv ([+-]?[0-9]+) followed by term, exactly into an int64.
func (d *decoder) integer(term byte) (int64, error) {
	start := d.pos
	neg := false
	if d.pos < len(d.s) && (d.s[d.pos] == '-' || d.s[d.pos] == '+') {
		neg = d.s[d.pos] == '-'
		d.pos++
	}
	digits := d.pos
	var u uint64
	for d.pos < len(d.s) && d.s[d.pos] >= '0' && d.s[d.pos] <= '9' {
		c := uint64(d.s[d.pos] - '0')
		if u > (math.MaxUint64-c)/10 {
			return 0, d.errAt(start, "integer out of the int64 range")
		}
		u = u*10 + c
		d.pos++
	}
	if d.pos == digits {
		return 0, d.errf("expected a digit")
	}
	if d.pos >= len(d.s) || d.s[d.pos] != term {
		return 0, d.errf("expected %q after the integer", term)
	}
	d.pos++
	if neg {
		if u > 1<<63 {
			return 0, d.errAt(start, "integer out of the int64 range")
		}
		return -int64(u), nil
	}
	if u > math.MaxInt64 {
		return 0, d.errAt(start, "integer out of the int64 range")
	}
	return int64(u), nil
}

// float reads the body of `d:` up to and including ';', following PHP's grammar: an optionally signed
// decimal with an optional fraction and exponent, or NAN, INF, -INF.
func (d *decoder) float() (float64, error) {
	rest := d.s[d.pos:]
	for _, s := range [...]struct {
		lit string
		v   float64
	}{{"NAN;", math.NaN()}, {"INF;", math.Inf(1)}, {"-INF;", math.Inf(-1)}} {
		if len(rest) >= len(s.lit) && rest[:len(s.lit)] == s.lit {
			d.pos += len(s.lit)
			return s.v, nil
		}
	}
	start := d.pos
	i := d.pos
	if i < len(d.s) && (d.s[i] == '-' || d.s[i] == '+') {
		i++
	}
	intDigits := skipDigits(d.s, i)
	fracDigits := 0
	j := intDigits
	if j < len(d.s) && d.s[j] == '.' {
		fracDigits = skipDigits(d.s, j+1) - (j + 1)
		j = j + 1 + fracDigits
	}
	if intDigits == i && fracDigits == 0 {
		d.pos = i
		return 0, d.errf("expected a float")
	}
	if j < len(d.s) && (d.s[j] == 'e' || d.s[j] == 'E') {
		k := j + 1
		if k < len(d.s) && (d.s[k] == '-' || d.s[k] == '+') {
			k++
		}
		e := skipDigits(d.s, k)
		if e == k {
			d.pos = k
			return 0, d.errf("expected exponent digits")
		}
		j = e
	}
	if j >= len(d.s) || d.s[j] != ';' {
		d.pos = j
		return 0, d.errf("expected ';' after the float")
	}
	f, err := strconv.ParseFloat(d.s[start:j], 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, d.errAt(start, "invalid float")
	}
	d.pos = j + 1
	return f, nil
}

func skipDigits(b string, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// quoted reads `"<n bytes>"` after a length n.
func (d *decoder) quoted(n int) (string, error) {
	if err := d.expect(`"`); err != nil {
		return "", err
	}
	if n > len(d.s)-d.pos {
		return "", d.errf("declared length %d runs past the end of the input", n)
	}
	s := d.s[d.pos : d.pos+n]
	d.pos += n
	if d.pos >= len(d.s) || d.s[d.pos] != '"' {
		return "", d.errf(`expected '"' after %d bytes; the declared length does not match`, n)
	}
	d.pos++
	return s, nil
}

// className reads `<len>:"<Class>"` and checks the name as PHP does.
func (d *decoder) className() (string, error) {
	n, err := d.length(':', "class name length")
	if err != nil {
		return "", err
	}
	start := d.pos + 1
	name, err := d.quoted(n)
	if err != nil {
		return "", err
	}
	if !validClassName(name) {
		return "", d.errAt(start, fmt.Sprintf("invalid class name %q", name))
	}
	return name, nil
}

// validClassName mirrors PHP's check: letters, digits, '_', '\\' and bytes from 0x80.
func validClassName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '\\' || c >= 0x80) {
			return false
		}
	}
	return true
}

// count reads an element count followed by ":{" and checks that that many entries of at least six bytes
// each (`i:0;N;`) can fit in what is left, so nothing is allocated from a count that cannot be true.
func (d *decoder) count(what string) (int, error) {
	start := d.pos
	n, err := d.length(':', what)
	if err != nil {
		return 0, err
	}
	if err := d.expect("{"); err != nil {
		return 0, err
	}
	if n > (len(d.s)-d.pos)/6 {
		return 0, d.errAt(start, fmt.Sprintf("%s %d cannot fit in the %d bytes left", what, n, len(d.s)-d.pos))
	}
	return n, nil
}

func (d *decoder) enter() error {
	d.depth++
	if d.depth > d.opts.maxDepth {
		return d.errf("nesting deeper than %d levels", d.opts.maxDepth)
	}
	return nil
}

// value reads one value. When it was written as a back-reference, ref says so and the value returned is
// the one referred to.
func (d *decoder) value() (Value, refInfo, error) {
	if d.pos+2 > len(d.s) {
		return nil, refInfo{}, d.errf("unexpected end of input, expected a value")
	}
	tag := d.s[d.pos]
	if tag == 'r' || tag == 'R' {
		v, idx, err := d.reference()
		if err == nil && tag == 'r' && d.track {
			// PHP numbers r: like any value; only R: takes no slot of its own.
			d.slots = append(d.slots, v)
		}
		return v, refInfo{kind: tag, index: idx}, err
	}
	slot := -1
	if d.track {
		slot = len(d.slots)
		d.slots = append(d.slots, nil)
	}
	start := d.pos
	if tag != 'N' && d.s[d.pos+1] != ':' {
		d.pos++
		return nil, refInfo{}, d.errf("expected ':' after %q", tag)
	}
	d.pos += 2
	var v Value
	var err error
	switch tag {
	case 'N':
		if d.s[start+1] != ';' {
			d.pos = start + 1
			return nil, refInfo{}, d.errf("expected ';' after 'N'")
		}
	case 'b':
		if d.pos+2 > len(d.s) || (d.s[d.pos] != '0' && d.s[d.pos] != '1') || d.s[d.pos+1] != ';' {
			return nil, refInfo{}, d.errf("expected 0; or 1; for a bool")
		}
		v = d.s[d.pos] == '1'
		d.pos += 2
	case 'i':
		v, err = d.integer(';')
	case 'd':
		v, err = d.float()
	case 's':
		var n int
		if n, err = d.length(':', "string length"); err == nil {
			var s string
			if s, err = d.quoted(n); err == nil {
				v, err = s, d.expect(";")
			}
		}
	case 'a':
		v, err = d.array(slot)
	case 'O':
		v, err = d.object(slot)
	case 'E':
		v, err = d.enum()
	case 'C':
		v, err = d.custom()
	default:
		d.pos = start
		return nil, refInfo{}, d.errf("unknown type %q", tag)
	}
	if err != nil {
		return nil, refInfo{}, err
	}
	d.setSlot(slot, v)
	return v, refInfo{}, nil
}

func (d *decoder) setSlot(slot int, v Value) {
	if slot >= 0 {
		d.slots[slot] = v
	}
}

// reference reads `r:N;` or `R:N;` and returns the value in slot N.
func (d *decoder) reference() (Value, int64, error) {
	start := d.pos
	d.pos++
	if err := d.expect(":"); err != nil {
		return nil, 0, err
	}
	digits := d.pos
	idx, err := d.integer(';')
	if err != nil {
		return nil, 0, err
	}
	if d.s[digits] < '0' || d.s[digits] > '9' || idx < 1 || idx > int64(len(d.slots)) {
		return nil, 0, d.errAt(start, fmt.Sprintf("back-reference %d points to no earlier value", idx))
	}
	return d.slots[idx-1], idx, nil
}

func (d *decoder) array(slot int) (Value, error) {
	n, err := d.count("array size")
	if err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	a := &Array{Entries: make([]ArrayEntry, 0, n)}
	d.setSlot(slot, a)
	for range n {
		n, k, isInt, err := d.key("array key")
		if err != nil {
			return nil, err
		}
		var key Value = n
		if !isInt {
			// PHP stores "5" as the integer key 5.
			key = arrayKey(k)
		}
		v, ref, err := d.value()
		if err != nil {
			return nil, err
		}
		a.Entries = append(a.Entries, ArrayEntry{Key: key, Value: v, ref: ref})
	}
	d.depth--
	if err := d.expect("}"); err != nil {
		return nil, d.errf("expected '}' after %d array entries; the declared size does not match", n)
	}
	return a, nil
}

// key reads an array key or property name: `i:N;` or `s:N:"...";`. It returns the integer and true for
// the first, the string and false for the second, so that a property name is never boxed in a Value.
func (d *decoder) key(what string) (int64, string, bool, error) {
	if d.pos+2 > len(d.s) || d.s[d.pos+1] != ':' || (d.s[d.pos] != 'i' && d.s[d.pos] != 's') {
		return 0, "", false, d.errf("expected an integer or string %s", what)
	}
	tag := d.s[d.pos]
	d.pos += 2
	if tag == 'i' {
		n, err := d.integer(';')
		return n, "", true, err
	}
	n, err := d.length(':', "string length")
	if err != nil {
		return 0, "", false, err
	}
	s, err := d.quoted(n)
	if err != nil {
		return 0, "", false, err
	}
	return 0, s, false, d.expect(";")
}

func (d *decoder) object(slot int) (Value, error) {
	class, err := d.className()
	if err != nil {
		return nil, err
	}
	if err := d.expect(":"); err != nil {
		return nil, err
	}
	n, err := d.count("property count")
	if err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	o := &Object{Class: class, Props: make([]Property, 0, n)}
	d.setSlot(slot, o)
	for range n {
		n, k, isInt, err := d.key("property name")
		if err != nil {
			return nil, err
		}
		var p Property
		if isInt {
			p.Name, p.intKey = strconv.FormatInt(n, 10), true
		} else {
			p.Name, p.Visibility, p.Declarer = unmangle(k)
		}
		if p.Value, p.ref, err = d.value(); err != nil {
			return nil, err
		}
		o.Props = append(o.Props, p)
	}
	d.depth--
	if err := d.expect("}"); err != nil {
		return nil, d.errf("expected '}' after %d properties; the declared count does not match", n)
	}
	return o, nil
}

// unmangle splits a serialized property name into name, visibility and declaring class.
func unmangle(s string) (string, Visibility, string) {
	if len(s) < 2 || s[0] != 0 {
		return s, Public, ""
	}
	for i := 1; i < len(s); i++ {
		if s[i] == 0 {
			class := s[1:i]
			if class == "*" {
				return s[i+1:], Protected, ""
			}
			return s[i+1:], Private, class
		}
	}
	return s, Public, ""
}

func (d *decoder) enum() (Value, error) {
	n, err := d.length(':', "enum length")
	if err != nil {
		return nil, err
	}
	start := d.pos + 1
	s, err := d.quoted(n)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			if !validClassName(s[:i]) || i == len(s)-1 {
				break
			}
			return &Enum{Class: s[:i], Case: s[i+1:]}, d.expect(";")
		}
	}
	return nil, d.errAt(start, fmt.Sprintf("invalid enum %q, expected Class:Case", s))
}

func (d *decoder) custom() (Value, error) {
	class, err := d.className()
	if err != nil {
		return nil, err
	}
	if err := d.expect(":"); err != nil {
		return nil, err
	}
	n, err := d.length(':', "data length")
	if err != nil {
		return nil, err
	}
	if err := d.expect("{"); err != nil {
		return nil, err
	}
	if n > len(d.s)-d.pos {
		return nil, d.errf("declared length %d runs past the end of the input", n)
	}
	data := d.s[d.pos : d.pos+n]
	d.pos += n
	if err := d.expect("}"); err != nil {
		return nil, d.errf("expected '}' after %d bytes; the declared length does not match", n)
	}
	return &Custom{Class: class, Data: data}, nil
}
