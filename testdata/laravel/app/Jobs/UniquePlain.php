<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A unique job in Laravel's plainest form: no uniqueId, no uniqueFor. Its lock has the empty id, and
 * nothing in its payload says that the class is unique.
 */
class UniquePlain implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public function handle()
    {
        InteropLog::job($this, $this->job);
    }
}
