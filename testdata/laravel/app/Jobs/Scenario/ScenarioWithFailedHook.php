<?php

namespace App\Jobs\Scenario;

use App\Support\InteropLog;
use Throwable;

/**
 * A Scenario with a failed() method, which records the exception it is given.
 */
class ScenarioWithFailedHook extends Scenario
{
    public function failed(Throwable $e)
    {
        InteropLog::write(static::class.'@failed', null, ['name' => $this->name, 'message' => $e->getMessage()]);
    }
}
