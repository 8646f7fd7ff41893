package payload

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// ErrBind is wrapped by every Bind error.
var ErrBind = errors.New("cannot bind PHP value")

// BindError says which property could not be bound into which Go type.
type BindError struct {
	// Path is the dotted path of the property or array key ("user.id", "tags.2"); empty at the top.
	Path string
	// Msg says what did not fit.
	Msg string
}

// Error implements error.
func (e *BindError) Error() string {
	if e.Path == "" {
		return "bind: " + e.Msg
	}
	return "bind " + e.Path + ": " + e.Msg
}

// Unwrap returns ErrBind.
func (e *BindError) Unwrap() error { return ErrBind }

// Unmarshaler is implemented by Go types that read themselves from a PHP value.
type Unmarshaler interface {
	UnmarshalPHP(v Value) error
}

// ModelIdentifier is Laravel's Illuminate\Contracts\Database\ModelIdentifier: what SerializesModels
// writes for an Eloquent model (ID a scalar) or collection (ID a list). Older versions write fewer
// properties: 5.4 class and id, 5.5 + connection, 5.6 + relations, 9.26 + collectionClass; a missing one
// is left at its zero value.
type ModelIdentifier struct {
	// Class is the model class, or with Laravel 12's morph map enabled, its morph alias.
	Class string `php:"class"`
	// ID is the key (int64 or string) of a single model, or a []any of keys for a collection.
	ID any `php:"id"`
	// Relations are the eager-loaded relation names to load again.
	Relations []string `php:"relations"`
	// Connection is the model's database connection name.
	Connection *string `php:"connection"`
	// CollectionClass is the collection class when it is not the plain Eloquent Collection.
	CollectionClass *string `php:"collectionClass"`
}

// ModelIdentifierClass is the class name PHP serializes a ModelIdentifier with.
const ModelIdentifierClass = `Illuminate\Contracts\Database\ModelIdentifier`

// IDs returns the identifier's keys as a list: the single key of a model, or the keys of a collection
// in order.
func (m ModelIdentifier) IDs() []any {
	switch id := m.ID.(type) {
	case nil:
		return nil
	case []any:
		return id
	default:
		return []any{id}
	}
}

// IsCollection reports whether the identifier stands for a collection of models.
func (m ModelIdentifier) IsCollection() bool {
	_, ok := m.ID.([]any)
	return ok
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	valueType   = reflect.TypeFor[Value]()
	midType     = reflect.TypeFor[ModelIdentifier]()
	enumType    = reflect.TypeFor[Enum]()
	objectType  = reflect.TypeFor[Object]()
	arrayType   = reflect.TypeFor[Array]()
	unmarshaler = reflect.TypeFor[Unmarshaler]()
)

// Bind copies a decoded value into dst, a non-nil pointer. Struct fields are matched to object
// properties (or string array keys) by their `php:"name"` tag, whatever the property's visibility; a
// field without a tag matches its name with the first letter lower-cased, and `php:"-"` skips a field. A
// property that is missing leaves the field unchanged (Laravel 9.4+ omits properties equal to their
// defaults). Bind fills strings, ints, floats, bools, slices, maps, nested structs, pointers, `any` and
// Value fields, ModelIdentifier, time.Time from a serialized DateTime/Carbon (in its own time zone),
// Enum and strings from enums (the case name), and types implementing Unmarshaler.
func Bind(v Value, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &BindError{Msg: fmt.Sprintf("destination must be a non-nil pointer, got %T", dst)}
	}
	if pv := reflect.ValueOf(v); pv.Kind() == reflect.Pointer && pv.IsNil() {
		v = nil // a nil *Object (a raw job's Command) is PHP's null
	}
	return bindValue(v, rv.Elem(), "", &bindState{left: bindBudget})
}

// bindBudget bounds the values Bind visits: back-references can make a small input stand for an
// exponentially large tree when the Go type is recursive.
const bindBudget = 1 << 20

