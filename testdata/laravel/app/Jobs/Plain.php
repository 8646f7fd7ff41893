<?php

namespace App\Jobs;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A job with properties of every visibility and the common scalar and array types.
 */
class Plain implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $name;
    public $count;
    public $ratio = 1.5;
    public $enabled = true;
    public $nothing = null;
    public $tags;
    protected $note;
    private $secret;

    public function __construct(string $name = 'plain', int $count = 1, array $tags = ['a' => 1, 'b' => [true, null, 'x/y']], string $note = 'protected ünïcode', string $secret = 'private')
    {
        $this->name = $name;
        $this->count = $count;
        $this->tags = $tags;
        $this->note = $note;
        $this->secret = $secret;
    }

    public function handle()
    {
        InteropLog::job($this, $this->job);
    }
}
