<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use RuntimeException;
use Throwable;

/**
 * A job that always throws, so it ends in failed_jobs; its failed() hook is recorded too.
 */
class Failing implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $tries = 1;
    public $reason;

    public function __construct(string $reason = 'always fails')
    {
        $this->reason = $reason;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job);
        throw new RuntimeException($this->reason);
    }

    public function failed(Throwable $e)
    {
        InteropLog::write(static::class.'@failed', null, ['message' => $e->getMessage()]);
    }
}
