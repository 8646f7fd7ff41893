<?php

namespace App\Console\Commands;

use App\Jobs\Noop;
use Illuminate\Console\Command;
use Illuminate\Support\Facades\Queue;

/**
 * Dispatches n no-op jobs one by one at a steady rate, as application code does, and prints each
 * job's id and the time its insert returned (Unix seconds with microseconds), one job per line.
 */
class InteropBenchProduce extends Command
{
    protected $signature = 'interop:bench-produce {n} {rate} {--queue=} {--first=0}';

    protected $description = 'Dispatch n App\Jobs\Noop jobs at rate jobs per second';

    public function handle()
    {
        $n = (int) $this->argument('n');
        $interval = 1.0 / max(0.001, (float) $this->argument('rate'));
        $first = (int) $this->option('first');
        $queue = Queue::connection();
        $next = microtime(true);
        for ($i = 0; $i < $n; $i++) {
            $wait = $next - microtime(true);
            if ($wait > 0) {
                usleep((int) ($wait * 1e6));
            }
            $next += $interval;
            $id = $queue->push(new Noop($first + $i), '', $this->option('queue'));
            fwrite(STDOUT, $id.' '.sprintf('%.6f', microtime(true))."\n");
        }

        return 0;
    }
}
