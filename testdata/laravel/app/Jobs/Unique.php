<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A unique job: while one with the same key is queued or running, dispatching another is a no-op.
 * The lock lives in the default cache store (CACHE_DRIVER: database or redis).
 */
class Unique implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $key;
    public $uniqueFor = 3600;

    public function __construct(string $key = 'unique')
    {
        $this->key = $key;
    }

    public function uniqueId()
    {
        return $this->key;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job);
    }
}
