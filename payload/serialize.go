package payload

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrUnsupported is wrapped when Serialize is given a Go value that has no PHP form.
var ErrUnsupported = errors.New("value cannot be serialized for PHP")

// maxSerializeDepth bounds nesting in Serialize, so that a cycle built in Go (which PHP would write as a
// back-reference) is an error rather than a stack overflow.
const maxSerializeDepth = 4096

// Serialize writes v as PHP's serialize() does (PHP 7.4 and 8.x with serialize_precision = -1). A value
// read by Unserialize is written back byte for byte, back-references included. Besides the types listed
// on Value it accepts int and []Value (written as a list).
func Serialize(v Value) ([]byte, error) {
	e := encoder{buf: make([]byte, 0, 256)}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type encoder struct{ buf []byte }

func (e *encoder) str(s string) {
	e.buf = append(e.buf, "s:"...)
	e.buf = strconv.AppendInt(e.buf, int64(len(s)), 10)
	e.buf = append(e.buf, ':', '"')
	e.buf = append(e.buf, s...)
	e.buf = append(e.buf, '"', ';')
}

func (e *encoder) int(n int64) {
	e.buf = append(e.buf, 'i', ':')
	e.buf = strconv.AppendInt(e.buf, n, 10)
	e.buf = append(e.buf, ';')
}

func (e *encoder) header(tag string, class string) {
	e.buf = append(e.buf, tag...)
	e.buf = strconv.AppendInt(e.buf, int64(len(class)), 10)
	e.buf = append(e.buf, ':', '"')
	e.buf = append(e.buf, class...)
	e.buf = append(e.buf, '"', ':')
}

func (e *encoder) ref(r refInfo) {
	e.buf = append(e.buf, r.kind, ':')
	e.buf = strconv.AppendInt(e.buf, r.index, 10)
	e.buf = append(e.buf, ';')
}

func (e *encoder) value(v Value, depth int) error {
	if depth > maxSerializeDepth {
		return fmt.Errorf("serialize: nesting deeper than %d levels (a cycle?): %w", maxSerializeDepth, ErrUnsupported)
	}
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, 'N', ';')
	case bool:
		if v {
			e.buf = append(e.buf, "b:1;"...)
		} else {
			e.buf = append(e.buf, "b:0;"...)
		}
	case int64:
		e.int(v)
	case int:
		e.int(int64(v))
	case float64:
		e.buf = append(e.buf, 'd', ':')
		e.buf = AppendFloat(e.buf, v)
		e.buf = append(e.buf, ';')
	case string:
		e.str(v)
	case *Array:
		if v == nil {
			e.buf = append(e.buf, 'N', ';')
			return nil
		}
		e.buf = append(e.buf, 'a', ':')
		e.buf = strconv.AppendInt(e.buf, int64(len(v.Entries)), 10)
		e.buf = append(e.buf, ':', '{')
		for _, en := range v.Entries {
			switch k := en.Key.(type) {
			case int64:
				e.int(k)
			case int:
				e.int(int64(k))
			case string:
				e.str(k)
			default:
				return fmt.Errorf("serialize: array key of type %T: %w", en.Key, ErrUnsupported)
			}
			if err := e.entry(en.Value, en.ref, depth); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
	case []Value:
		return e.value(NewList(v...), depth)
	case *Object:
		if v == nil {
			e.buf = append(e.buf, 'N', ';')
			return nil
		}
		e.header("O:", v.Class)
		e.buf = strconv.AppendInt(e.buf, int64(len(v.Props)), 10)
		e.buf = append(e.buf, ':', '{')
		for i := range v.Props {
			p := &v.Props[i]
			e.propName(p)
			if err := e.entry(p.Value, p.ref, depth); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
	case *Enum:
		e.buf = append(e.buf, 'E', ':')
		e.buf = strconv.AppendInt(e.buf, int64(len(v.Class)+1+len(v.Case)), 10)
		e.buf = append(e.buf, ':', '"')
		e.buf = append(e.buf, v.Class...)
		e.buf = append(e.buf, ':')
		e.buf = append(e.buf, v.Case...)
		e.buf = append(e.buf, '"', ';')
	case *Custom:
		e.header("C:", v.Class)
		e.buf = strconv.AppendInt(e.buf, int64(len(v.Data)), 10)
		e.buf = append(e.buf, ':', '{')
		e.buf = append(e.buf, v.Data...)
		e.buf = append(e.buf, '}')
	default:
		return fmt.Errorf("serialize: Go type %T: %w", v, ErrUnsupported)
	}
	return nil
}

func (e *encoder) entry(v Value, r refInfo, depth int) error {
	if r.kind != 0 {
		e.ref(r)
		return nil
	}
	return e.value(v, depth+1)
}

func (e *encoder) propName(p *Property) {
	if p.intKey {
		if n, err := strconv.ParseInt(p.Name, 10, 64); err == nil {
			e.int(n)
			return
		}
	}
	switch p.Visibility {
	case Protected:
		e.buf = append(e.buf, "s:"...)
		e.buf = strconv.AppendInt(e.buf, int64(len(p.Name)+3), 10)
		e.buf = append(e.buf, ":\"\x00*\x00"...)
	case Private:
		e.buf = append(e.buf, "s:"...)
		e.buf = strconv.AppendInt(e.buf, int64(len(p.Name)+2+len(p.Declarer)), 10)
		e.buf = append(e.buf, ':', '"', 0)
		e.buf = append(e.buf, p.Declarer...)
		e.buf = append(e.buf, 0)
	default:
		e.str(p.Name)
		return
	}
	e.buf = append(e.buf, p.Name...)
	e.buf = append(e.buf, '"', ';')
}

// AppendFloat appends f as PHP 8 prints a float in serialize() and var_export() with the default
// serialize_precision of -1: the shortest decimal that reads back to the same float, in plain notation
// when the decimal exponent is from -4 to 16 ("0.0001", "9.75", "100", "10000000000000000", "-0"), and
// otherwise as "d.dddE+X" with at least one fractional digit ("1.0E-5", "1.0E+17", "1.0E+25"); NAN,
// INF and -INF as such.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NAN"...)
	case math.IsInf(f, 1):
		return append(dst, "INF"...)
	case math.IsInf(f, -1):
		return append(dst, "-INF"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	// s is "D[.DDD]e±XX": collect the digits and the exponent.
	epos := len(s) - 1
	for s[epos] != 'e' {
		epos--
	}
	var digits [24]byte
	nd := 0
	for _, c := range s[:epos] {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(s[epos+1:]))
	decpt := exp + 1 // digits are 0.DDD × 10^decpt
	if decpt < -3 || decpt > 17 {
		dst = append(dst, digits[0], '.')
		if nd == 1 {
			dst = append(dst, '0')
		} else {
			dst = append(dst, digits[1:nd]...)
		}
		dst = append(dst, 'E')
		if exp >= 0 {
			dst = append(dst, '+')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	switch {
	case decpt <= 0:
		dst = append(dst, '0', '.')
		for range -decpt {
			dst = append(dst, '0')
		}
		return append(dst, digits[:nd]...)
	case decpt < nd:
		dst = append(dst, digits[:decpt]...)
		dst = append(dst, '.')
		return append(dst, digits[decpt:nd]...)
	default:
		dst = append(dst, digits[:nd]...)
		for range decpt - nd {
			dst = append(dst, '0')
		}
		return dst
	}
}
