<?php

namespace App\Jobs;

use Illuminate\Bus\Batch;
use Illuminate\Bus\BatchRepository;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use ReflectionMethod;
use RuntimeException;
use Throwable;

/**
 * Runs a batch's then/catch/finally callbacks for artisan-go.
 *
 * The callbacks are PHP closures serialized in the batch's options, so a Go worker cannot run them.
 * When a Go worker records the job that triggers them (the last pending job: then; the first
 * failure: catch; every job run: finally) it queues this job on the same queue, and a PHP worker
 * runs the callbacks through Laravel's own Batch::invokeHandlerCallback, with a fresh batch, as
 * Batch::recordSuccessfulJob and Batch::recordFailedJob do. Go queues it once per trigger, so the
 * callbacks run once; $maxExceptions = 1 keeps PHP from running them again after one throws, and
 * $tries = 3 lets an attempt spent by a Go worker killed while it held the row pass.
 *
 * Copy this class into an application whose batches Go workers run, and set artisan-go's
 * worker.batch_companion to its name.
 */
class RunBatchCallbacks implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    /** @var string */
    public $batchId;

    /** @var string[] the callbacks to run, in order: then, catch, finally */
    public $callbacks = [];

    /** @var string|null the failed job's exception class, for catch and finally after a failure */
    public $exceptionClass;

    /** @var string|null the failed job's exception message */
    public $exceptionMessage;

    public $tries = 3;

    public $maxExceptions = 1;

    public function handle(BatchRepository $batches)
    {
        $batch = $batches->find($this->batchId);
        if (! $batch) {
            return;
        }
        $e = $this->exceptionMessage === null ? null
            : $this->exception();
        $invoke = new ReflectionMethod(Batch::class, 'invokeHandlerCallback');
        $invoke->setAccessible(true);
        foreach ($this->callbacks as $type) {
            foreach ($batch->options[$type] ?? [] as $handler) {
                $invoke->invoke($batch, $handler, $batch, $e);
            }
        }
    }

    /**
     * The exception the callbacks receive: of the class the Go worker recorded when PHP has it and can
     * build it from a message, as the original was; otherwise a RuntimeException that names the class.
     */
    private function exception()
    {
        $class = $this->exceptionClass;
        if ($class && class_exists($class) && is_subclass_of($class, Throwable::class)) {
            try {
                return new $class($this->exceptionMessage);
            } catch (Throwable $e) {
                // A constructor that wants more than a message: fall back to naming the class.
            }
        }

        return new RuntimeException($class ? $class.': '.$this->exceptionMessage : $this->exceptionMessage);
    }
}
