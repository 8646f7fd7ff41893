package payload

import "testing"

// TestIntCast reads scalars as PHP 8's (int) does: var_dump((int) " 12abc") is int(12), (int) "-3" is
// int(-3), (int) 2.9 is int(2), (int) true is int(1), (int) "abc" and (int) null are int(0).
func TestIntCast(t *testing.T) {
	for _, tt := range []struct {
		v    Value
		want int64
	}{
		{int64(7), 7}, {2.9, 2}, {-2.9, -2}, {true, 1}, {false, 0}, {nil, 0},
		{" 12abc", 12}, {"-3", -3}, {"+4", 4}, {"abc", 0}, {"", 0}, {"\t\n5", 5},
	} {
		if got := IntCast(tt.v); got != tt.want {
			t.Errorf("IntCast(%#v) = %d, want %d", tt.v, got, tt.want)
		}
	}
}
