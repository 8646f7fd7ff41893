package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// RetryUntil is a new value for a payload's retryUntil key: a Unix time, or null when Unix is nil.
type RetryUntil struct {
	Unix *int64
}

// RetryPayload returns the payload `php artisan queue:retry` pushes back onto the queue for a failed
// job's payload: the JSON read as json_decode($payload, true) reads it, `attempts` set to 0 when it is
// present and not null, `retryUntil` replaced (or appended) when until is not nil, as refreshRetryUntil does with the
// value of the job's retryUntil() method, and the whole
// written again by json_encode with its default flags, as RetryCommand does in every version from 8.x
// to 13.x: `/` escaped as `\/`, every non-ASCII character as \uXXXX, an object whose keys are exactly
// "0".."n-1" (or an empty object) written as a list, and floats in PHP's shortest form.
func RetryPayload(raw []byte, until *RetryUntil) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var node jsonNode
	if err := node.read(d); err != nil {
		return nil, fmt.Errorf("retry payload: not JSON: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("retry payload: more than one JSON value")
	}
	if node.kind != '{' {
		return nil, errors.New("retry payload: not a JSON object")
	}
	if i := node.index("attempts"); i >= 0 && !node.items[i].isNull() {
		node.items[i] = jsonNode{scalar: json.Number("0")}
	}
	if until != nil {
		v := jsonNode{}
		if until.Unix != nil {
			v.scalar = json.Number(strconv.FormatInt(*until.Unix, 10))
		}
		if i := node.index("retryUntil"); i >= 0 {
			node.items[i] = v
		} else {
			node.keys = append(node.keys, "retryUntil")
			node.items = append(node.items, v)
		}
	}
	w := phpJSON{floats: true}
	node.write(&w)
	if w.err != nil {
		return nil, fmt.Errorf("retry payload: %w", w.err)
	}
	return w.b, nil
}

// index returns the position of an object's key, or -1. PHP keeps the last of duplicate keys.
func (n *jsonNode) index(key string) int {
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return i
		}
	}
	return -1
}

func (n *jsonNode) isNull() bool { return n.kind == 0 && n.scalar == nil }

// phpNumber writes a JSON number as json_encode writes what json_decode read: integers as they are,
// anything with a fraction or exponent (or too large for an int64) as a float in PHP's form.
func phpNumber(b []byte, n json.Number) []byte {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return append(b, s...)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return append(b, s...)
	}
	return AppendPHPFloat(b, f)
}

// AppendPHPFloat writes a finite float as json_encode does with serialize_precision -1: the shortest
// digits that read back the same, in fixed notation with no ".0" for whole numbers, and in exponent
// notation ("1.0e-5", "1.2345678901234568e+17") below 1e-4 or from 1e17 on.
func AppendPHPFloat(b []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if decpt := x + 1; decpt >= -3 && decpt <= 17 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	b = append(b, mant...)
	b = append(b, 'e')
	if x >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, int64(x), 10)
}

// AppendJSONString appends s as a JSON string the way PHP's json_encode writes it with its default
// flags: `/` escaped as `\/` and every non-ASCII character as \uXXXX. Invalid UTF-8 is an error, as
// in PHP.
func AppendJSONString(b []byte, s string) ([]byte, error) {
	return appendPHPString(b, s, false, nil)
}
