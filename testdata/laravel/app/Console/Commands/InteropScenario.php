<?php

namespace App\Console\Commands;

use App\Models\User;
use App\Support\InteropLog;
use Illuminate\Bus\Batch;
use Illuminate\Console\Command;
use Illuminate\Database\Eloquent\Collection;
use Illuminate\Queue\Middleware\RateLimited;
use Illuminate\Queue\Middleware\ThrottlesExceptions;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Support\Facades\Bus;
use InvalidArgumentException;
use Throwable;

/**
 * Dispatches the jobs of one step of a differential scenario (internal/differential), described as
 * JSON: {"mode": "jobs"|"chain"|"batch", "jobs": [{"class", "name", "plan", "tries", "backoff",
 * "maxExceptions", "timeout", "failOnTimeout", "retryUntil" (seconds from now), "delay", "queue",
 * "key", "users"}], "catch": chain catch callback, "callbacks": batch then/catch/finally,
 * "allowFailures": batch option}.
 */
class InteropScenario extends Command
{
    protected $signature = 'interop:scenario {spec : the JSON description}';

    protected $description = 'Dispatch the jobs of a differential scenario step';

    public function handle()
    {
        $spec = json_decode($this->argument('spec'), true, 512, JSON_THROW_ON_ERROR);
        $jobs = array_map([$this, 'make'], $spec['jobs'] ?? []);
        switch ($spec['mode'] ?? 'jobs') {
            case 'jobs':
                foreach ($jobs as $job) {
                    dispatch($job);
                }
                break;
            case 'chain':
                $chain = Bus::chain($jobs);
                if (! empty($spec['catch'])) {
                    $chain->catch(static function (Throwable $e) {
                        InteropLog::write('chain.catch', null, ['message' => $e->getMessage()]);
                    });
                }
                $chain->dispatch();
                break;
            case 'batch':
                $batch = Bus::batch($jobs)->name('scenario');
                if (! empty($spec['callbacks'])) {
                    $batch->then(static function (Batch $batch) {
                        InteropLog::write('batch.then', null, ['pending' => $batch->pendingJobs]);
                    })->catch(static function (Batch $batch, Throwable $e) {
                        InteropLog::write('batch.catch', null, ['message' => $e->getMessage()]);
                    })->finally(static function (Batch $batch) {
                        InteropLog::write('batch.finally', null, ['failed' => $batch->failedJobs]);
                    });
                }
                if (! empty($spec['allowFailures'])) {
                    $batch->allowFailures();
                }
                $batch->dispatch();
                break;
            default:
                throw new InvalidArgumentException('unknown mode '.$spec['mode']);
        }

        return 0;
    }

    /**
     * Builds a job middleware from its description: overlap[:KEY], throttle:MAX:DECAY_MINUTES:BACKOFF
     * or rate-limited[:dont-release] (the interop limiter).
     */
    private function middleware(string $spec)
    {
        $p = explode(':', $spec);
        switch ($p[0]) {
            case 'overlap':
                return new WithoutOverlapping($p[1] ?? 'k');
            case 'throttle':
                return (new ThrottlesExceptions((int) $p[1], (int) $p[2]))->backoff((int) $p[3]);
            case 'rate-limited':
                $m = new RateLimited('interop');

                return ($p[1] ?? '') === 'dont-release' ? $m->dontRelease() : $m;
        }
        throw new InvalidArgumentException('unknown middleware '.$spec);
    }

    /**
     * Builds one job from its description.
     */
    private function make(array $j)
    {
        $class = 'App\\Jobs\\Scenario\\'.($j['class'] ?? 'Scenario');
        $plan = $j['plan'] ?? ['ok'];
        if (isset($j['users'])) {
            $users = new Collection();
            for ($i = 0; $i < $j['users']; $i++) {
                $users->push(User::create(['name' => $j['name'].$i, 'email' => $j['name'].$i.'@example.com']));
            }
            $job = new $class($j['name'], $plan, $users->first(), $users);
        } else {
            $job = new $class($j['name'], $plan);
        }
        foreach (['tries', 'backoff', 'maxExceptions', 'timeout', 'failOnTimeout', 'key'] as $prop) {
            if (array_key_exists($prop, $j)) {
                $job->{$prop} = $j[$prop];
            }
        }
        if (isset($j['retryUntil'])) {
            $job->retryUntil = time() + $j['retryUntil'];
        }
        if (isset($j['delay'])) {
            $job->delay($j['delay']);
        }
        if (isset($j['queue'])) {
            $job->onQueue($j['queue']);
        }
        if (isset($j['middleware'])) {
            $job->through([$this->middleware($j['middleware'])]);
        }

        return $job;
    }
}
