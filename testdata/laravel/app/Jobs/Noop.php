<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A job that does nothing, for throughput benchmarks. When BENCH_STARTS_DIR is set in the worker's
 * environment (queue:bench at a steady rate), it appends its id and start time to a file of its
 * process there, so that the bench can measure available-to-started latency of PHP workers too.
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
        $dir = getenv('BENCH_STARTS_DIR');
        if ($dir !== false && $dir !== '') {
            file_put_contents($dir.'/'.getmypid(), $this->job->getJobId().' '.sprintf('%.6f', microtime(true))."\n", FILE_APPEND);
        }
    }
}
