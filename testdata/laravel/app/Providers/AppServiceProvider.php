<?php

namespace App\Providers;

use App\Support\InteropLog;
use App\Support\NoopComposer;
use Illuminate\Queue\Events\JobProcessing;
use Illuminate\Support\Facades\Queue;
use Illuminate\Support\ServiceProvider;

class AppServiceProvider extends ServiceProvider
{
    public function register()
    {
        $this->app->instance('composer', new NoopComposer($this->app['files'], $this->app->basePath()));
    }

    public function boot()
    {
        // Remember the job being processed so that code without access to it (notifications,
        // mailables, batch callbacks) can still record its uuid and attempts.
        Queue::before(function (JobProcessing $event) {
            InteropLog::$current = $event->job;
        });
    }
}
