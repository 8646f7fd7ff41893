package worker

import (
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
		CreatedAt:      &created,
	}
	p.FromProperties(now)
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
