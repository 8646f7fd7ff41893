<?php

namespace App\Jobs\Scenario;

use Illuminate\Contracts\Queue\ShouldBeUnique;

/**
 * A ShouldBeUnique Scenario, unique by $key through a uniqueId() method.
 */
class ScenarioUnique extends Scenario implements ShouldBeUnique
{
    public $key = 'k';
    public $uniqueFor = 3600;

    public function uniqueId()
    {
        return $this->key;
    }
}
