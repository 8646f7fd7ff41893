<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;
use Illuminate\Support\Facades\Bus;

/**
 * Prints a batch as Bus::findBatch sees it, as JSON (null when there is no such batch).
 */
class InteropBatch extends Command
{
    protected $signature = 'interop:batch {id}';

    protected $description = 'Print Bus::findBatch($id) as JSON';

    public function handle()
    {
        $batch = Bus::findBatch($this->argument('id'));
        $out = $batch ? $batch->toArray() + [
            'failedJobIds' => $batch->failedJobIds,
            'finished' => $batch->finished(),
            'cancelled' => $batch->cancelled(),
            'hasFailures' => $batch->hasFailures(),
        ] : null;
        $this->line(json_encode($out, JSON_UNESCAPED_SLASHES));

        return 0;
    }
}
