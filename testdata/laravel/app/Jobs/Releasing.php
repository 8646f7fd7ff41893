<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A job that releases itself back onto the queue on its first attempt and completes on the next.
 */
class Releasing implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $tries = 3;
    public $releaseDelay;

    public function __construct(int $releaseDelay = 0)
    {
        $this->releaseDelay = $releaseDelay;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job);
        if ($this->job->attempts() === 1) {
            $this->release($this->releaseDelay);
        }
    }
}
