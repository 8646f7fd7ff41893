<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Encryption\Encrypter;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Support\Str;
use RuntimeException;

/**
 * Runs the PHP side of a job's failure for artisan-go: the chain's catch callbacks and the job's own
 * failed() method, as CallQueuedHandler::failed does after a PHP worker fails a job.
 *
 * When a Go worker fails a job it writes failed_jobs, releases the unique lock and records the batch
 * failure itself, then queues this job with the failed job's data.command; a PHP worker unserializes
 * (or decrypts) the command as CallQueuedHandler::getCommand does and runs the rest. $tries = 1 keeps
 * the hooks from running twice.
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

    public $tries = 1;

    public function handle(Encrypter $encrypter)
    {
        $command = Str::startsWith($this->command, 'O:')
            ? unserialize($this->command)
            : unserialize($encrypter->decrypt($this->command));
        $e = new RuntimeException($this->exceptionClass ? $this->exceptionClass.': '.$this->exceptionMessage : $this->exceptionMessage);

        if (method_exists($command, 'invokeChainCatchCallbacks')) {
            $command->invokeChainCatchCallbacks($e);
        }
        if (method_exists($command, 'failed')) {
            $command->failed($e);
        }
    }
}
