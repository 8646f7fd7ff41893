package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// chainLink is the next job of a chain, ready to push.
type chainLink struct {
	class       string
	queue       string
	payload     []byte
	availableAt int64
}

// ErrChain is wrapped by errors about a chain's next link that cannot be read.
var ErrChain = errors.New("chain link")

// nextInChain builds the next link of the job's chain as Laravel's dispatchNextJobInChain does: the
// first serialized command of `chained` is unserialized, given the rest of the chain, its connection and
// queue (its own, else the chain's), the chain's connection, queue and catch callbacks, and wrapped in a
// new envelope with a new uuid. It returns nil when the chain is finished.
func (w *Worker) nextInChain(r *jobRun) (*chainLink, error) {
	if r.cmd == nil {
		return nil, nil
	}
	v, _ := r.cmd.Get("chained")
	chained, ok := v.(*payload.Array)
	if !ok || chained.Len() == 0 {
		return nil, nil
	}
	first, ok := chained.Entries[0].Value.(string)
	if !ok {
		return nil, fmt.Errorf("%w: chained[0] of %s is a %T, not a serialized job", ErrChain, r.class, chained.Entries[0].Value)
	}
	nv, err := payload.Unserialize([]byte(first))
	if err != nil {
		return nil, fmt.Errorf("%w: unserialize chained[0] of %s: %w", ErrChain, r.class, err)
	}
	next, ok := nv.(*payload.Object)
	if !ok {
		return nil, fmt.Errorf("%w: chained[0] of %s is not an object", ErrChain, r.class)
	}
	// From 9.4 a class using SerializesModels (every make:job class) leaves out the trait properties at
	// their default, and PHP's dispatch of the link serializes it so again; a class without it has
	// every property Queueable declares, connection and queue among them.
	_, hasConnection := next.Get("connection")
	_, hasQueue := next.Get("queue")
	omitsDefaults := w.version.AtLeast(9, 4) && (!hasConnection || !hasQueue)
	// array_shift renumbers the remaining integer keys from 0.
	rest := &payload.Array{}
	for _, e := range chained.Entries[1:] {
		if _, isInt := e.Key.(int64); isInt {
			rest.Append(e.Value)
		} else {
			rest.Set(e.Key, e.Value)
		}
	}
	chainConnection, _ := r.cmd.Get("chainConnection")
	chainQueue, _ := r.cmd.Get("chainQueue")
	next.Set("chained", rest)
	if own, _ := next.Get("connection"); phpFalsy(own) {
		next.Set("connection", chainConnection)
	}
	if own, _ := next.Get("queue"); phpFalsy(own) {
		next.Set("queue", chainQueue)
	}
	next.Set("chainConnection", chainConnection)
	next.Set("chainQueue", chainQueue)
	if w.version.AtLeast(8, 0) {
		callbacks, _ := r.cmd.Get("chainCatchCallbacks")
		next.Set("chainCatchCallbacks", callbacks)
	}

	if omitsDefaults {
		next = payload.WithoutQueueableDefaults(next)
	}
	link := &chainLink{class: next.Class, queue: w.cfg.DefaultQueue}
	if q, _ := next.Get("queue"); !phpFalsy(q) {
		link.queue = phpString(q)
	}
	// PHP dispatches the link to its connection, or with none to the application's default one.
	target, named := w.cfg.DefaultConnection, false
	if c, _ := next.Get("connection"); !phpFalsy(c) {
		target, named = phpString(c), true
	}
	if target != "" && target != w.cfg.Connection && w.chainWarned.add(next.Class+"\x00"+target) {
		why := "chain link names another queue connection"
		if !named {
			why = "chain link names no connection, and the application's default queue connection is another"
		}
		w.log.Warn(why+"; it is pushed to this connection's jobs table (said once per class)", "class", next.Class, "connection", target, "used", w.cfg.Connection)
	}
	now := w.clock()
	link.availableAt = now.Unix()
	delay := int64(0)
	if d, _ := next.Get("delay"); d != nil {
		if at, ok := payload.AvailableAt(d, now); ok {
			link.availableAt, delay = at, max(at-now.Unix(), 0)
		} else {
			w.log.Warn("chain link delay is neither seconds, a date nor an interval; dispatched without delay", "class", next.Class, "delay_type", fmt.Sprintf("%T", d))
		}
	}
	link.payload, err = w.newJobPayload(next, now, delay)
	if err != nil {
		return nil, fmt.Errorf("%w: build payload for %s: %w", ErrChain, next.Class, err)
	}
	return link, nil
}

// deleteWithChain deletes a finished job and, in the same transaction, pushes its chain's next link
// and counts it in its batch (batch nil: none).
func (w *Worker) deleteWithChain(ctx context.Context, j *laravel.Job, next *chainLink, batch *laravel.BatchStep) error {
	if next == nil && batch == nil {
		return w.queue.JobDelete(ctx, j)
	}
	var push []*laravel.JobPushParams
	if next != nil {
		push = append(push, &laravel.JobPushParams{Queue: next.queue, Payload: next.payload, Now: w.clock().Unix(), AvailableAt: next.availableAt})
	}
	_, err := w.queue.JobDeleteAndPush(ctx, j, push, batch)
	return err
}

// phpFalsy reports whether PHP's `?:` would take the fallback for v.
func phpFalsy(v payload.Value) bool { return !payload.Truthy(v) }

// phpString is PHP's (string) cast of a scalar.
func phpString(v payload.Value) string { return payload.StringCast(v) }
