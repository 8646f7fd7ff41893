<?php

namespace App\Jobs;

use App\Enums\Status;
use App\Support\InteropLog;
use DateTimeImmutable;
use DateTimeZone;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Support\Carbon;

/**
 * A job holding dates (Carbon with a named timezone, DateTimeImmutable with an offset) and an enum
 * case, the non-scalar values a Go decoder meets most.
 */
class Typed implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $at;
    public $immutable;
    public $status;
    public $statuses;

    public function __construct()
    {
        $this->at = Carbon::create(2024, 1, 2, 3, 4, 5, 'Europe/Paris');
        $this->immutable = new DateTimeImmutable('2024-06-30 23:59:58.123456', new DateTimeZone('+02:00'));
        $this->status = Status::Active;
        $this->statuses = [Status::Active, Status::Archived];
    }

    public function handle()
    {
        InteropLog::job($this, $this->job);
    }
}
