<?php

namespace App\Jobs\Scenario;

/**
 * A ScenarioUnique that does nothing, which artisan-go runs with a builtin route whose unique_id
 * template computes what uniqueId() returns.
 */
class ScenarioUniqueRouted extends ScenarioUnique
{
    public function handle()
    {
    }
}
