<?php

namespace App\Jobs;

use Illuminate\Support\Facades\Cache;

/**
 * A unique job whose lock lives in another cache store than the default one: uniqueVia() returns
 * the store UNIQUE_VIA_STORE names (redis unless set).
 */
class UniqueVia extends Unique
{
    public function uniqueVia()
    {
        return Cache::store(env('UNIQUE_VIA_STORE', 'redis'));
    }
}
