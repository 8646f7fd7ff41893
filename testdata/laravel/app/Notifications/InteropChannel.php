<?php

namespace App\Notifications;

use App\Support\InteropLog;

/**
 * A notification channel that records the delivery in interop_log.
 */
class InteropChannel
{
    public function send($notifiable, $notification)
    {
        InteropLog::write(get_class($notification), null, [
            'notifiable' => $notifiable->getKey(),
            'message' => $notification->message,
        ]);
    }
}
