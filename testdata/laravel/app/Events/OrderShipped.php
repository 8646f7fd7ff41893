<?php

namespace App\Events;

use Illuminate\Foundation\Events\Dispatchable;

/**
 * An event with a queued listener.
 */
class OrderShipped
{
    use Dispatchable;

    public $orderId;

    public function __construct(int $orderId)
    {
        $this->orderId = $orderId;
    }
}
