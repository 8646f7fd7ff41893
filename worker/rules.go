package worker

import (
	"strings"

	"github.com/artisan-go/artisan-go/payload"
)

// Version is a Laravel framework version such as 8.83 or 12.54: the payload package's, so that the
// worker, the dispatcher and the configuration read one version alike.
type Version = payload.Version

// ParseVersion reads a version as payload.ParseVersion does; an empty string is Laravel 8.83,
// artisan-go's default.
func ParseVersion(s string) (Version, error) {
	if strings.TrimSpace(s) == "" {
		s = "8.83"
	}
	return payload.ParseVersion(s)
}

// BackoffDelay returns the seconds to wait before a failed attempt runs again, as Laravel 8+ computes
// it: the job's backoff list (a comma-separated string from the payload) or else the worker's --backoff
// list, indexed by attempts-1 and clamped to the last element. Entries are cast to int the way PHP's
// (int) does: leading digits count, anything else is 0.
func BackoffDelay(jobBackoff string, hasJobBackoff bool, workerBackoff []int, attempts int) int {
	var list []int
	if hasJobBackoff {
		for _, f := range strings.Split(jobBackoff, ",") {
			list = append(list, int(payload.IntCast(f)))
		}
	} else {
		list = workerBackoff
	}
	if len(list) == 0 {
		return 0
	}
	i := attempts - 1
	if i < 0 {
		i = 0
	}
	if i >= len(list) {
		i = len(list) - 1
	}
	if list[i] < 0 {
		return 0
	}
	return list[i]
}

// Limits are the retry limits of one job: the payload's values, falling back to the worker's options.
type Limits struct {
	MaxTries int // payload maxTries ?? --tries; 0 means unlimited
	// MaxTriesFraction says the payload's maxTries was a fraction, of which MaxTries is the floor: the
	// claim bounds the attempts by it, and an exception never reaches it (payload.Envelope).
	MaxTriesFraction bool
	RetryUntil       int64 // Unix seconds; 0 when the job has no retryUntil (or timeoutAt before 8.x)
	HasRetryUntil    bool
}

// AlreadyExceeded reports whether a job must fail before it runs (Worker::
// markJobAsFailedIfAlreadyExceedsMaxAttempts): with a retryUntil (timeoutAt before 8.x), when now is
// past it; otherwise when the attempts, already incremented by the claim, are above a non-zero maxTries.
func (l Limits) AlreadyExceeded(v Version, attempts int, now int64) bool {
	if l.HasRetryUntil && v.AtLeast(5, 5) {
		return now > l.RetryUntil
	}
	// Laravel returns early only for a maxTries of exactly 0 or attempts within it, so a negative
	// maxTries fails the job before it runs.
	return l.MaxTries != 0 && attempts > l.MaxTries
}

// WillExceed reports whether an exception in this attempt fails the job instead of releasing it
// (Worker::markJobAsFailedIfWillExceedMaxAttempts): with a retryUntil, when it has passed (now is at or
// past it); otherwise when attempts have reached a non-zero maxTries. Before 8.x both checks apply
// independently.
func (l Limits) WillExceed(v Version, attempts int, now int64) bool {
	if l.HasRetryUntil && l.RetryUntil <= now && v.AtLeast(5, 5) {
		return true
	}
	if l.HasRetryUntil && v.AtLeast(8, 0) {
		return false
	}
	return l.MaxTries > 0 && !l.MaxTriesFraction && attempts >= l.MaxTries
}

// PHP exception classes the worker itself throws.
const (
	MaxAttemptsExceededClass = `Illuminate\Queue\MaxAttemptsExceededException`
	TimeoutExceededClass     = `Illuminate\Queue\TimeoutExceededException`
	ManuallyFailedClass      = `Illuminate\Queue\ManuallyFailedException`
)

// MaxAttemptsMessage is the MaxAttemptsExceededException message of the given Laravel version.
func MaxAttemptsMessage(v Version, displayName string) string {
	switch {
	case !v.AtLeast(5, 5):
		return "A queued job has been attempted too many times. The job may have previously timed out."
	case !v.AtLeast(10, 10):
		return displayName + " has been attempted too many times or run too long. The job may have previously timed out."
	default:
		return displayName + " has been attempted too many times."
	}
}

// TimeoutFailure returns the exception class and message a timed-out job fails with: from 10.10
// TimeoutExceededException "<displayName> has timed out.", before that MaxAttemptsExceededException.
func TimeoutFailure(v Version, displayName string) (class, message string) {
	if v.AtLeast(10, 10) {
		return TimeoutExceededClass, displayName + " has timed out."
	}
	return MaxAttemptsExceededClass, MaxAttemptsMessage(v, displayName)
}

// UniqueLockKey returns the cache key (without the store prefix) of a ShouldBeUnique job's lock for the
// given Laravel version; see payload.UniqueLockKey.
func UniqueLockKey(v Version, class, displayName string, definesDisplayName bool, uniqueID string, hashName func(string) string) (key string, ok bool) {
	return payload.UniqueLockKey(v, class, displayName, definesDisplayName, uniqueID, hashName)
}
