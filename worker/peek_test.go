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

// TestHasChainCatch: the guess at chain catch callbacks looks past empty arrays.
func TestHasChainCatch(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"data":{"command":"O:3:\"Job\":1:{s:19:\"chainCatchCallbacks\";N;}"}}`:                                                  false,
		`{"data":{"command":"O:3:\"Job\":1:{s:19:\"chainCatchCallbacks\";a:0:{}}"}}`:                                              false,
		`{"data":{"command":"O:3:\"Job\":1:{s:19:\"chainCatchCallbacks\";a:1:{i:0;N;}}"}}`:                                        true,
		`{"data":{"command":"O:3:\"Job\":2:{s:19:\"chainCatchCallbacks\";a:0:{}s:1:\"x\";s:19:\"chainCatchCallbacks\";a:2:{}}"}}`: true,
	} {
		if got := hasChainCatch([]byte(raw)); got != want {
			t.Errorf("hasChainCatch(%s) = %v, want %v", raw, got, want)
		}
	}
}
