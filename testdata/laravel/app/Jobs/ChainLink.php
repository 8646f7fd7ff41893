<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use RuntimeException;

/**
 * One step of a chain; a step with $fail set throws, which stops the chain.
 */
class ChainLink implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $step;
    public $fail;
    public $tries = 1;

    public function __construct(int $step, bool $fail = false)
    {
        $this->step = $step;
        $this->fail = $fail;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job, ['chainedCount' => count($this->chained)]);
        if ($this->fail) {
            throw new RuntimeException('chain step '.$this->step.' fails');
        }
    }
}
