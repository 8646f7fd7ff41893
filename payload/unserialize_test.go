package payload

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/fixtures"
)

func TestUnserializeScalars(t *testing.T) {
	tests := []struct {
		in   string
		want Value
	}{
		{"N;", nil},
		{"b:0;", false},
		{"b:1;", true},
		{"i:0;", int64(0)},
		{"i:-42;", int64(-42)},
		{"i:+7;", int64(7)},
		{"i:9223372036854775807;", int64(math.MaxInt64)},
		{"i:-9223372036854775808;", int64(math.MinInt64)},
		{"d:0.1;", 0.1},
		{"d:9.75;", 9.75},
		{"d:1.0E+25;", 1e25},
		{"d:1e5;", 1e5},
		{"d:1.;", 1.0},
		{"d:.5;", 0.5},
		{"d:-2;", -2.0},
		{"d:INF;", math.Inf(1)},
		{"d:-INF;", math.Inf(-1)},
		{"d:1e999;", math.Inf(1)},
		{`s:0:"";`, ""},
		{`s:6:"a";b"c";`, `a";b"c`},
		{"s:3:\"\x00\xff\n\";", "\x00\xff\n"},
		{`E:20:"App\Status:Published";`, &Enum{Class: `App\Status`, Case: "Published"}},
		{`C:10:"App\Legacy":10:{raw{}"data}`, &Custom{Class: `App\Legacy`, Data: `raw{}"data`}},
	}
	for _, tt := range tests {
		got, err := Unserialize([]byte(tt.in))
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %#v, want %#v", tt.in, got, tt.want)
		}
	}
	for _, in := range []string{"d:NAN;", "d:-0;"} {
		v, err := Unserialize([]byte(in))
		f, ok := v.(float64)
		if err != nil || !ok {
			t.Fatalf("%q: %v %v", in, v, err)
		}
		if in == "d:NAN;" && !math.IsNaN(f) || in == "d:-0;" && (f != 0 || !math.Signbit(f)) {
			t.Errorf("%q: got %v", in, f)
		}
	}
}

