<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use RuntimeException;

/**
 * A job dispatched through job middleware (WithoutOverlapping, ThrottlesExceptions, RateLimited, set
 * with through() so that they are serialized into the payload). It sleeps $seconds, then throws on its
 * first $failTimes attempts.
 */
class Guarded implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $label;
    public $seconds;
    public $failTimes;
    public $tries;

    public function __construct(string $label, float $seconds = 0, int $failTimes = 0, ?int $tries = 3)
    {
        $this->label = $label;
        $this->seconds = $seconds;
        $this->failTimes = $failTimes;
        $this->tries = $tries;
    }

    public function handle()
    {
        if ($this->seconds > 0) {
            usleep((int) ($this->seconds * 1000000));
        }
        InteropLog::job($this, $this->job);
        if ($this->job->attempts() <= $this->failTimes) {
            throw new RuntimeException('guarded attempt '.$this->job->attempts());
        }
    }
}
