package payload

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/fixtures"
)

// jsonValidCases are documents on both sides of every rule of the grammar.
var jsonValidCases = []string{
	``, ` `, `{}`, `[]`, ` {} `, `{} {}`, `{`, `}`, `[`, `[1,]`, `[,1]`, `[1 2]`, `{"a"}`, `{"a":}`, `{"a":1,}`,
	`{"a" : 1 , "b":[true,false,null]}`, `{1:2}`, `{'a':1}`, `"abc`, `"a\"b"`, `"\u00e9\uD83D\uDE00"`,
	`"\u00g0"`, `"\u12"`, `"\x"`, `"\/\b\f\n\r\t\\"`, "\"a\tb\"", "\"a\x01\"", "\"\xff\xfe\"", "\"é\"",
	`0`, `-0`, `01`, `-`, `-a`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1e-5`, `1E5`, `1.5e10`, `-12.0e-0`, `+1`,
	`true`, `tru`, `truee`, `null`, `nul`, `false`, `False`, "\t\n\r 1 \r\n\t", "\v1", `[[[]]]`, `[[[]]`,
	`{"a":{"b":{"c":[1,{"d":"e"}]}}}`, `{"a":1}x`, `"a"  "b"`, `[1,[2,[3]],4]`,
}

func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	docs := jsonValidCases
	for _, fx := range fixtures.Laravel883() {
		docs = append(docs, string(fx.Payload))
	}
	for _, n := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		docs = append(docs, strings.Repeat("[", n)+strings.Repeat("]", n))
		docs = append(docs, strings.Repeat(`{"a":`, n)+"1"+strings.Repeat("}", n))
	}
	for _, d := range docs {
		if got, want := validJSON([]byte(d)), json.Valid([]byte(d)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid says %v", d, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, d := range jsonValidCases {
		f.Add([]byte(d))
	}
	for _, fx := range fixtures.Laravel883() {
		f.Add(fx.Payload)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}
