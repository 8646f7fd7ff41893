<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Encryption\Encrypter;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Support\Str;
use RuntimeException;
use Throwable;

/**
 * Runs the PHP side of a job's failure for artisan-go: the chain's catch callbacks and the job's own
 * failed() method, as CallQueuedHandler::failed does after a PHP worker fails a job.
 *
 * When a Go worker fails a job it writes failed_jobs, releases the unique lock and records the batch
 * failure itself, then queues this job with the failed job's data.command; a PHP worker unserializes
 * (or decrypts) the command as CallQueuedHandler::getCommand does and runs the rest. What the hooks
 * throw is reported, not retried; $maxExceptions = 1 keeps them from running again should anything
 * else throw; $tries = 3 lets an attempt spent by a Go worker killed while it held the row pass.
 *
 * Copy this class into an application whose jobs Go workers run, and set artisan-go's
 * worker.failed_companion to its name.
 */
class RunFailedHooks implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    /** @var string the failed job's data.command: serialized, or encrypted */
    public $command;

    /** @var string|null the exception class the Go worker recorded */
    public $exceptionClass;

    /** @var string the exception message the Go worker recorded */
    public $exceptionMessage = '';

    public $tries = 3;

    public $maxExceptions = 1;

    public function handle(Encrypter $encrypter)
    {
        // What the hooks throw (a model gone when the command is unserialized again, a failed() that
        // throws) is reported, as PHP's worker reports what Job::fail throws after it has logged the
        // failed job; this job does not fail in its turn, which would add a failed_jobs row of its own.
        try {
            $command = Str::startsWith($this->command, 'O:')
                ? unserialize($this->command)
                : unserialize($encrypter->decrypt($this->command));
            $e = $this->exception();

            if (method_exists($command, 'invokeChainCatchCallbacks')) {
                $command->invokeChainCatchCallbacks($e);
            }
            if (method_exists($command, 'failed')) {
                $command->failed($e);
            }
        } catch (Throwable $thrown) {
            report($thrown);
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
