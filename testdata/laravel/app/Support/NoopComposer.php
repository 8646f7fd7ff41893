<?php

namespace App\Support;

use Illuminate\Support\Composer;

/**
 * The make-migration commands ask Composer to regenerate its autoloader afterwards. This application
 * has no Composer autoloader, and running composer here must never create a vendor directory, so that
 * step does nothing.
 */
class NoopComposer extends Composer
{
    public function dumpAutoloads($extra = '')
    {
    }

    public function dumpOptimized()
    {
    }
}
