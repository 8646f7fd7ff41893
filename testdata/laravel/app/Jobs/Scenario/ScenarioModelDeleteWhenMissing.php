<?php

namespace App\Jobs\Scenario;

/**
 * A ScenarioModel with $deleteWhenMissingModels: PHP deletes it silently when a model is gone.
 */
class ScenarioModelDeleteWhenMissing extends ScenarioModel
{
    public $deleteWhenMissingModels = true;
}
