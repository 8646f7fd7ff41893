<?php

namespace App\Listeners;

use App\Events\OrderShipped;
use App\Support\InteropLog;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A queued event listener.
 */
class RecordShipment implements ShouldQueue
{
    use InteractsWithQueue;

    public $tries = 2;

    public function handle(OrderShipped $event)
    {
        InteropLog::write(static::class, $this->job, ['orderId' => $event->orderId]);
    }
}
