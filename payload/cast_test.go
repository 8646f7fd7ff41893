package payload

import (
	"math"
	"strings"
	"testing"
)

// TestIntCast reads scalars as PHP 8's (int) does: var_dump((int) " 12abc") is int(12), (int) "-3" is
// int(-3), (int) 2.9 is int(2), (int) true is int(1), (int) "abc" and (int) null are int(0).
func TestIntCast(t *testing.T) {
	for _, tt := range []struct {
		v    Value
		want int64
	}{
		{int64(7), 7}, {2.9, 2}, {-2.9, -2}, {true, 1}, {false, 0}, {nil, 0},
		{" 12abc", 12}, {"-3", -3}, {"+4", 4}, {"abc", 0}, {"", 0}, {"\t\n5", 5},
		// What PHP 8.2 printed for var_dump((int) "…") of each (bounded at ±2^31 here).
		{"1e1", 10}, {"1.9e1", 19}, {" 1e1abc", 10}, {"1e", 1}, {"1.5", 1}, {".5e1", 5}, {"-2.5", -2},
		{"1e400", 0}, {"0x1A", 0}, {"+.e1", 0}, {"5.", 5}, {" 007", 7}, {"9999999999", 1 << 31},
		{"-99999999999999999999", -1 << 31}, {strings.Repeat("9", 400), 1 << 31},
	} {
		if got := IntCast(tt.v); got != tt.want {
			t.Errorf("IntCast(%#v) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

// TestFloatCast reads scalars as PHP 8's (float) does: var_dump((float) "0.5") is float(0.5).
func TestFloatCast(t *testing.T) {
	for _, tt := range []struct {
		v    Value
		want float64
	}{
		{int64(7), 7}, {2.5, 2.5}, {true, 1}, {false, 0}, {nil, 0}, {"0.5", 0.5}, {" .25x", 0.25},
		{"1e1", 10}, {"abc", 0}, {"", 0}, {"1e400", math.Inf(1)}, {"-2.5", -2.5},
	} {
		if got := FloatCast(tt.v); got != tt.want {
			t.Errorf("FloatCast(%#v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// TestStringCastFloat compares with what PHP 8.2 printed for (string) of each float.
func TestStringCastFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1e20: "1.0E+20", 1e-5: "1.0E-5", 1.5e-7: "1.5E-7", -1.5e300: "-1.5E+300",
		1.2345678901234567e25: "1.2345678901235E+25", 123456789012345678.0: "1.2345678901235E+17",
		0.0001: "0.0001", 1e13: "10000000000000", 1e14: "1.0E+14", 0.1: "0.1", 1.0 / 3: "0.33333333333333",
		math.Inf(1): "INF", math.Inf(-1): "-INF", 5e-324: "4.9406564584125E-324", 2.5e-5: "2.5E-5", 42: "42",
	} {
		if got := StringCast(f); got != want {
			t.Errorf("StringCast(%v) = %q, PHP's (string) gives %q", f, got, want)
		}
	}
	if got := StringCast(math.NaN()); got != "NAN" {
		t.Errorf("StringCast(NaN) = %q, want NAN", got)
	}
	if got := StringCast(math.Copysign(0, -1)); got != "-0" {
		t.Errorf("StringCast(-0.0) = %q, want -0", got)
	}
}
