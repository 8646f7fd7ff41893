<?php

namespace App\Mail;

use App\Support\InteropLog;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Mail\Mailable;

/**
 * A queued mailable, sent through the array (or log) mailer.
 */
class ShippedMail extends Mailable implements ShouldQueue
{
    use Queueable;

    public $orderId;

    public function __construct(int $orderId = 1)
    {
        $this->orderId = $orderId;
    }

    public function build()
    {
        InteropLog::write(static::class, null, ['orderId' => $this->orderId, 'to' => $this->to]);

        return $this->subject('Order '.$this->orderId.' shipped')->html('<p>Order '.$this->orderId.' shipped.</p>');
    }
}
