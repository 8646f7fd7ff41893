package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/payload"
)

// version is the configured Laravel version, read as every package reads it; err says why the text
// is not a version (Validate reports it), and the default version stands in meanwhile.
type version struct {
	payload.Version
	err error
}

func parseVersion(s string) version {
	v, err := payload.ParseVersion(s)
	if err != nil {
		v, _ = payload.ParseVersion(DefaultLaravelVersion)
	}
	return version{Version: v, err: err}
}

func (v version) atLeast(major, minor int) bool { return v.AtLeast(major, minor) }

// LaravelAtLeast reports whether the configured Laravel version is major.minor or later. A version that
// does not parse counts as the default, 8.83 (Validate reports it).
func (c *Config) LaravelAtLeast(major, minor int) bool {
	return parseVersion(c.LaravelVersion).atLeast(major, minor)
}

var (
	typDuration  = reflect.TypeFor[time.Duration]()
	typStrings   = reflect.TypeFor[[]string]()
	typInts      = reflect.TypeFor[[]int]()
	typRoutes    = reflect.TypeFor[[]Route]()
	typModels    = reflect.TypeFor[[]Model]()
	typUniqueVia = reflect.TypeFor[[]UniqueVia]()
)

// errUnset marks a value that sets nothing (an empty environment value for a number).
var errUnset = errors.New("unset")

