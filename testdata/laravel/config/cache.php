<?php

use Illuminate\Support\Str;

return [
    'default' => env('CACHE_DRIVER', 'database'),

    'stores' => [
        'array' => [
            'driver' => 'array',
            'serialize' => false,
        ],

        'database' => [
            'driver' => 'database',
            'table' => 'cache',
            'connection' => null,
            'lock_connection' => null,
        ],

        'file' => [
            'driver' => 'file',
            'path' => storage_path('framework/cache/data'),
            // Octal, as config/cache.php writes it (0664): the tests set it to check the worker's files.
            'permission' => env('CACHE_FILE_PERMISSION') ? octdec(env('CACHE_FILE_PERMISSION')) : null,
        ],

        'memcached' => [
            'driver' => 'memcached',
            'persistent_id' => env('MEMCACHED_PERSISTENT_ID'),
            'sasl' => [
                env('MEMCACHED_USERNAME'),
                env('MEMCACHED_PASSWORD'),
            ],
            // The tests set a pool of servers (MEMCACHED_SERVERS, "host:port:weight,...") and the
            // extension's distribution (MEMCACHED_DISTRIBUTION), as an application writes them here.
            'options' => ! class_exists(Memcached::class) ? [] : array_filter([
                Memcached::OPT_DISTRIBUTION => env('MEMCACHED_DISTRIBUTION') === 'consistent' ? Memcached::DISTRIBUTION_CONSISTENT : null,
                Memcached::OPT_LIBKETAMA_COMPATIBLE => env('MEMCACHED_DISTRIBUTION') === 'ketama' ? true : null,
            ], fn ($v) => $v !== null),
            'servers' => env('MEMCACHED_SERVERS') ? array_map(function ($s) {
                [$host, $port, $weight] = explode(':', $s);

                return ['host' => $host, 'port' => (int) $port, 'weight' => (int) $weight];
            }, explode(',', env('MEMCACHED_SERVERS'))) : [
                [
                    'host' => env('MEMCACHED_HOST', '127.0.0.1'),
                    'port' => env('MEMCACHED_PORT', 11211),
                    'weight' => 100,
                ],
            ],
        ],

        'redis' => [
            'driver' => 'redis',
            'connection' => 'cache',
            'lock_connection' => 'default',
        ],
    ],

    'prefix' => env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_cache'),
];
