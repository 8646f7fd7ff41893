<?php

namespace App\Jobs;

use App\Models\User;
use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Database\Eloquent\Collection;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * A job holding a model and a collection of models, which SerializesModels stores as
 * ModelIdentifiers and reloads from the users table when the job runs.
 */
class WithModel implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $user;
    public $users;
    public $note;

    public function __construct(User $user, Collection $users, string $note = 'with model')
    {
        $this->user = $user;
        $this->users = $users;
        $this->note = $note;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job);
    }
}
