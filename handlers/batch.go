package handlers

import (
	"context"
	"errors"
	"time"
)

// Batch is a job's batch as its job_batches row holds it, what Laravel's $this->batch() returns to a
// Batchable job.
type Batch struct {
	ID, Name string
	// TotalJobs, PendingJobs and FailedJobs are Laravel's counters: jobs added, jobs not yet done
	// (a failed one stays pending), jobs that failed.
	TotalJobs, PendingJobs, FailedJobs int
	CreatedAt                          time.Time
	CancelledAt                        *time.Time // nil until the batch is cancelled
	FinishedAt                         *time.Time // nil until every job has run
}

// Cancelled reports whether the batch was cancelled, as Batch::cancelled().
func (b *Batch) Cancelled() bool { return b.CancelledAt != nil }

// Finished reports whether every job of the batch has run, as Batch::finished().
func (b *Batch) Finished() bool { return b.FinishedAt != nil }

// Batches reads and cancels batches; the worker gives each job one on its database.
type Batches interface {
	// Find returns the batch, or nil when no job_batches row has the id.
	Find(ctx context.Context, id string) (*Batch, error)
	// Cancel cancels the batch, as Batch::cancel() does.
	Cancel(ctx context.Context, id string) error
}

// ErrNoBatches is returned by Job.Batch and Job.CancelBatch for a job that was not given the
// worker's batches (one built by hand, say).
var ErrNoBatches = errors.New("handlers: the job has no batch store; it is set by the worker")

// SetBatch gives the job its batch id and where to read the batch. The worker calls it.
func (j *Job) SetBatch(id string, batches Batches) {
	j.batchID, j.batches = id, batches
}

// BatchID returns the id of the job's batch, "" when the job is in no batch.
func (j *Job) BatchID() string { return j.batchID }

// Batch reads the job's batch as $this->batch() does: nil when the job is in no batch or its batch
// is gone (pruned). A handler of a Batchable job checks Cancelled() on it, as PHP's handle() checks
// $this->batch()->cancelled(), to stop early once the batch was cancelled.
func (j *Job) Batch(ctx context.Context) (*Batch, error) {
	if j.batchID == "" {
		return nil, nil
	}
	if j.batches == nil {
		return nil, ErrNoBatches
	}
	return j.batches.Find(ctx, j.batchID)
}

// CancelBatch cancels the job's batch, as $this->batch()->cancel() does; the batch's other jobs then
// see it cancelled. A job in no batch has nothing to cancel.
func (j *Job) CancelBatch(ctx context.Context) error {
	if j.batchID == "" {
		return nil
	}
	if j.batches == nil {
		return ErrNoBatches
	}
	return j.batches.Cancel(ctx, j.batchID)
}
