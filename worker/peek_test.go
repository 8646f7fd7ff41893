package worker

import "testing"

// TestPeekCommandName: the quick guess at a payload's class reads Laravel's escapes, and gives up on
// the others (the payload is then read whole).
func TestPeekCommandName(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		ok        bool
	}{
		{`{"displayName":"App\\Jobs\\Run","data":{"commandName":"App\\Jobs\\Run","command":"O:..."}}`, `App\Jobs\Run`, true},
		{`{"data":{"commandName":"App\/Jobs\\Run"}}`, `App/Jobs\Run`, true},
		{`{"data":{"commandName":"App\\Jobs\\Caf\u00e9"}}`, "", false},
		{`{"data":{"commandName":""}}`, "", false},
		{`{"data":{"commandName":"App\\Jobs`, "", false},
		{`{"job":"App\\Handlers\\Legacy@handle","data":{"command":"\"commandName\":\"App\\\\Jobs\\\\Run\""}}`, "", false},
	} {
		got, ok := peekCommandName([]byte(c.raw))
		if got != c.want || ok != c.ok {
			t.Errorf("peekCommandName(%s) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}
