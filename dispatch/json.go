package dispatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/artisan-go/artisan-go/payload"
)

// FromJSON converts a JSON value into the PHP value json_decode($json, true) gives: objects become
// arrays with their keys in order, integers int64, other numbers float64.
func FromJSON(b []byte) (payload.Value, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := fromJSON(d)
	if err != nil {
		return nil, fmt.Errorf("read JSON value: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("read JSON value: more than one value")
	}
	return v, nil
}

func fromJSON(d *json.Decoder) (payload.Value, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		a := &payload.Array{}
		for d.More() {
			var key any
			if t == '{' {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				// PHP turns decimal integer keys into integer keys.
				if n, err := strconv.ParseInt(k.(string), 10, 64); err == nil && strconv.FormatInt(n, 10) == k.(string) {
					key = n
				} else {
					key = k
				}
			}
			v, err := fromJSON(d)
			if err != nil {
				return nil, err
			}
			if key == nil {
				a.Append(v)
			} else {
				a.Set(key, v)
			}
		}
		if _, err := d.Token(); err != nil {
			return nil, err
		}
		return a, nil
	case json.Number:
		if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return n, nil
		}
		// Beyond a float's range ParseFloat gives ±Inf (and 0 below it) with ErrRange, as PHP's
		// json_decode gives INF and -INF.
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("number %s: %w", t, err)
		}
		return f, nil
	default:
		return t, nil // string, bool or nil
	}
}
