<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Support\Facades\Cache;
use Illuminate\Queue\InteractsWithQueue;
use RuntimeException;

/**
 * A job dispatched through job middleware (WithoutOverlapping, ThrottlesExceptions, RateLimited, set
 * with through() so that they are serialized into the payload). It waits for the cache key $waitFor
 * when set, sleeps $seconds, then throws on its first $failTimes attempts.
 */
class Guarded implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $label;
    public $seconds;
    public $failTimes;
    public $tries;
    public $waitFor;

    public function __construct(string $label, float $seconds = 0, int $failTimes = 0, ?int $tries = 3, ?string $waitFor = null)
    {
        $this->label = $label;
        $this->seconds = $seconds;
        $this->failTimes = $failTimes;
        $this->tries = $tries;
        $this->waitFor = $waitFor;
    }

    public function handle()
    {
        // A test holds the job here, inside its middleware, until it puts the cache key $waitFor.
        for ($deadline = time() + 60; $this->waitFor !== null && ! Cache::has($this->waitFor) && time() < $deadline;) {
            usleep(20000);
        }
        if ($this->seconds > 0) {
            usleep((int) ($this->seconds * 1000000));
        }
        InteropLog::job($this, $this->job);
        if ($this->job->attempts() <= $this->failTimes) {
            throw new RuntimeException('guarded attempt '.$this->job->attempts());
        }
    }
}
