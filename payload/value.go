// Package payload reads and writes what Laravel puts in a queued job's payload column: the JSON envelope,
// the PHP-serialized command inside it (with Laravel's encryption when the job is ShouldBeEncrypted),
// and the canonical JSON form that artisan-go prints for a payload.
//
// The package is pure: it does no I/O and reads no environment. Everything it needs (keys, versions,
// limits) is passed in by the caller.
package payload

import "strconv"

// Value is one decoded PHP value. Its dynamic type is one of:
//
//   - nil (PHP null, `N;`)
//   - bool (`b:`)
//   - int64 (`i:`)
//   - float64 (`d:`, including ±Inf, NaN and -0)
//   - string (`s:`, raw bytes: PHP strings are not necessarily UTF-8)
//   - *Array (`a:`)
//   - *Object (`O:`)
//   - *Enum (`E:`)
//   - *Custom (`C:`, a class implementing the legacy Serializable interface)
//
// Back-references (`r:` and `R:`) are resolved: a reader sees the value they point to, and an object that
// is referenced twice is the same *Object both times.
type Value = any

// Visibility is the declared visibility of an object property, recovered from PHP's name mangling.
type Visibility uint8

// The three property visibilities. PHP mangles the serialized name of a protected property as
// "\x00*\x00name" and of a private one as "\x00DeclaringClass\x00name".
const (
	// Public properties are serialized under their plain name.
	Public Visibility = iota
	// Protected properties are serialized as "\x00*\x00name".
	Protected
	// Private properties are serialized as "\x00DeclaringClass\x00name".
	Private
)

// String returns the PHP keyword for the visibility.
func (v Visibility) String() string {
	switch v {
	case Protected:
		return "protected"
	case Private:
		return "private"
	default:
		return "public"
	}
}

// refInfo remembers that a position in the input was written as a back-reference, so that Serialize can
// write the same `r:N;` or `R:N;` again. kind is 0 for an ordinary value.
type refInfo struct {
	kind  byte
	index int64
}

// Property is one property of a PHP object, in serialized order.
type Property struct {
	// Name is the property name without PHP's visibility mangling.
	Name string
	// Visibility is public, protected or private.
	Visibility Visibility
	// Declarer is the class that declares a private property (the middle of "\x00Class\x00name"). It is
	// empty for public and protected properties.
	Declarer string
	// Value is the property's value.
	Value Value

	ref    refInfo
	intKey bool // the name was serialized as an integer key (`i:N;`), which PHP accepts for objects
}

// Object is a PHP object (`O:`): its class name and its properties in serialized order.
type Object struct {
	// Class is the fully qualified class name without a leading backslash, as PHP writes it.
	Class string
	// Props holds the properties in the order they were serialized.
	Props []Property
}

// NewObject returns an empty object of the given class, ready for Set, SetProtected and SetPrivate; it is
// how Go code builds a job to dispatch.
func NewObject(class string) *Object {
	return &Object{Class: class}
}

// Get returns the value of the property called name, whatever its visibility. When the input held the
// name twice, the last one wins, as in PHP.
func (o *Object) Get(name string) (Value, bool) {
	if o == nil {
		return nil, false
	}
	for i := len(o.Props) - 1; i >= 0; i-- {
		if o.Props[i].Name == name {
			return o.Props[i].Value, true
		}
	}
	return nil, false
}

// Prop returns a pointer to the property called name (the last one, like Get), or nil when there is
// none.
func (o *Object) Prop(name string) *Property {
	if o == nil {
		return nil
	}
	for i := len(o.Props) - 1; i >= 0; i-- {
		if o.Props[i].Name == name {
			return &o.Props[i]
		}
	}
	return nil
}

// Set replaces the value of the property called name, keeping its visibility, or appends a new
// public property when there is none. It returns o so that calls chain.
func (o *Object) Set(name string, v Value) *Object {
	if p := o.Prop(name); p != nil {
		p.Value, p.ref = normalValue(v), refInfo{}
		return o
	}
	o.Props = append(o.Props, Property{Name: name, Value: normalValue(v)})
	return o
}

// SetProtected sets a protected property, appending it when it does not exist. It returns o.
func (o *Object) SetProtected(name string, v Value) *Object {
	return o.setWith(Property{Name: name, Visibility: Protected, Value: v})
}

// SetPrivate sets a private property declared by class declarer (usually o.Class), appending it when
// that class's property does not exist yet (an ancestor's private property of the same name is another
// property). It returns o.
func (o *Object) SetPrivate(declarer, name string, v Value) *Object {
	return o.setWith(Property{Name: name, Visibility: Private, Declarer: declarer, Value: v})
}

func (o *Object) setWith(np Property) *Object {
	np.Value = normalValue(np.Value)
	// A private property of another class may share the name; PHP keeps both.
	for i := range o.Props {
		if p := &o.Props[i]; p.Name == np.Name && p.Declarer == np.Declarer {
			*p = np
			return o
		}
	}
	o.Props = append(o.Props, np)
	return o
}

// Delete removes every property called name and reports whether there was one.
func (o *Object) Delete(name string) bool {
	kept := o.Props[:0]
	for _, p := range o.Props {
		if p.Name != name {
			kept = append(kept, p)
		}
	}
	found := len(kept) != len(o.Props)
	o.Props = kept
	return found
}

// ArrayEntry is one key/value pair of a PHP array.
type ArrayEntry struct {
	// Key is an int64 or a string.
	Key Value
	// Value is the entry's value.
	Value Value

	ref refInfo
}

// Array is a PHP array (`a:`): an ordered map whose keys are int64 or string.
type Array struct {
	// Entries holds the pairs in order.
	Entries []ArrayEntry
}

