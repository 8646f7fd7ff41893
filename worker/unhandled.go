package worker

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// NoHandlerClass is the exception class a job fails with under the "fail" policy for classes without a
// Go handler.
const NoHandlerClass = `ArtisanGo\Worker\NoHandlerException`

// unhandledPolicy is the policy for a class without a Go handler: the configured one, but leave for
// the companion jobs, which only ever run under PHP.
func (w *Worker) unhandledPolicy(class string) string {
	if class != "" && (class == w.cfg.BatchCompanion || class == w.cfg.FailedCompanion) {
		return UnhandledLeave
	}
	return w.cfg.Unhandled
}

// unhandled applies the policy for a job whose class has no Go handler. Such a job is never run and
// never lost: "leave" hands the row back untouched (attempt undone) and remembers its id so this worker
// does not claim it again while PHP workers can; "move:<queue>" pushes the exact payload onto another
// queue in the transaction that deletes this row; "fail" fails it into failed_jobs.
func (w *Worker) unhandled(ctx context.Context, r *jobRun) {
	j := r.rj.job
	policy := w.unhandledPolicy(r.class)
	switch {
	case strings.HasPrefix(policy, UnhandledMove):
		target := strings.TrimPrefix(policy, UnhandledMove)
		now := w.clock().Unix()
		push := &laravel.JobPushParams{Queue: target, Payload: j.Payload, Attempts: max(j.Attempts-1, 0), Now: now, AvailableAt: now}
		if w.completeLocked(r.rj, "move", func(ctx context.Context) error {
			_, err := w.queue.JobDeleteAndPush(ctx, j, []*laravel.JobPushParams{push}, nil)
			return err
		}, &w.stats.moved) {
			w.log.Info("Moved (no Go handler)", "class", r.displayName, "id", j.ID, "from", j.Queue, "to", target)
		}
	case policy == UnhandledFail:
		w.fail(ctx, r, newException(NoHandlerClass, "No Go handler is registered for "+r.class+"; register one, or run artisan-go with unhandled: leave so PHP workers run it.", nil))
	default:
		w.leave(r, "no Go handler")
	}
}

// leave hands a claimed row back untouched (reservation and attempt undone) for PHP workers, and
// remembers its id so that this worker does not claim it again.
func (w *Worker) leave(r *jobRun, why string) {
	j := r.rj.job
	// Remembered before the row is handed back, so no claim in between takes it again.
	again, _ := w.remember(j)
	if w.completeLocked(r.rj, "leave for PHP", func(ctx context.Context) error {
		return w.queue.JobReturn(ctx, []*laravel.Job{j})
	}, &w.stats.left) {
		w.countLeft(again)
		w.logLeft(r.class, r.displayName, j, why, again)
	}
}

// countLeft counts a row left for PHP in the rows Stats reports (LeftForPHP): once, the first time
// this worker left it. A row its claims read again after they forgot it counts as a hand-back only
// (stats.left, leftAgain), which --max-jobs and the pauses read.
func (w *Worker) countLeft(again bool) {
	if !again {
		w.stats.leftRows.Add(1)
	}
}

// remember records a row left for PHP, so that this worker's claims do not take it again, and reports
// whether it was left before (claimed again after the claims forgot it, see leftChurn). first is false
// when the claims already exclude it: two claims read it at once (the batch strategy's claim lanes,
// parallel claims), and the other one recorded it.
func (w *Worker) remember(j *laravel.Job) (again, first bool) {
	added, wrapped := w.excluded.add(j.ID)
	if wrapped && w.leaveWarned.CompareAndSwap(false, true) {
		w.log.Info("more jobs are left for PHP than this worker's claims exclude: they read the others again, pass over them (no attempt spent) and pause when they find nothing else; run PHP workers on these queues, or set unhandled to move:<queue> to keep PHP's jobs off them",
			"excluded", w.cfg.ExcludeLimit)
	}
	if !added {
		return false, false
	}
	again = w.leftBefore.seen(j.ID)
	if again {
		w.stats.leftAgain.Add(1)
	}
	return again, true
}

// logLeft logs a row left for PHP: the first row of each class and reason at info; the others, which
// beside PHP's workers are many (a line per row), and rows left again, at debug.
func (w *Worker) logLeft(class, displayName string, j *laravel.Job, why string, again bool) {
	level := slog.LevelDebug
	if !again && w.leftLogged.add(class+"\x00"+why) {
		level = slog.LevelInfo
	}
	if w.logs(level) {
		w.log.Log(context.Background(), level, "Left for PHP ("+why+")", "class", displayName, "id", j.ID, "queue", j.Queue)
	}
}

