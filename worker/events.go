package worker

import "time"

// RunEvent is one event of a job's run, as Laravel's worker fires them and `queue:work --json` (11.27+)
// prints them: JobProcessing ("starting"), JobProcessed ("success"), JobReleasedAfterException
// ("released_after_exception") and JobFailed ("failed").
type RunEvent struct {
	Status string // starting, success, released_after_exception or failed
	// Result is what became of the row: deleted, released, or "" (starting). A failed job is deleted
	// as it fails, so PHP reports it "deleted".
	Result     string
	ID         int64
	UUID       string
	Connection string
	Queue      string
	Job        string // the job's name as PHP resolves it: displayName, or the class
	Attempts   int
	Exception  string        // failed: the exception's PHP class
	Message    string        // failed: the exception's message
	Duration   time.Duration // since starting; 0 for starting
	Time       time.Time
}

// The statuses of RunEvent.
const (
	EventStarting = "starting"
	EventSuccess  = "success"
	EventReleased = "released_after_exception"
	EventFailed   = "failed"
	// EventQueuePaused and EventQueueResumed say that the worker saw one of its queues paused or
	// resumed (queue:pause, queue:resume), as Laravel 13.26+ raises WorkerQueuePaused and
	// WorkerQueueResumed; such an event names only the queue, the connection and the time.
	EventQueuePaused  = "paused"
	EventQueueResumed = "resumed"
)

// report sends one event of r's run to Params.Events.
func (w *Worker) report(r *jobRun, status, result string, cause error) {
	if w.events == nil || r.env == nil && r.peeked == nil {
		// A payload that is not a JSON object with a job has no name PHP could print: its worker
		// prints nothing for it (resolving the name throws in the JobProcessing listener).
		return
	}
	j := r.rj.job
	e := RunEvent{Status: status, Result: result, ID: j.ID, Connection: w.cfg.Connection, Queue: j.Queue,
		Job: r.displayName, Attempts: j.Attempts, Time: w.clock()}
	e.UUID = r.uuid()
	if status != EventStarting {
		e.Duration = time.Since(r.rj.started)
	}
	if cause != nil {
		e.Exception, e.Message = exceptionClassMessage(cause)
	}
	w.events(e)
}