func TestUnserializeContainers(t *testing.T) {
	v, err := Unserialize([]byte(`a:3:{i:0;s:1:"x";s:1:"k";a:0:{}i:-5;N;}`))
	if err != nil {
		t.Fatal(err)
	}
	a := v.(*Array)
	if a.Len() != 3 || a.IsList() {
		t.Fatalf("array %#v", a)
	}
	if x, _ := a.Get(0); x != "x" {
		t.Errorf("a[0] = %v", x)
	}
	if k, _ := a.Get("k"); k.(*Array).Len() != 0 {
		t.Errorf("a[k] = %v", k)
	}
	if _, ok := a.Get(int64(-5)); !ok {
		t.Error("a[-5] missing")
	}

	in := "O:9:\"App\\Child\":4:{s:16:\"\x00App\\Base\x00secret\";s:4:\"base\";s:7:\"\x00*\x00prot\";i:1;s:3:\"pub\";i:2;s:4:\"self\";r:1;}"
	v, err = Unserialize([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	want := []Property{
		{Name: "secret", Visibility: Private, Declarer: `App\Base`, Value: "base"},
		{Name: "prot", Visibility: Protected, Value: int64(1)},
		{Name: "pub", Value: int64(2)},
	}
	if o.Class != `App\Child` || len(o.Props) != 4 || !reflect.DeepEqual(o.Props[:3], want) {
		t.Fatalf("object %#v", o)
	}
	if self, _ := o.Get("self"); self != o {
		t.Error("r:1 does not resolve to the object itself")
	}
}

func TestUnserializeReferences(t *testing.T) {
	// Slots: 1 the array, 2 the first element, 3 the nested array, 4 its element, 5 the r:2 copy.
	v, err := Unserialize([]byte(`a:4:{i:0;s:1:"v";i:1;a:1:{i:0;i:7;}i:2;r:2;i:3;R:4;}`))
	if err != nil {
		t.Fatal(err)
	}
	a := v.(*Array)
	if a.Entries[2].Value != "v" || a.Entries[3].Value != int64(7) {
		t.Errorf("references resolved to %v and %v", a.Entries[2].Value, a.Entries[3].Value)
	}
	for _, in := range []string{`a:1:{i:0;r:2;}`, `a:1:{i:0;R:0;}`, `r:1;`, `a:2:{i:0;R:1;i:1;r:4;}`} {
		if _, err := Unserialize([]byte(in)); !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: error %v, want ErrSyntax", in, err)
		}
	}
	// r: takes a slot, R: does not.
	v, err = Unserialize([]byte(`a:3:{i:0;i:10;i:1;r:2;i:2;r:3;}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.(*Array).Entries[2].Value; got != int64(10) {
		t.Errorf("r:3 resolved to %v, want the r: copy in slot 3", got)
	}
	if _, err := Unserialize([]byte(`a:3:{i:0;i:10;i:1;R:2;i:2;r:3;}`)); !errors.Is(err, ErrSyntax) {
		t.Errorf("r:3 after R:2 resolved: %v", err)
	}
}

func TestUnserializeErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{"", 0, "unexpected end"},
		{"N", 0, "unexpected end"},
		{"N:", 1, "expected ';'"},
		{"x:1;", 0, "unknown type"},
		{"b:2;", 2, "bool"},
		{"b:1", 2, "bool"},
		{"i:;", 2, "expected a digit"},
		{"i:1", 3, "after the integer"},
		{"i:9223372036854775808;", 2, "out of the int64 range"},
		{"i:-9223372036854775809;", 2, "out of the int64 range"},
		{"i:99999999999999999999999;", 2, "out of the int64 range"},
		{"d:;", 2, "expected a float"},
		{"d:1e;", 4, "exponent"},
		{"d:1.5", 5, "after the float"},
		{"d:+INF;", 3, "expected a float"},
		{"d:0x10;", 3, "after the float"},
		{`s:3:"ab";`, 8, "declared length does not match"},
		{`s:1:"ab";`, 6, "declared length does not match"},
		{`s:2:"ab"`, 8, `expected ";"`},
		{`s:-1:"";`, 2, "expected a digit"},
		{`s:99:"ab";`, 2, "larger than the"},
		{`a:1:{}`, 2, "cannot fit"},
		{`a:1:{i:0;N;i:1;N;}`, 11, "declared size does not match"},
		{`a:3:{i:0;N;i:1;N;}`, 2, "cannot fit"},
		{`a:1:{d:0;N;}`, 5, "array key"},
		{`a:1:{N;N;}    `, 5, "array key"},
		{`a:0:{}x`, 6, "after the value"},
		{`O:0:"":0:{}`, 5, "invalid class name"},
		{`O:3:"A-B":0:{}`, 5, "invalid class name"},
		{`O:1:"A":1:{N;N;}    `, 11, "property name"},
		{`O:1:"A":0:{`, 11, "declared count does not match"},
		{`E:5:"Class";`, 5, "invalid enum"},
		{`E:6:"Class:";`, 5, "invalid enum"},
		{`C:1:"A":5:{ab}`, 8, "larger than the 4 bytes left"},
		{`C:1:"A":1:{ab}`, 12, "declared length does not match"},
		{`R:1;`, 0, "points to no earlier value"},
		{`a:1:{i:0;r:-1;}`, 9, "points to no earlier value"},
	}
	for _, tt := range tests {
		_, err := Unserialize([]byte(tt.in))
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: error %v, want a SyntaxError", tt.in, err)
			continue
		}
		if se.Offset != tt.offset || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("%q: %v; want offset %d and %q", tt.in, err, tt.offset, tt.msg)
		}
	}
}

func TestUnserializeLimits(t *testing.T) {
	deep := strings.Repeat("a:1:{i:0;", 10) + "N;" + strings.Repeat("}", 10)
	if _, err := Unserialize([]byte(deep)); err != nil {
		t.Fatal(err)
	}
	_, err := Unserialize([]byte(deep), WithMaxDepth(9))
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "nesting deeper than 9") || se.Offset != 9*9+5 {
		t.Errorf("depth limit: %v", err)
	}
	if _, err := Unserialize([]byte(`s:5:"hello";`), WithMaxSize(11)); !errors.As(err, &se) || se.Offset != 11 {
		t.Errorf("size limit: %v", err)
	}
	// A huge declared count is refused before anything is allocated for it.
	if _, err := Unserialize([]byte(`a:999999999999:{}`)); !errors.Is(err, ErrSyntax) {
		t.Errorf("huge count: %v", err)
	}
	// Every truncation of a valid input is an error, never a panic.
	full := []byte(fixtureCommand(t, "podcast"))
	for i := range full {
		if _, err := Unserialize(full[:i]); !errors.Is(err, ErrSyntax) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
}

// fixtureCommand returns data.command of a plain Laravel 8.83 fixture.
func fixtureCommand(t testing.TB, name string) string {
	t.Helper()
	e, err := ParseEnvelope(fixtures.Laravel883()[name].Payload)
	if err != nil {
		t.Fatal(err)
	}
	return e.Command
}

func TestRoundTripFixtures(t *testing.T) {
	for name, f := range fixtures.Laravel883() {
		e, err := ParseEnvelope(f.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if e.IsRaw() || e.CommandEncrypted() {
			continue
		}
		assertRoundTrip(t, name, []byte(e.Command))
		v, _ := Unserialize([]byte(e.Command))
		if chained, ok := v.(*Object).Get("chained"); ok {
			for _, c := range chained.(*Array).Values() {
				assertRoundTrip(t, name+" chained", []byte(c.(string)))
			}
		}
	}
}

func assertRoundTrip(t *testing.T, name string, in []byte) {
	t.Helper()
	v, err := Unserialize(in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out, err := Serialize(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.Equal(in, out) {
		t.Errorf("%s: round trip differs\n in: %q\nout: %q", name, in, out)
	}
}

// TestRoundTripPHPValues reads values.txt, written by PHP 8.2 (make-values.php): references, cycles,
// inherited private properties, enums, Serializable, integer property names, dates.
func TestRoundTripPHPValues(t *testing.T) {
	f, err := os.Open("testdata/values.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	n := 0
	for s.Scan() {
		in, err := base64.StdEncoding.DecodeString(s.Text())
		if err != nil {
			t.Fatal(err)
		}
		assertRoundTrip(t, string(in), in)
		n++
	}
	if n < 30 {
		t.Fatalf("read only %d values", n)
	}
}

// TestFloatFormat compares AppendFloat with PHP 8.2's serialize() on the floats in floats.txt.
func TestFloatFormat(t *testing.T) {
	f, err := os.Open("testdata/floats.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	n := 0
	for s.Scan() {
		hexBits, want, _ := strings.Cut(s.Text(), " ")
		raw, err := hex.DecodeString(hexBits)
		if err != nil || len(raw) != 8 {
			t.Fatalf("bad line %q", s.Text())
		}
		x := math.Float64frombits(binary.BigEndian.Uint64(raw))
		got, err := Serialize(x)
		if err != nil || string(got) != want {
			t.Fatalf("float %v (%s): got %s, want %s", x, hexBits, got, want)
		}
		back, err := Unserialize(got)
		if err != nil || back.(float64) != x {
			t.Fatalf("float %s read back as %v (%v)", got, back, err)
		}
		n++
	}
	if n < 6000 {
		t.Fatalf("read only %d floats", n)
	}
	for _, tt := range []struct {
		f    float64
		want string
	}{{math.NaN(), "d:NAN;"}, {math.Inf(1), "d:INF;"}, {math.Inf(-1), "d:-INF;"}, {math.Copysign(0, -1), "d:-0;"}} {
		if got, _ := Serialize(tt.f); string(got) != tt.want {
			t.Errorf("Serialize(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}

func TestSerializeBuiltObject(t *testing.T) {
	o := NewObject(`App\Jobs\Dispatch`).
		Set("id", 5).
		SetProtected("prot", NewList("x")).
		SetPrivate(`App\Jobs\Dispatch`, "p", 1.5).
		Set("e", nil)
	got, err := Serialize(o)
	if err != nil {
		t.Fatal(err)
	}
	// As printed by PHP 8.2 for the same class.
	want := "O:17:\"App\\Jobs\\Dispatch\":4:{s:2:\"id\";i:5;s:7:\"\x00*\x00prot\";a:1:{i:0;s:1:\"x\";}s:20:\"\x00App\\Jobs\\Dispatch\x00p\";d:1.5;s:1:\"e\";N;}"
	if string(got) != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if _, err := Serialize(struct{}{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unsupported type: %v", err)
	}
	cyc := NewList(nil)
	cyc.Entries[0].Value = cyc
	if _, err := Serialize(cyc); !errors.Is(err, ErrUnsupported) {
		t.Errorf("cycle: %v", err)
	}
}

func TestUnserializePHPKeySemantics(t *testing.T) {
	v, err := Unserialize([]byte(`a:6:{s:1:"5";s:1:"a";s:2:"05";s:1:"b";s:2:"-0";s:1:"c";s:2:"-7";s:1:"d";i:1;s:1:"x";i:1;s:1:"y";}`))
	if err != nil {
		t.Fatal(err)
	}
	a := v.(*Array)
	want := []Value{int64(5), "05", "-0", int64(-7), int64(1), int64(1)}
	for i, e := range a.Entries {
		if e.Key != want[i] {
			t.Errorf("key %d = %#v, want %#v", i, e.Key, want[i])
		}
	}
	if got, _ := a.Get("1"); got != "y" {
		t.Errorf(`a["1"] = %v, want the last value "y"`, got)
	}
	o, _ := Unserialize([]byte(`O:1:"A":2:{s:1:"p";i:1;s:1:"p";i:2;}`))
	if got, _ := o.(*Object).Get("p"); got != int64(2) {
		t.Errorf("duplicate property: %v, want the last value 2", got)
	}
}

// TestUnserializeDepthAsPHP: nesting up to PHP's unserialize_max_depth (4096) is read, as PHP's
// worker reads it; deeper is refused, as PHP refuses it.
func TestUnserializeDepthAsPHP(t *testing.T) {
	t.Parallel()
	nested := func(n int) []byte {
		return []byte(strings.Repeat("a:1:{i:0;", n) + "N;" + strings.Repeat("}", n))
	}
	if _, err := Unserialize(nested(4096)); err != nil {
		t.Errorf("4096 levels: %v", err)
	}
	if _, err := Unserialize(nested(4097)); !errors.Is(err, ErrSyntax) {
		t.Errorf("4097 levels: %v, want a syntax error", err)
	}
}
