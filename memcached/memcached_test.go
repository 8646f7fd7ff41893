package memcached

import "testing"

// TestValueFlags maps PHP-serialized values to the flags and data PHP's memcached extension stores
// (checked with php-memcached 3.2: an int is flag 1 "1732000000", true flag 3 "1", a string flag 0, an
// array flag 4 serialized) and back.
func TestValueFlags(t *testing.T) {
	for _, tt := range []struct {
		serialized string
		flags      int
		data       string
	}{
		{"i:1732000000;", flagLong, "1732000000"},
		{"i:-3;", flagLong, "-3"},
		{"b:1;", flagBool, "1"},
		{"b:0;", flagBool, ""},
		{`s:16:"aB3dE6gH9jK2mN5p";`, flagString, "aB3dE6gH9jK2mN5p"},
		{`a:1:{s:1:"a";i:1;}`, flagSerialized, `a:1:{s:1:"a";i:1;}`},
		{"d:0.5;", flagDouble, "0.5"},
	} {
		flags, data := stored(tt.serialized)
		if flags != tt.flags || data != tt.data {
			t.Errorf("stored(%s) = %d %q, want %d %q", tt.serialized, flags, data, tt.flags, tt.data)
		}
		back, err := serialized(flags, data)
		if err != nil || back != tt.serialized {
			t.Errorf("serialized(%d, %q) = %q, %v, want %s", flags, data, back, err, tt.serialized)
		}
	}
	if _, err := serialized(flagString|0x10, "x"); err == nil {
		t.Error("a compressed value was read")
	}
	if _, err := serialized(5, "x"); err == nil {
		t.Error("an igbinary value was read")
	}
}