// passOver tells a claim which rows to leave as they are (laravel.JobClaimParams.Skip): those of
// classes this worker has no handler for, when they are left for PHP (the leave policy, and the
// companion jobs, which only PHP runs), and the members of batches it knows to have PHP callbacks that
// no companion runs. The claim's own transaction then never spends an attempt on them, so a worker
// killed at any moment (SIGKILL, the OOM killer) leaves PHP's jobs as they were; a row claimed and
// then handed back kept a spent attempt when the worker died in between, and a job with $tries = 1
// then failed unrun in PHP's worker. The other rows left for PHP (the first members of a batch not
// yet read, a chain with catch callbacks, models that could not be checked) are still claimed and
// handed back.
func (w *Worker) passOver(j *laravel.Job) bool {
	if class, ok := peekCommandName(j.Payload); ok && !phpOnly[class] {
		if _, ok := w.registry.Lookup(class); ok {
			// Its class has a handler: no full read inside the claim's transaction (SQLite's one
			// write lock is held there) unless a batch may leave it to PHP; process reads the payload.
			return w.passOverMember(j, nil)
		}
	}
	env, err := payload.ParseEnvelope(j.Payload)
	if err != nil {
		return false // claimed, to be failed into failed_jobs as it is
	}
	read := &claimRead{env: env}
	j.Read = read // process reads it from there
	class, displayName := classOf(env)
	if _, ok := w.lookup(&jobRun{class: class, displayName: displayName}); ok {
		return w.passOverMember(j, env)
	}
	switch policy := w.unhandledPolicy(class); {
	case policy == UnhandledLeave:
		read.why = "no Go handler"
	case strings.HasPrefix(policy, UnhandledMove):
		if _, ok := w.conn.(unclaimedMover); !ok {
			return false // claimed, then moved
		}
		read.move = strings.TrimPrefix(policy, UnhandledMove)
	default:
		return false
	}
	return true
}

// passOverMember reports whether process would leave j to PHP for its callbacks: a member of a batch
// this worker knows to have PHP callbacks (see batchNeedsPHP), or a link of a chain with catch
// callbacks (see chainNeedsPHP), with no companion to run them. env is its payload read, or nil. The
// command is decoded only when the payload's bytes say it may be one of these; batches are looked up
// only in what the worker remembers, never read from the database inside a claim.
func (w *Worker) passOverMember(j *laravel.Job, env *payload.Envelope) bool {
	noCompanion := w.cfg.BatchCallbacks != BatchCallbacksRun
	batch := noCompanion && w.cfg.BatchCompanion == "" && w.version.AtLeast(8, 0) && w.batchCallbacks.anyNeeds() &&
		bytes.Contains(j.Payload, batchIDKey)
	chain := noCompanion && w.cfg.FailedCompanion == "" && hasChainCatch(j.Payload)
	if !batch && !chain {
		return false
	}
	if env == nil {
		var err error
		if env, err = payload.ParseEnvelope(j.Payload); err != nil {
			return false
		}
		j.Read = &claimRead{env: env}
	}
	r := &jobRun{env: env}
	r.class, r.displayName = classOf(env)
	cmd, err := payload.DecodeCommand(env, w.keyring)
	if err != nil || !sameClass(cmd.Class, r.class) {
		return false // process decides
	}
	r.cmd = cmd
	why := ""
	if needs, ok := w.batchCallbacks.get(batchID(r)); batch && ok && needs {
		why = batchNeedsPHPWhy
	} else if chain && w.chainNeedsPHP(r) {
		why = chainNeedsPHPWhy
	} else {
		return false
	}
	j.Read = &claimRead{env: env, why: why}
	return true
}

// chainCatchKey is how a serialized command's chainCatchCallbacks property starts when it holds an
// array, as it sits in the payload's JSON.
var chainCatchKey = []byte(`chainCatchCallbacks\";a:`)

// hasChainCatch reports whether a payload may hold a command with chain catch callbacks: a non-empty
// array after the property's name. A guess, confirmed by decoding the command.
func hasChainCatch(raw []byte) bool {
	for rest := raw; ; {
		i := bytes.Index(rest, chainCatchKey)
		if i < 0 {
			return false
		}
		rest = rest[i+len(chainCatchKey):]
		if len(rest) > 0 && rest[0] != '0' {
			return true
		}
	}
}

// batchIDKey is in every payload of a batch's member (a property of the command, or the envelope's
// key).
var batchIDKey = []byte("batchId")

