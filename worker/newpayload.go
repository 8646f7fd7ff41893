package worker

import (
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/payload"
)

// newJobPayload writes a new envelope for a command, as Laravel's Queue::createPayload does for the
// configured version. Values PHP computes from methods (tries(), backoff(), retryUntil()) are read from
// the properties of the same name when present.
func (w *Worker) newJobPayload(cmd *payload.Object, now time.Time, delay int64) ([]byte, error) {
	version := w.cfg.LaravelVersion
	if version == "" {
		version = w.version.String()
	}
	created := now.Unix()
	p := payload.JobPayloadParams{
		LaravelVersion: version,
		Command:        cmd,
		MaxTries:       intProp(cmd, "tries"),
		MaxExceptions:  intProp(cmd, "maxExceptions"),
		Timeout:        intProp(cmd, "timeout"),
		RetryAfter:     intProp(cmd, "retryAfter"),
		Backoff:        backoffString(cmd),
		CreatedAt:      &created,
	}
	if f, _ := cmd.Get("failOnTimeout"); f == true {
		p.FailOnTimeout = true
	}
	if d, ok := cmd.Get("deleteWhenMissingModels"); ok {
		if b, ok := d.(bool); ok {
			p.DeleteWhenMissingModels = &b // 13.x's envelope key, which its worker reads alone
		}
	}
	if t, ok := cmd.Get("retryUntil"); ok {
		if t, ok := t.(int64); ok {
			p.RetryUntil = &t
		}
	}
	if b, _ := cmd.Get("batchId"); !phpFalsy(b) {
		s := phpString(b)
		p.BatchID = &s
	}
	if w.keyring != nil && w.shouldBeEncrypted(cmd.Class) {
		p.Encrypt, p.Keyring = true, w.keyring
	}
	if delay > 0 {
		d := int(delay)
		p.Delay = &d
	}
	return payload.NewJobPayload(p)
}

// intProp returns an integer property, nil when absent or not an integer.
func intProp(cmd *payload.Object, name string) *int {
	v, _ := cmd.Get(name)
	if n, ok := v.(int64); ok {
		i := int(n)
		return &i
	}
	return nil
}

// backoffString is Laravel's getJobBackoff over the backoff property: an array joined with commas, a
// number as its string, nil when unset.
func backoffString(cmd *payload.Object) *string {
	var s string
	switch v, _ := cmd.Get("backoff"); v := v.(type) {
	case *payload.Array:
		parts := make([]string, 0, v.Len())
		for _, x := range v.Values() {
			parts = append(parts, phpString(x))
		}
		s = strings.Join(parts, ",")
	case int64, float64, string:
		s = phpString(v)
	default:
		return nil
	}
	return &s
}

// Encrypted is implemented by handlers of ShouldBeEncrypted classes, so that the worker encrypts the
// jobs of that class it writes (the next link of a chain), as PHP does.
type Encrypted interface {
	ShouldBeEncrypted() bool
}

// shouldBeEncrypted reports whether jobs of class are written encrypted: its handler says so, or this
// worker has read an encrypted job of that class. The payload does not name a class's interfaces, so a
// class neither seen encrypted nor marked by its handler is written in clear.
func (w *Worker) shouldBeEncrypted(class string) bool {
	if _, seen := w.encryptedClasses.Load(class); seen {
		return true
	}
	if h, ok := w.registry.Lookup(class); ok {
		if e, ok := h.(Encrypted); ok {
			return e.ShouldBeEncrypted()
		}
	}
	return false
}
