<?php

// Composer is not needed: when vendor/autoload.php exists (after `composer install`) it is used;
// otherwise the framework comes from Debian's php-laravel-framework package, whose autoloader lives
// on PHP's include path (/usr/share/php). The application's own App\ namespace is loaded by a small
// PSR-4 loader mapped onto app/.

if (file_exists(__DIR__.'/../vendor/autoload.php')) {
    require __DIR__.'/../vendor/autoload.php';
} else {
    $framework = getenv('LARAVEL_AUTOLOAD') ?: 'Illuminate/autoload.php';
    if (! stream_resolve_include_path($framework) && ! is_file($framework)) {
        fwrite(STDERR, "Laravel 8.83 is not installed: apt-get install php-laravel-framework, or run composer install in ".dirname(__DIR__)."\n");
        exit(2);
    }
    require_once $framework;
}

spl_autoload_register(function ($class) {
    $prefix = 'App\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__.'/../app/'.str_replace('\\', '/', substr($class, strlen($prefix))).'.php';
    if (is_file($file)) {
        require $file;
    }
});
