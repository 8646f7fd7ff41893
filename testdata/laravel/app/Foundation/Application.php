<?php

namespace App\Foundation;

use Illuminate\Foundation\Application as BaseApplication;

/**
 * The framework's application with its bootstrap cache moved into the storage directory, so that
 * the checked-in application directory is never written to.
 */
class Application extends BaseApplication
{
    public function bootstrapPath($path = '')
    {
        $dir = $this->storagePath().DIRECTORY_SEPARATOR.'bootstrap';

        return $dir.($path ? DIRECTORY_SEPARATOR.$path : $path);
    }
}
