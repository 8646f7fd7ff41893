<?php

namespace App\Jobs\Scenario;

use Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing;

/**
 * A ShouldBeUniqueUntilProcessing Scenario: its lock goes as processing starts.
 */
class ScenarioUniqueUntilProcessing extends ScenarioUnique implements ShouldBeUniqueUntilProcessing
{
}
