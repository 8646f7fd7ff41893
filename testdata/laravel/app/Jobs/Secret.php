<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeEncrypted;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A job whose serialized command is encrypted with APP_KEY.
 */
class Secret implements ShouldQueue, ShouldBeEncrypted
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $label;
    private $password;

    public function __construct(string $label = 'secret', string $password = 'hunter2')
    {
        $this->label = $label;
        $this->password = $password;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job);
    }
}
