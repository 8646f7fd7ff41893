<?php

namespace App\Enums;

/**
 * A backed enum (PHP 8.1+), serialized as E:…:"App\Enums\Status:Active".
 */
enum Status: string
{
    case Active = 'active';
    case Archived = 'archived';
}
