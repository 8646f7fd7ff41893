package laravel

import (
	"context"
	"errors"
	"time"
)

// unknownClaimWait bounds how long rows of a claim whose COMMIT went unanswered are given back for.
const unknownClaimWait = 2 * time.Minute

// returnUnknownClaim gives back, once the database answers again, the rows a claim reserved in a
// transaction whose COMMIT was sent but never answered. If it committed, the rows are reserved for a
// worker that never got them, and would wait for retry_after with an attempt used up (with tries 1, a
// job that never ran would fail); if it did not, the fenced return finds no claim and does nothing.
func (c *Conn) returnUnknownClaim(err error, jobs []*Job) {
	if len(jobs) == 0 || !errors.Is(err, ErrCommitUnknown) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), unknownClaimWait)
		defer cancel()
		f := Fenced{C: c, Tries: DefaultDeleteRetries}
		// A return whose claim is gone (the COMMIT did not happen) stops the retries.
		again := RetryPolicy{Tries: 16, Pause: 50 * time.Millisecond, Retry: ConnectionLost}
		_ = again.Do(ctx, func() error { return f.JobReturn(ctx, jobs) })
	}()
}