// claimRead is what passOver read from a row (laravel.Job.Read): the payload, and why the row was
// passed over, if it was: left for PHP (why), or to move to the queue move names.
type claimRead struct {
	env  *payload.Envelope
	why  string
	move string
}

// passedOver records the rows a claim passed over (laravel.JobClaimParams.Left) as left for PHP, and
// moves those the move policy sends to PHP's queue.
func (w *Worker) passedOver(jobs []*laravel.Job) {
	moved := w.moveUnclaimed(jobs)
	for _, j := range jobs {
		class, displayName, why := "", fmt.Sprintf("job %d", j.ID), "no Go handler"
		var env *payload.Envelope
		read, _ := j.Read.(*claimRead)
		if read != nil {
			env, why = read.env, read.why
			class, displayName = classOf(env)
		}
		outcome := OutcomeLeftForPHP
		switch {
		case read != nil && read.move != "" && !moved[j]:
			continue // claimed by another worker since, or passed over again by a later claim
		case read != nil && read.move != "":
			outcome = OutcomeMoved
			w.log.Info("Moved (no Go handler)", "class", displayName, "id", j.ID, "from", j.Queue, "to", read.move)
		default:
			again, first := w.remember(j)
			if !first {
				continue // passed over by two claims at once: the other one counts it
			}
			w.stats.left.Add(1)
			w.countLeft(again)
			w.logLeft(class, displayName, j, why, again)
		}
		if w.obs != nil {
			// The metrics and traces count it as a row claimed and left for PHP, or moved.
			now := time.Now()
			w.obs.JobFinished(context.Background(), &JobEvent{
				ID: j.ID, Connection: w.cfg.Connection, Queue: j.Queue, Class: class, DisplayName: displayName,
				Attempts: j.Attempts, AvailableAt: j.AvailableAt, Claimed: now, Finished: now,
				Outcome: outcome, Envelope: env,
			})
		}
		w.passed.Add(1)
		for {
			top := w.passedTop.Load()
			if j.ID <= top || w.passedTop.CompareAndSwap(top, j.ID) {
				break
			}
		}
	}
}

// unclaimedMover moves rows no claim holds to another queue (*laravel.Conn does).
type unclaimedMover interface {
	JobMoveUnclaimed(ctx context.Context, jobs []*laravel.Job, target string, at int64) ([]*laravel.Job, error)
}

// moveUnclaimed moves the rows of jobs that passOver passed over to move them to the queue PHP works,
// byte for byte, their attempts as they were, in one transaction (see laravel.Conn.JobMoveUnclaimed),
// and returns the ones it moved. No attempt is spent on them, so a worker killed at any moment leaves
// each where it was or moved, never failed unrun by PHP's worker ($tries = 1). A row claimed since it
// was read is that claim's; rows the database could not move are passed over again, and moved then,
// by a later claim.
func (w *Worker) moveUnclaimed(jobs []*laravel.Job) map[*laravel.Job]bool {
	var move []*laravel.Job
	target := ""
	for _, j := range jobs {
		if read, _ := j.Read.(*claimRead); read != nil && read.move != "" {
			move, target = append(move, j), read.move // one policy: one target
		}
	}
	if len(move) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	moved, err := w.conn.(unclaimedMover).JobMoveUnclaimed(ctx, move, target, w.clock().Unix())
	if err != nil {
		w.log.Warn("could not move jobs with no Go handler; a later claim moves them", "jobs", len(move), "to", target, "error", err)
	}
	w.stats.moved.Add(int64(len(moved)))
	set := make(map[*laravel.Job]bool, len(moved))
	for _, j := range moved {
		set[j] = true
	}
	return set
}

// commandNameKey is how Laravel's payloads name a queued command's class, before the serialized
// command.
var commandNameKey = []byte(`"commandName":"`)

// peekCommandName finds the first "commandName" string in a payload without reading the rest, for a
// quick guess at its class: a guess, since the key may sit elsewhere than in data, so it may only ever
// lead to a job being claimed (process then reads the payload whole and decides), never to one passed
// over. Values with escapes other than \\ and \/ are not guessed.
func peekCommandName(raw []byte) (string, bool) {
	i := bytes.Index(raw, commandNameKey)
	if i < 0 {
		return "", false
	}
	rest := raw[i+len(commandNameKey):]
	var b []byte
	for k := 0; k < len(rest); k++ {
		switch c := rest[k]; c {
		case '"':
			return string(b), len(b) > 0
		case '\\':
			if k+1 >= len(rest) || (rest[k+1] != '\\' && rest[k+1] != '/') {
				return "", false
			}
			k++
			b = append(b, rest[k])
		default:
			b = append(b, c)
		}
	}
	return "", false
}
