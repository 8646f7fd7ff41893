package worker

import (
	"errors"
	"testing"

	"github.com/artisan-go/artisan-go/payload"
)

// TestParseVersion: the worker reads versions as the payload package does (its table tests the
// forms), and an empty one as the default, 8.83.
func TestParseVersion(t *testing.T) {
	t.Parallel()
	if v, err := ParseVersion(" "); err != nil || v != (Version{Major: 8, Minor: 83, Patch: -1}) {
		t.Errorf("ParseVersion(\" \") = %v, %v; want 8.83", v, err)
	}
	if v, err := ParseVersion("12.x"); err != nil || v != (Version{Major: 12, Minor: 999, Patch: -1}) {
		t.Errorf("ParseVersion(12.x) = %v, %v; want 12's newest minor", v, err)
	}
	if _, err := ParseVersion("4.2"); !errors.Is(err, payload.ErrVersion) {
		t.Errorf("ParseVersion(4.2) = %v, want payload.ErrVersion", err)
	}
}

// TestAtLeastPatch gates on a patch release: a version without one counts as the newest of its minor.
func TestAtLeastPatch(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"10.37": true, "10.37.1": false, "10.37.2": true, "10.36.9": false, "10.38": true, "10": true, "9.52.22": false} {
		v, err := ParseVersion(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.AtLeastPatch(10, 37, 2); got != want {
			t.Errorf("%s at least 10.37.2: %v, want %v", in, got, want)
		}
	}
}

func TestBackoffDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		job      string
		hasJob   bool
		worker   []int
		attempts int
		want     int
	}{
		{"no backoff anywhere", "", false, nil, 1, 0},
		{"worker single", "", false, []int{7}, 3, 7},
		{"worker list indexed by attempt", "", false, []int{1, 5, 10}, 2, 5},
		{"worker list clamped to last", "", false, []int{1, 5, 10}, 9, 10},
		{"job list wins over worker", "1,5,10", true, []int{99}, 1, 1},
		{"job list second attempt", "1,5,10", true, nil, 2, 5},
		{"job list clamped", "1,5,10", true, nil, 4, 10},
		{"job single", "30", true, []int{1}, 3, 30},
		{"php int cast of junk", "abc", true, nil, 1, 0},
		{"php int cast of spaced", " 12s", true, nil, 1, 12},
		{"attempts zero uses first", "3,4", true, nil, 0, 3},
		{"negative is zero", "-5", true, nil, 1, 0},
	} {
		if got := BackoffDelay(tc.job, tc.hasJob, tc.worker, tc.attempts); got != tc.want {
			t.Errorf("%s: BackoffDelay = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	v8 := Version{Major: 8, Minor: 83, Patch: 0}
	v7 := Version{Major: 7, Minor: 30, Patch: 0}
	const now = 1000
	for _, tc := range []struct {
		name       string
		v          Version
		l          Limits
		attempts   int
		already    bool
		willExceed bool
	}{
		{"unlimited", v8, Limits{MaxTries: 0}, 50, false, false},
		{"first of one", v8, Limits{MaxTries: 1}, 1, false, true},
		{"second of one", v8, Limits{MaxTries: 1}, 2, true, true},
		{"second of three", v8, Limits{MaxTries: 3}, 2, false, false},
		{"third of three", v8, Limits{MaxTries: 3}, 3, false, true},
		{"retryUntil future replaces tries", v8, Limits{MaxTries: 1, RetryUntil: now + 10, HasRetryUntil: true}, 5, false, false},
		{"retryUntil now", v8, Limits{MaxTries: 1, RetryUntil: now, HasRetryUntil: true}, 1, false, true},
		{"retryUntil past", v8, Limits{MaxTries: 9, RetryUntil: now - 1, HasRetryUntil: true}, 1, true, true},
		{"7.x timeoutAt and tries independent", v7, Limits{MaxTries: 2, RetryUntil: now + 10, HasRetryUntil: true}, 2, false, true},
		// $tries = 2.5: PHP runs attempts 1 and 2, releasing each that throws (2 >= 2.5 is false), and
		// fails the job at the third claim (3 <= 2.5 is false).
		{"second of 2.5", v8, Limits{MaxTries: 2, MaxTriesFraction: true}, 2, false, false},
		{"third of 2.5", v8, Limits{MaxTries: 2, MaxTriesFraction: true}, 3, true, false},
	} {
		if got := tc.l.AlreadyExceeded(tc.v, tc.attempts, now); got != tc.already {
			t.Errorf("%s: AlreadyExceeded = %v, want %v", tc.name, got, tc.already)
		}
		if got := tc.l.WillExceed(tc.v, tc.attempts, now); got != tc.willExceed {
			t.Errorf("%s: WillExceed = %v, want %v", tc.name, got, tc.willExceed)
		}
	}
}

func TestMessages(t *testing.T) {
	t.Parallel()
	const job = `App\Jobs\FlakyJob`
	for _, tc := range []struct {
		v         string
		max       string
		timeClass string
		timeMsg   string
	}{
		{"5.4", "A queued job has been attempted too many times. The job may have previously timed out.", MaxAttemptsExceededClass, "A queued job has been attempted too many times. The job may have previously timed out."},
		{"8.83", job + " has been attempted too many times or run too long. The job may have previously timed out.", MaxAttemptsExceededClass, job + " has been attempted too many times or run too long. The job may have previously timed out."},
		{"10.9", job + " has been attempted too many times or run too long. The job may have previously timed out.", MaxAttemptsExceededClass, job + " has been attempted too many times or run too long. The job may have previously timed out."},
		{"10.10", job + " has been attempted too many times.", TimeoutExceededClass, job + " has timed out."},
		{"12.54", job + " has been attempted too many times.", TimeoutExceededClass, job + " has timed out."},
	} {
		v, err := ParseVersion(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := MaxAttemptsMessage(v, job); got != tc.max {
			t.Errorf("%s: MaxAttemptsMessage = %q", tc.v, got)
		}
		c, m := TimeoutFailure(v, job)
		if c != tc.timeClass || m != tc.timeMsg {
			t.Errorf("%s: TimeoutFailure = %q, %q", tc.v, c, m)
		}
	}
}

func TestUniqueLockKey(t *testing.T) {
	t.Parallel()
	hash := func(s string) string { return "h(" + s + ")" }
	for _, tc := range []struct {
		v       string
		defines bool
		hash    func(string) string
		want    string
		ok      bool
	}{
		{"8.83", false, nil, `laravel_unique_job:App\Jobs\UniqueReport77`, true},
		{"10.48", true, nil, `laravel_unique_job:App\Jobs\UniqueReport77`, true},
		{"11.0", false, nil, `laravel_unique_job:App\Jobs\UniqueReport:77`, true},
		{"12.40", true, nil, `laravel_unique_job:App\Jobs\UniqueReport:77`, true},
		{"12.41", true, nil, `laravel_unique_job:Report #77:77`, true},
		{"12.54", false, nil, `laravel_unique_job:App\Jobs\UniqueReport:77`, true},
		{"12.54", true, hash, `laravel_unique_job:h(Report #77):77`, true},
		{"12.54", true, nil, ``, false},
	} {
		v, _ := ParseVersion(tc.v)
		got, ok := UniqueLockKey(v, `App\Jobs\UniqueReport`, "Report #77", tc.defines, "77", tc.hash)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s defines=%v: UniqueLockKey = %q, %v; want %q, %v", tc.v, tc.defines, got, ok, tc.want, tc.ok)
		}
	}
}