// bindState counts what Bind may still visit and how deep it is.
type bindState struct{ left, depth int }

func bindErr(path, format string, args ...any) error {
	return &BindError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func bindValue(v Value, dst reflect.Value, path string, budget *bindState) error {
	if budget.left--; budget.left < 0 {
		return bindErr(path, "more than %d values to bind (a cycle or a reference bomb?)", bindBudget)
	}
	if budget.depth++; budget.depth > maxSerializeDepth {
		return bindErr(path, "nesting deeper than %d levels (a cycle?)", maxSerializeDepth)
	}
	defer func() { budget.depth-- }()
	if dst.CanAddr() && dst.Addr().Type().Implements(unmarshaler) {
		if err := dst.Addr().Interface().(Unmarshaler).UnmarshalPHP(v); err != nil {
			return bindErr(path, "%v", err)
		}
		return nil
	}
	t := dst.Type()
	if t == valueType || t.Kind() == reflect.Interface && t.NumMethod() == 0 {
		if v == nil {
			dst.Set(reflect.Zero(t))
		} else {
			dst.Set(reflect.ValueOf(v))
		}
		return nil
	}
	if t.Kind() == reflect.Pointer {
		if v == nil {
			dst.Set(reflect.Zero(t))
			return nil
		}
		// Decoded *Object, *Array, *Enum and *Custom values are shared, not copied.
		if rv := reflect.ValueOf(v); rv.Type() == t {
			dst.Set(rv)
			return nil
		}
		if dst.IsNil() {
			dst.Set(reflect.New(t.Elem()))
		}
		return bindValue(v, dst.Elem(), path, budget)
	}
	if v == nil {
		dst.Set(reflect.Zero(t))
		return nil
	}
	switch t {
	case timeType:
		tm, err := toTime(v)
		if err != nil {
			return bindErr(path, "%v", err)
		}
		dst.Set(reflect.ValueOf(tm))
		return nil
	case midType:
		return bindModelIdentifier(v, dst, path)
	case enumType, objectType, arrayType:
		rv := reflect.ValueOf(v)
		if rv.Type() != reflect.PointerTo(t) {
			return bindErr(path, "cannot put %s into %s", typeName(v), t)
		}
		dst.Set(rv.Elem())
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		switch x := v.(type) {
		case string:
			dst.SetString(x)
		case *Enum:
			dst.SetString(x.Case)
		case int64, float64, bool:
			dst.SetString(StringCast(x)) // 42 is "42", 0.1 "0.1", true "1", false ""
		default:
			return bindErr(path, "cannot put %s into a string", typeName(v))
		}
	case reflect.Bool:
		switch x := v.(type) {
		case bool:
			dst.SetBool(x)
		case int64, float64, string:
			dst.SetBool(Truthy(x)) // 0, 0.0, "" and "0" are false
		default:
			return bindErr(path, "cannot put %s into a bool", typeName(v))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := toInt(v)
		if err != nil {
			return bindErr(path, "%v", err)
		}
		if dst.OverflowInt(n) {
			return bindErr(path, "%d overflows %s", n, t)
		}
		dst.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := toInt(v)
		if err != nil {
			return bindErr(path, "%v", err)
		}
		if n < 0 || dst.OverflowUint(uint64(n)) {
			return bindErr(path, "%d overflows %s", n, t)
		}
		dst.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		switch x := v.(type) {
		case float64:
			dst.SetFloat(x)
		case int64:
			dst.SetFloat(float64(x))
		case bool:
			dst.SetFloat(FloatCast(x))
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return bindErr(path, "string %q is not a number", x)
			}
			dst.SetFloat(f)
		default:
			return bindErr(path, "cannot put %s into a float", typeName(v))
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if s, ok := v.(string); ok {
				dst.SetBytes([]byte(s))
				return nil
			}
		}
		a, ok := v.(*Array)
		if !ok {
			return bindErr(path, "cannot put %s into %s", typeName(v), t)
		}
		s := reflect.MakeSlice(t, len(a.Entries), len(a.Entries))
		for i, e := range a.Entries {
			if err := bindValue(e.Value, s.Index(i), joinPath(path, keyString(e.Key)), budget); err != nil {
				return err
			}
		}
		dst.Set(s)
	case reflect.Map:
		return bindMap(v, dst, path, budget)
	case reflect.Struct:
		return bindStruct(v, dst, path, budget)
	default:
		return bindErr(path, "unsupported Go type %s", t)
	}
	return nil
}

func keyString(k Value) string {
	if n, ok := k.(int64); ok {
		return strconv.FormatInt(n, 10)
	}
	s, _ := k.(string)
	return s
}

func toInt(v Value) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), nil
		}
		return 0, fmt.Errorf("float %v is not an integer", x)
	case string:
		t := strings.TrimSpace(x)
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			return n, nil
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return int64(f), nil // "1e3", "42.0": numeric strings of a whole number
		}
		return 0, fmt.Errorf("string %q is not an integer", x)
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("cannot put %s into an integer", typeName(v))
}

