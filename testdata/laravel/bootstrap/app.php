<?php

// Builds the application. Everything it writes (logs, compiled views, the package and service caches,
// generated migrations) goes under APP_STORAGE, so several tests can share this directory.

$app = new App\Foundation\Application(dirname(__DIR__));

if ($storage = getenv('APP_STORAGE')) {
    $app->useStoragePath($storage);
    $app->useDatabasePath($storage.'/database');
    $app->useEnvironmentPath($storage);
}

foreach (['bootstrap/cache', 'logs', 'framework/views', 'database/migrations'] as $dir) {
    if (! is_dir($path = $app->storagePath().DIRECTORY_SEPARATOR.$dir)) {
        @mkdir($path, 0777, true);
    }
}

$app->singleton(Illuminate\Contracts\Console\Kernel::class, App\Console\Kernel::class);
$app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, App\Exceptions\Handler::class);

return $app;
