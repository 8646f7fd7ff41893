<?php

namespace App\Jobs;

use App\Support\InteropLog;

/**
 * The target of raw "Class@method" pushes: Queue::push('App\Jobs\RawHandler@handle', $data).
 * Raw jobs are not deleted automatically, so it deletes the job itself.
 */
class RawHandler
{
    public function handle($job, $data)
    {
        InteropLog::write(static::class.'@handle', $job, ['data' => $data]);
        $job->delete();
    }

    public function fire($job, $data)
    {
        InteropLog::write(static::class.'@fire', $job, ['data' => $data]);
        $job->delete();
    }
}
