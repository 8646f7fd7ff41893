<?php

namespace App\Jobs\Scenario;

use Illuminate\Contracts\Queue\ShouldBeEncrypted;

/**
 * An encrypted (ShouldBeEncrypted) Scenario.
 */
class ScenarioSecret extends Scenario implements ShouldBeEncrypted
{
}
