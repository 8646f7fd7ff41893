<?php

namespace App\Models;

use Illuminate\Database\Eloquent\Model;
use Illuminate\Notifications\Notifiable;

/**
 * A small model for SerializesModels jobs and notifications.
 */
class User extends Model
{
    use Notifiable;

    protected $fillable = ['name', 'email'];
}
