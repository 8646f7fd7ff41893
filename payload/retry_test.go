package payload

import "testing"

// TestRetryPayload checks RetryPayload against what PHP 8.2's json_encode(json_decode($p, true)) wrote
// for the same inputs, with attempts reset as RetryCommand::resetAttempts does.
func TestRetryPayload(t *testing.T) {
	ts := int64(1700000300)
	until := &RetryUntil{Unix: &ts}
	for _, tc := range []struct {
		in, want string
		until    *RetryUntil
	}{
		{
			in:   `{"uuid":"a\/b","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"retryUntil":null,"data":{"commandName":"X","command":"O:1:\"X\":1:{s:1:\"n\";s:5:\"café\";}"}}`,
			want: `{"uuid":"a\/b","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"retryUntil":null,"data":{"commandName":"X","command":"O:1:\"X\":1:{s:1:\"n\";s:5:\"caf\u00e9\";}"}}`,
		},
		{
			in:   `{"attempts":3,"n":1.50,"m":1e2,"e":{},"l":{"0":"a","1":"b"},"k":{"1":"a"},"u":"日本","big":12345678901234567890,"s":0.00001,"t":123456789012345678.0}`,
			want: `{"attempts":0,"n":1.5,"m":100,"e":[],"l":["a","b"],"k":{"1":"a"},"u":"\u65e5\u672c","big":1.2345678901234567e+19,"s":1.0e-5,"t":1.2345678901234568e+17}`,
		},
		{in: `{"attempts":null,"x":[]}`, want: `{"attempts":null,"x":[]}`},
		{in: `{"retryUntil":5,"data":{}}`, until: until, want: `{"retryUntil":1700000300,"data":[]}`},
		{in: `{"retryUntil":5,"data":{}}`, until: &RetryUntil{}, want: `{"retryUntil":null,"data":[]}`},
		{in: `{"data":{}}`, until: until, want: `{"data":[],"retryUntil":1700000300}`},
	} {
		got, err := RetryPayload([]byte(tc.in), tc.until)
		if err != nil || string(got) != tc.want {
			t.Errorf("RetryPayload(%s)\n got %s, %v\nwant %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{``, `[1]`, `{"a":1} {}`, `{"a":"\xff"}`} {
		if _, err := RetryPayload([]byte(bad), nil); err == nil {
			t.Errorf("RetryPayload(%q) succeeded, want an error", bad)
		}
	}
}
