<?php

namespace App\Jobs\Scenario;

use App\Models\User;
use Illuminate\Database\Eloquent\Collection;
use Illuminate\Queue\SerializesModels;

/**
 * A Scenario holding a model and a collection of models (SerializesModels): PHP reloads them before
 * handle() and fails the job with ModelNotFoundException when one is gone.
 */
class ScenarioModel extends Scenario
{
    use SerializesModels;

    public $user;
    public $users;

    public function __construct(string $name, array $plan, User $user, Collection $users)
    {
        parent::__construct($name, $plan);
        $this->user = $user;
        $this->users = $users;
    }

    protected function record(): array
    {
        return parent::record() + ['user' => $this->user->getKey(), 'users' => $this->users->modelKeys()];
    }
}
