<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A job that sleeps, for timeout and shutdown tests.
 */
class Slow implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $seconds;
    public $timeout;
    public $tries = 1;
    public $failOnTimeout = true;

    public function __construct(float $seconds = 2, ?int $timeout = 60)
    {
        $this->seconds = $seconds;
        $this->timeout = $timeout;
    }

    public function handle()
    {
        usleep((int) ($this->seconds * 1000000));
        InteropLog::job($this, $this->job);
    }
}
