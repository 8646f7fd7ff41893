<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use RuntimeException;

/**
 * A job that throws on its first $failTimes attempts and succeeds afterwards. Its retry settings
 * (tries, backoff, maxExceptions, timeout) are properties so each test can choose them.
 */
class Flaky implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $failTimes;
    public $tries;
    public $backoff;
    public $maxExceptions;
    public $timeout;

    public function __construct(int $failTimes = 1, ?int $tries = 3, $backoff = 0, ?int $maxExceptions = null, ?int $timeout = 60)
    {
        $this->failTimes = $failTimes;
        $this->tries = $tries;
        $this->backoff = $backoff;
        $this->maxExceptions = $maxExceptions;
        $this->timeout = $timeout;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job);
        if ($this->job->attempts() <= $this->failTimes) {
            throw new RuntimeException('flaky attempt '.$this->job->attempts());
        }
    }
}
