<?php

namespace App\Notifications;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Notifications\Notification;

/**
 * A queued notification delivered through InteropChannel.
 */
class Shipped extends Notification implements ShouldQueue
{
    use Queueable;

    public $message;

    public function __construct(string $message = 'shipped')
    {
        $this->message = $message;
    }

    public function via($notifiable)
    {
        return [InteropChannel::class];
    }
}
