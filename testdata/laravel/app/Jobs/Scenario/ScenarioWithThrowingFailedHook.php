<?php

namespace App\Jobs\Scenario;

use App\Support\InteropLog;
use LogicException;
use Throwable;

/**
 * A Scenario whose failed() method records the exception it is given and then throws: PHP's worker
 * reports that exception and writes one failed_jobs row, for the job's own.
 */
class ScenarioWithThrowingFailedHook extends Scenario
{
    public function failed(Throwable $e)
    {
        InteropLog::write(static::class.'@failed', null, ['name' => $this->name, 'message' => $e->getMessage()]);

        throw new LogicException('failed() itself threw');
    }
}
