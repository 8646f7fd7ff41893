<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Support\Carbon;
use RuntimeException;

/**
 * A job retried until a deadline ($seconds after dispatch) rather than a number of tries; it throws
 * on its first $failTimes attempts.
 */
class RetryUntil implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $until;
    public $failTimes;

    public function __construct(int $seconds = 300, int $failTimes = 0)
    {
        $this->until = Carbon::now()->addSeconds($seconds);
        $this->failTimes = $failTimes;
    }

    public function retryUntil()
    {
        return $this->until;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job);
        if ($this->job->attempts() <= $this->failTimes) {
            throw new RuntimeException('retry-until attempt '.$this->job->attempts());
        }
    }
}
