<?php

namespace App\Jobs;

use Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing;

/**
 * A unique job whose lock is released as soon as it starts running.
 */
class UniqueUntilProcessing extends Unique implements ShouldBeUniqueUntilProcessing
{
}