// entries lists the name/value pairs of an object or array, for struct and map binding.
func entries(v Value) ([]ArrayEntry, bool) {
	switch x := v.(type) {
	case *Object:
		out := make([]ArrayEntry, len(x.Props))
		for i, p := range x.Props {
			out[i] = ArrayEntry{Key: p.Name, Value: p.Value}
		}
		return out, true
	case *Array:
		return x.Entries, true
	}
	return nil, false
}

func bindMap(v Value, dst reflect.Value, path string, budget *bindState) error {
	t := dst.Type()
	es, ok := entries(v)
	if !ok {
		return bindErr(path, "cannot put %s into %s", typeName(v), t)
	}
	m := reflect.MakeMapWithSize(t, len(es))
	for _, e := range es {
		k := reflect.New(t.Key()).Elem()
		if err := bindValue(e.Key, k, path, budget); err != nil {
			return bindErr(path, "key %v does not fit %s", e.Key, t.Key())
		}
		ev := reflect.New(t.Elem()).Elem()
		if err := bindValue(e.Value, ev, joinPath(path, keyString(e.Key)), budget); err != nil {
			return err
		}
		m.SetMapIndex(k, ev)
	}
	dst.Set(m)
	return nil
}

func bindStruct(v Value, dst reflect.Value, path string, budget *bindState) error {
	t := dst.Type()
	es, ok := entries(v)
	if !ok {
		return bindErr(path, "cannot put %s into %s", typeName(v), t)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("php")
		if !f.IsExported() {
			if name != "" && name != "-" {
				return bindErr(path, "field %s of %s has a php tag (%q) but is unexported, so it cannot be set: export it", f.Name, t, name)
			}
			continue
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name[:1]) + f.Name[1:]
		}
		for j := len(es) - 1; j >= 0; j-- { // the last of duplicate names wins, as in PHP
			if e := es[j]; keyString(e.Key) == name {
				if err := bindValue(e.Value, dst.Field(i), joinPath(path, name), budget); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

func bindModelIdentifier(v Value, dst reflect.Value, path string) error {
	o, ok := v.(*Object)
	if !ok {
		return bindErr(path, "cannot put %s into a ModelIdentifier", typeName(v))
	}
	var m ModelIdentifier
	id, _ := o.Get("id")
	o2 := &Object{Class: o.Class}
	for _, p := range o.Props {
		if p.Name != "id" {
			o2.Props = append(o2.Props, p)
		}
	}
	if err := bindStruct(o2, reflect.ValueOf(&m).Elem(), path, &bindState{left: bindBudget}); err != nil {
		return err
	}
	if a, ok := id.(*Array); ok {
		m.ID = a.Values()
	} else {
		m.ID = id
	}
	dst.Set(reflect.ValueOf(m))
	return nil
}

// DateTime layout of the `date` property PHP writes for DateTime, DateTimeImmutable and Carbon.
const phpDateLayout = "2006-01-02 15:04:05.999999"

// Time reads a serialized DateTime, DateTimeImmutable or Carbon object (its date, timezone_type and
// timezone properties), or a Unix timestamp, as the time it stands for, in its own zone.
func Time(v Value) (time.Time, error) { return toTime(v) }

// toTime reads a serialized DateTime, DateTimeImmutable or Carbon object (properties date,
// timezone_type, timezone), or a Unix timestamp, into a time.Time in the object's own zone.
func toTime(v Value) (time.Time, error) {
	switch x := v.(type) {
	case int64:
		return time.Unix(x, 0), nil
	case *Object:
		date, _ := x.Get("date")
		typ, _ := x.Get("timezone_type")
		zone, _ := x.Get("timezone")
		ds, ok1 := date.(string)
		tt, ok2 := typ.(int64)
		zs, ok3 := zone.(string)
		if !ok1 || !ok2 || !ok3 {
			return time.Time{}, fmt.Errorf("%s is not a serialized DateTime (date, timezone_type, timezone)", typeName(v))
		}
		loc, err := phpLocation(tt, zs)
		if err != nil {
			return time.Time{}, err
		}
		tm, err := time.ParseInLocation(phpDateLayout, ds, loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("date %q: %v", ds, err)
		}
		return tm, nil
	}
	return time.Time{}, fmt.Errorf("cannot put %s into a time.Time", typeName(v))
}

// abbreviations maps the time zone abbreviations PHP may store with timezone_type 2 to their offsets
// in hours. PHP knows many more; an abbreviation missing here is an error naming it.
var abbreviations = map[string]float64{
	"UTC": 0, "GMT": 0, "Z": 0, "UT": 0, "WET": 0, "WEST": 1, "BST": 1, "CET": 1, "CEST": 2, "MET": 1,
	"MEST": 2, "EET": 2, "EEST": 3, "MSK": 3, "IST": 5.5, "HKT": 8, "AWST": 8, "JST": 9, "KST": 9,
	"ACST": 9.5, "ACDT": 10.5, "AEST": 10, "AEDT": 11, "NZST": 12, "NZDT": 13, "HST": -10, "AKST": -9,
	"AKDT": -8, "PST": -8, "PDT": -7, "MST": -7, "MDT": -6, "CST": -6, "CDT": -5, "EST": -5, "EDT": -4,
	"AST": -4, "ADT": -3, "NST": -3.5, "NDT": -2.5, "BRT": -3, "ART": -3, "SAST": 2, "WAT": 1, "EAT": 3,
}

// phpLocation turns PHP's timezone_type and timezone into a location: 1 is an offset ("+02:00"), 2 an
// abbreviation ("CEST"), 3 an identifier ("Europe/Paris") looked up in the system's time zone database.
// When the system has no database (or not that zone) the error says so; a program can embed one by
// importing time/tzdata.
func phpLocation(typ int64, zone string) (*time.Location, error) {
	switch typ {
	case 1:
		if len(zone) == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':' {
			h, err1 := strconv.Atoi(zone[1:3])
			m, err2 := strconv.Atoi(zone[4:6])
			if err1 == nil && err2 == nil {
				secs := h*3600 + m*60
				if zone[0] == '-' {
					secs = -secs
				}
				return time.FixedZone(zone, secs), nil
			}
		}
		return nil, fmt.Errorf("time zone offset %q is not +HH:MM", zone)
	case 2:
		if h, ok := abbreviations[strings.ToUpper(zone)]; ok {
			return time.FixedZone(zone, int(h*3600)), nil
		}
		return nil, fmt.Errorf("unknown time zone abbreviation %q", zone)
	case 3:
		loc, err := time.LoadLocation(zone)
		if err != nil {
			return nil, fmt.Errorf("time zone %q is not in this system's time zone database (install tzdata or import time/tzdata): %v", zone, err)
		}
		return loc, nil
	}
	return nil, fmt.Errorf("unknown timezone_type %d", typ)
}
