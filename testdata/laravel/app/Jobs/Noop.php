<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A job that does nothing and records nothing, for throughput benchmarks.
 */
class Noop implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $n;

    public function __construct(int $n = 0)
    {
        $this->n = $n;
    }

    public function handle()
    {
    }
}
