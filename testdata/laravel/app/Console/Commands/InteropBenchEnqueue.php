<?php

namespace App\Console\Commands;

use App\Jobs\Noop;
use Illuminate\Console\Command;
use Illuminate\Support\Facades\Queue;

/**
 * Inserts n no-op jobs with Queue::bulk, exactly as Laravel writes them, and prints how long it took.
 */
class InteropBenchEnqueue extends Command
{
    protected $signature = 'interop:bench-enqueue {n} {--queue=} {--chunk=500}';

    protected $description = 'Bulk-insert n App\Jobs\Noop jobs';

    public function handle()
    {
        $n = (int) $this->argument('n');
        $chunk = max(1, (int) $this->option('chunk'));
        $queue = Queue::connection();
        $start = microtime(true);
        for ($done = 0; $done < $n; $done += $chunk) {
            $jobs = [];
            for ($i = $done; $i < min($n, $done + $chunk); $i++) {
                $jobs[] = new Noop($i);
            }
            $queue->bulk($jobs, '', $this->option('queue'));
        }
        $this->line(json_encode(['count' => $n, 'seconds' => round(microtime(true) - $start, 6)]));

        return 0;
    }
}
