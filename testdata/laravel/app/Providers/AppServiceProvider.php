<?php

namespace App\Providers;

use App\Support\InteropLog;
use App\Support\NoopComposer;
use Illuminate\Cache\RateLimiting\Limit;
use Illuminate\Queue\Events\JobProcessing;
use Illuminate\Support\Facades\Queue;
use Illuminate\Support\Facades\RateLimiter;
use Illuminate\Support\ServiceProvider;

class AppServiceProvider extends ServiceProvider
{
    public function register()
    {
        $this->app->instance('composer', new NoopComposer($this->app['files'], $this->app->basePath()));
    }

    public function boot()
    {
        // The limiter App\Jobs\Guarded's RateLimited middleware names: 2 jobs per minute, keyed by
        // nothing (artisan-go reads the same limit from its rate_limiters setting).
        RateLimiter::for('interop', function ($job) {
            return Limit::perMinute(2);
        });

        // Remember the job being processed so that code without access to it (notifications,
        // mailables, batch callbacks) can still record its uuid and attempts.
        Queue::before(function (JobProcessing $event) {
            InteropLog::$current = $event->job;
        });
    }
}
