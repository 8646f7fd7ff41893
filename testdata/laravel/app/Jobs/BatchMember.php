<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Batchable;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use RuntimeException;

/**
 * A member of a batch; a member with $fail set throws, which fails (and cancels) the batch.
 */
class BatchMember implements ShouldQueue
{
    use Batchable, Dispatchable, InteractsWithQueue, Queueable;

    public $n;
    public $fail;
    public $tries = 1;

    public function __construct(int $n, bool $fail = false)
    {
        $this->n = $n;
        $this->fail = $fail;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job, ['cancelled' => $this->batch() ? $this->batch()->cancelled() : null]);
        if ($this->fail) {
            throw new RuntimeException('batch member '.$this->n.' fails');
        }
    }
}