// convert turns a raw value from the environment, YAML or an override into the Go type of a key.
func convert(t reflect.Type, raw any) (any, error) {
	if s, ok := raw.(string); ok && t != reflect.TypeFor[string]() && t != typStrings && strings.TrimSpace(s) == "" {
		return nil, errUnset
	}
	switch t {
	case typDuration:
		return toDuration(raw)
	case typStrings:
		return toStrings(raw)
	case typInts:
		return toInts(raw)
	case typRoutes:
		return toRoutes(raw)
	case typRateLimits:
		return toRateLimits(raw)
	case typModels:
		return toModels(raw)
	case typUniqueVia:
		return toUniqueVia(raw)
	}
	switch t.Kind() {
	case reflect.String:
		switch v := raw.(type) {
		case string:
			return v, nil
		case int, int64, bool:
			return fmt.Sprint(v), nil
		case float64:
			// YAML reads 12.50 as the number 12.5: the text as written is lost, so ask for quotes.
			return nil, fmt.Errorf("got the number %v; quote it to keep it as written, e.g. \"%v\"", v, v)
		}
		return nil, fmt.Errorf("want a string, got %s", describe(raw))
	case reflect.Int:
		return toInt(raw)
	case reflect.Bool:
		switch v := raw.(type) {
		case bool:
			return v, nil
		case string:
			if b, ok := laravelEnvValue(strings.TrimSpace(v)); ok {
				if p, err := strconv.ParseBool(b); err == nil {
					return p, nil
				}
			}
		}
		return nil, fmt.Errorf("want true or false, got %s", describe(raw))
	}
	return nil, fmt.Errorf("cannot set a value of type %s", t)
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

func toInt(raw any) (int, error) {
	switch v := raw.(type) {
	case int:
		return v, nil
	case int64:
		return int(v), nil
	case uint64:
		if v <= math.MaxInt32 {
			return int(v), nil
		}
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int(v), nil
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("want a whole number, got %s", describe(raw))
}

// toDuration reads a duration: a number is seconds (as every `queue:work` option counts), a string is
// either a number of seconds or a Go duration such as "90s" or "1m30s".
func toDuration(raw any) (time.Duration, error) {
	secs := func(f float64) (time.Duration, error) {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e9 {
			return 0, fmt.Errorf("want seconds or a duration such as \"90s\", got %s", describe(raw))
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	switch v := raw.(type) {
	case time.Duration:
		return v, nil
	case int:
		return secs(float64(v))
	case int64:
		return secs(float64(v))
	case float64:
		return secs(v)
	case string:
		s := strings.TrimSpace(v)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return secs(f)
		}
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
	}
	return 0, fmt.Errorf("want seconds or a duration such as \"90s\", got %s", describe(raw))
}

// toStrings reads a list: a YAML sequence of scalars, or a comma-separated string.
func toStrings(raw any) ([]string, error) {
	switch v := raw.(type) {
	case []string:
		return v, nil
	case string:
		var out []string
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			switch e.(type) {
			case string, int, int64, float64, bool:
				out = append(out, fmt.Sprint(e))
			default:
				return nil, fmt.Errorf("want a list of strings, got an element %s", describe(e))
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list or a comma-separated string, got %s", describe(raw))
}

// toInts reads a list of whole numbers: a YAML sequence, one number, or a comma-separated string.
func toInts(raw any) ([]int, error) {
	switch v := raw.(type) {
	case []int:
		return v, nil
	case int, int64, float64:
		n, err := toInt(v)
		return []int{n}, err
	case string:
		parts, _ := toStrings(v)
		out := make([]int, 0, len(parts))
		for _, p := range parts {
			n, err := toInt(p)
			if err != nil {
				return nil, fmt.Errorf("want comma-separated whole numbers, got %s", describe(raw))
			}
			out = append(out, n)
		}
		return out, nil
	case []any:
		out := make([]int, 0, len(v))
		for _, e := range v {
			n, err := toInt(e)
			if err != nil {
				return nil, fmt.Errorf("want a list of whole numbers: %w", err)
			}
			out = append(out, n)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list of whole numbers, got %s", describe(raw))
}

// routeKeys are the keys of one route in YAML.
var routeKeys = []string{"builtin", "class", "exec", "http", "timeout", "unique_id", "unique_until_processing"}

// toRoutes reads the routes list: a YAML sequence of mappings with the keys in routeKeys.
func toRoutes(raw any) ([]Route, error) {
	if rs, ok := raw.([]Route); ok {
		return rs, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("want a list of routes such as [{class: App\\Jobs\\X, exec: [bin, arg]}], got %s", describe(raw))
	}
	out := make([]Route, 0, len(list))
	var errs []error
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("routes[%d]: want a mapping with class and one of exec, http, builtin, got %s", i, describe(e)))
			continue
		}
		var r Route
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := m[k]
			var err error
			switch strings.ToLower(k) {
			case "class":
				r.Class, err = scalarString(v)
			case "exec":
				if s, ok := v.(string); ok {
					r.Exec = []string{s}
				} else {
					r.Exec, err = toStrings(v)
				}
			case "http":
				r.HTTP, err = scalarString(v)
			case "builtin":
				r.Builtin, err = scalarString(v)
			case "timeout":
				r.Timeout, err = toDuration(v)
			case "unique_id":
				r.UniqueID, err = scalarString(v)
			case "unique_until_processing":
				var b any
				if b, err = convert(reflect.TypeFor[bool](), v); err == nil {
					r.UniqueUntilProcessing = b.(bool)
				}
			default:
				hint := ""
				if c := closest(strings.ToLower(k), routeKeys); c != "" {
					hint = fmt.Sprintf(" (did you mean %q?)", c)
				}
				err = fmt.Errorf("unknown key%s; a route has %s", hint, strings.Join(routeKeys, ", "))
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("routes[%d].%s: %w", i, k, err))
			}
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// modelKeys are the keys of one models entry in YAML.
var modelKeys = []string{"class", "connection", "key", "table"}

// toModels reads the models list: a YAML sequence of mappings with the keys in modelKeys.
func toModels(raw any) ([]Model, error) {
	return toEntries(raw, "models", "a model", modelKeys, `[{class: App\Models\Person, table: people}]`, func(m *Model) map[string]*string {
		return map[string]*string{"class": &m.Class, "table": &m.Table, "key": &m.Key, "connection": &m.Connection}
	})
}

// uniqueViaKeys are the keys of one unique_via entry in YAML.
var uniqueViaKeys = []string{"class", "store"}

// toUniqueVia reads the unique_via list: a YAML sequence of mappings with the keys in uniqueViaKeys.
func toUniqueVia(raw any) ([]UniqueVia, error) {
	return toEntries(raw, "unique_via", "an entry", uniqueViaKeys, `[{class: App\Jobs\BuildReport, store: redis}]`, func(u *UniqueVia) map[string]*string {
		return map[string]*string{"class": &u.Class, "store": &u.Store}
	})
}

// toEntries reads a YAML sequence of mappings whose values are strings into T, whose fields by key
// fields returns; list names the setting and example shows one.
func toEntries[T any](raw any, list, one string, keys []string, example string, fields func(*T) map[string]*string) ([]T, error) {
	if es, ok := raw.([]T); ok {
		return es, nil
	}
	seq, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("want a list of %s such as %s, got %s", strings.ReplaceAll(list, "_", " "), example, describe(raw))
	}
	out := make([]T, 0, len(seq))
	var errs []error
	for i, e := range seq {
		m, ok := e.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%s[%d]: want a mapping with %s, got %s", list, i, strings.Join(keys, ", "), describe(e)))
			continue
		}
		var entry T
		dsts := fields(&entry)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			var err error
			if dst, ok := dsts[strings.ToLower(k)]; ok {
				*dst, err = scalarString(m[k])
			} else {
				hint := ""
				if c := closest(strings.ToLower(k), keys); c != "" {
					hint = fmt.Sprintf(" (did you mean %q?)", c)
				}
				err = fmt.Errorf("unknown key%s; %s has %s", hint, one, strings.Join(keys, ", "))
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d].%s: %w", list, i, k, err))
			}
		}
		out = append(out, entry)
	}
	return out, errors.Join(errs...)
}

func scalarString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case int, int64, float64, bool:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("want a string, got %s", describe(v))
}