// NewList returns a PHP list: an array with the keys 0..n-1.
func NewList(values ...Value) *Array {
	a := &Array{Entries: make([]ArrayEntry, len(values))}
	for i, v := range values {
		a.Entries[i] = ArrayEntry{Key: int64(i), Value: normalValue(v)}
	}
	return a
}

// Len returns the number of entries.
func (a *Array) Len() int {
	if a == nil {
		return 0
	}
	return len(a.Entries)
}

// Get returns the value stored under key (an int, int64 or string; a string holding a decimal integer
// means that integer, as in PHP). When the input held the key twice, the last one wins, as in PHP.
func (a *Array) Get(key any) (Value, bool) {
	k, ok := normalKey(key)
	if a == nil || !ok {
		return nil, false
	}
	for i := len(a.Entries) - 1; i >= 0; i-- {
		if a.Entries[i].Key == k {
			return a.Entries[i].Value, true
		}
	}
	return nil, false
}

// Set stores v under key (an int, int64 or string), replacing an existing entry or appending a new one.
// It returns a. A key of another type is ignored.
func (a *Array) Set(key any, v Value) *Array {
	k, ok := normalKey(key)
	if !ok {
		return a
	}
	for i := range a.Entries {
		if a.Entries[i].Key == k {
			a.Entries[i].Value, a.Entries[i].ref = normalValue(v), refInfo{}
			return a
		}
	}
	a.Entries = append(a.Entries, ArrayEntry{Key: k, Value: normalValue(v)})
	return a
}

// Append adds v under the next integer key, as PHP's `$a[] = v` does, and returns a.
func (a *Array) Append(v Value) *Array {
	next := int64(0)
	for _, e := range a.Entries {
		if k, ok := e.Key.(int64); ok && k >= next {
			next = k + 1
		}
	}
	a.Entries = append(a.Entries, ArrayEntry{Key: next, Value: normalValue(v)})
	return a
}

// IsList reports whether the keys are exactly 0..n-1 in order, which is what canonical JSON prints as a
// JSON array.
func (a *Array) IsList() bool {
	if a == nil {
		return true
	}
	for i, e := range a.Entries {
		if k, ok := e.Key.(int64); !ok || k != int64(i) {
			return false
		}
	}
	return true
}

// Values returns the entry values in order.
func (a *Array) Values() []Value {
	out := make([]Value, a.Len())
	for i := range out {
		out[i] = a.Entries[i].Value
	}
	return out
}

// normalValue turns the Go numbers builders are given into the int64 and float64 a decoded Value holds.
func normalValue(v Value) Value {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint32:
		return int64(x)
	case uint16:
		return int64(x)
	case uint8:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

func normalKey(key any) (Value, bool) {
	switch k := key.(type) {
	case int:
		return int64(k), true
	case int64:
		return k, true
	case string:
		return arrayKey(k), true
	}
	return nil, false
}

// arrayKey turns a string array key into the int64 PHP stores it as when it is a canonical decimal
// integer ("5", "-3", not "05", "+5", "-0" or out of range), and leaves other strings alone.
func arrayKey(s string) Value {
	if s == "" || len(s) > 20 {
		return s
	}
	digits := s
	if s[0] == '-' {
		digits = s[1:]
	}
	if digits == "" || digits[0] == '0' && (len(digits) > 1 || s[0] == '-') {
		return s
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return s
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return s
	}
	return n
}

// Enum is a PHP 8.1 enum case (`E:`). Pure and backed enums serialize alike: only the case name is kept.
type Enum struct {
	// Class is the enum's class name.
	Class string
	// Case is the case name (not the backing value).
	Case string
}

// Custom is an object of a class implementing PHP's legacy Serializable interface (`C:`). Its data is
// whatever the class's serialize() method returned, kept as opaque bytes.
type Custom struct {
	// Class is the class name.
	Class string
	// Data is the raw payload between the braces.
	Data string
}

// WithoutQueueableDefaults returns o without the public properties of Laravel's Queueable and
// InteractsWithQueue traits that hold their declared default (null for most, [] for middleware and
// chained, "" for debounceOwner and uniqueLockOwner), as the SerializesModels trait leaves them out of
// the serialized job from Laravel 9.4 (a property equal to its default). The class's own properties
// stay: their defaults are the class's, unknown here.
func WithoutQueueableDefaults(o *Object) *Object {
	out := &Object{Class: o.Class, Props: make([]Property, 0, len(o.Props))}
	for _, p := range o.Props {
		if isDefault, isTrait := queueableDefaults[p.Name]; isTrait && p.Visibility == Public && isDefault(p.Value) {
			continue
		}
		out.Props = append(out.Props, p)
	}
	return out
}

// queueableDefaults tells, for each public property Queueable and InteractsWithQueue declare (in any
// version), whether a value is its declared default.
var queueableDefaults = func() map[string]func(Value) bool {
	isNull := func(v Value) bool { return v == nil }
	isEmptyList := func(v Value) bool { a, ok := v.(*Array); return ok && len(a.Entries) == 0 }
	isEmptyString := func(v Value) bool { return v == "" }
	m := map[string]func(Value) bool{
		"middleware": isEmptyList, "chained": isEmptyList,
		"debounceOwner": isEmptyString, "uniqueLockOwner": isEmptyString,
	}
	for _, name := range []string{"job", "connection", "queue", "group", "messageGroup", "deduplicator", "delay",
		"afterCommit", "chainConnection", "chainQueue", "chainCatchCallbacks"} {
		m[name] = isNull
	}
	return m
}()
