package laravel

import (
	"errors"
	"slices"
	"testing"
)

// TestDecodeCutFailedJobIDs reads the lists a server not in strict mode leaves when it cuts
// failed_job_ids to fit its column: the uuids held whole, none made up. What is not a list stays an
// error.
func TestDecodeCutFailedJobIDs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`["a","b"]`, []string{"a", "b"}},
		{`{"0":"a","2":"c"}`, []string{"a", "c"}},
		{`["a","b"`, []string{"a", "b"}},
		{`["a","b`, []string{"a"}},
		{`["a",`, []string{"a"}},
		{`["a","b\`, []string{"a"}},
		{`["a`, []string{}},
		{`[`, []string{}},
	} {
		got, err := decodeFailedJobIDs(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("decodeFailedJobIDs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{`a,b`, `{"0":"a"`, `[1,2`} {
		if got, err := decodeFailedJobIDs(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("decodeFailedJobIDs(%q) = %q, %v; want ErrInvalid", in, got, err)
		}
	}
}
