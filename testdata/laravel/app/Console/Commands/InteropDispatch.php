<?php

namespace App\Console\Commands;

use App\Events\OrderShipped;
use App\Jobs;
use App\Mail\ShippedMail;
use App\Models\User;
use App\Notifications\Shipped;
use App\Support\InteropLog;
use Illuminate\Bus\Batch;
use Illuminate\Console\Command;
use Illuminate\Queue\Events\JobQueued;
use Illuminate\Queue\Middleware\RateLimited;
use Illuminate\Queue\Middleware\RateLimitedWithRedis;
use Illuminate\Queue\Middleware\ThrottlesExceptions;
use Illuminate\Queue\Middleware\ThrottlesExceptionsWithRedis;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Queue\Queue as BaseQueue;
use Illuminate\Support\Facades\Bus;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Event;
use Illuminate\Support\Facades\Mail;
use Illuminate\Support\Facades\Queue;
use InvalidArgumentException;
use Throwable;

/**
 * Dispatches jobs of one kind the way application code does, and prints the rows Laravel inserted
 * into the jobs table as JSON: {"jobs":[{"id","uuid","queue","displayName"}...], "batch", "users"}.
 */
class InteropDispatch extends Command
{
    /** The kinds this command knows, for the help text and for error messages. */
    const KINDS = [
        'plain', 'delayed', 'flaky', 'failing', 'retry-until', 'releasing', 'slow', 'unique',
        'unique-via', 'unique-until-processing', 'encrypted', 'model', 'chain', 'batch', 'listener', 'notification',
        'mail', 'closure', 'raw', 'noop', 'typed', 'guarded',
    ];

    protected $signature = 'interop:dispatch {kind : one of plain, delayed, flaky, failing, retry-until, releasing, slow, unique, unique-until-processing, encrypted, model, chain, batch, listener, notification, mail, closure, raw, noop, typed, guarded}
        {--count=1 : how many jobs (chain links, batch members)}
        {--queue= : the queue to push onto}
        {--delay= : seconds to delay the jobs}
        {--fail=0 : flaky/retry-until: attempts that throw; chain/batch: the 1-based step that throws}
        {--tries=3 : flaky: $tries}
        {--backoff=0 : flaky: $backoff (comma-separated for several)}
        {--max-exceptions= : flaky: $maxExceptions}
        {--timeout=60 : flaky and slow: $timeout}
        {--seconds=2 : slow: how long it sleeps; retry-until: the deadline}
        {--key=unique : unique: the unique id}
        {--allow-failures : batch: allow failures}
        {--middleware= : guarded: overlap, throttle or rate-limited, with :shared, :dont-release, :by-job or :redis}
        {--release-after=0 : guarded overlap: releaseAfter}
        {--expire-after=0 : guarded overlap: expireAfter}
        {--max-attempts=2 : guarded throttle: maxAttempts}
        {--decay=1 : guarded throttle: decayMinutes}
        {--retry-after=0 : guarded throttle: backoff minutes}
        {--wait-for= : guarded: a cache key the job waits for before it runs}';

    protected $description = 'Dispatch interop test jobs of one kind and print the queued rows as JSON';

    /** @var array<int, int|string> ids of the rows queued during this command */
    private $queued = [];

    /** @var array<int|string, array> what each queued row's payload said, by row id */
    private $pushed = [];

    /** @var array|null the payload created last, pushed next */
    private $lastPayload;

    public function handle()
    {
        // A worker that runs while this command does may have taken a row (and deleted it) before
        // the rows are read back: keep what each payload said when it was pushed.
        BaseQueue::createPayloadUsing(function ($connection, $queue, array $payload) {
            $this->lastPayload = [
                'uuid' => $payload['uuid'] ?? null,
                'queue' => $queue,
                'displayName' => $payload['displayName'] ?? null,
            ];

            return [];
        });
        Event::listen(JobQueued::class, function (JobQueued $event) {
            $this->queued[] = $event->id;
            $this->pushed[$event->id] = $this->lastPayload;
        });

        $kind = $this->argument('kind');
        $count = max(1, (int) $this->option('count'));
        $out = ['jobs' => [], 'batch' => null, 'users' => []];

        switch ($kind) {
            case 'chain':
                $links = [];
                for ($i = 1; $i <= $count; $i++) {
                    $links[] = new Jobs\ChainLink($i, $i === (int) $this->option('fail'));
                }
                $chain = Bus::chain($links)->catch(static function (Throwable $e) {
                    InteropLog::write('chain.catch', null, ['message' => $e->getMessage()]);
                });
                if ($this->option('queue') !== null) {
                    $chain->onQueue($this->option('queue'));
                }
                if ($this->option('delay')) {
                    $chain->delay((int) $this->option('delay'));
                }
                $chain->dispatch();
                break;

            case 'batch':
                $members = [];
                for ($i = 1; $i <= $count; $i++) {
                    $members[] = new Jobs\BatchMember($i, $i === (int) $this->option('fail'));
                }
                $pending = Bus::batch($members)->name('interop')
                    ->then(static function (Batch $batch) {
                        InteropLog::write('batch.then', null, ['batch' => $batch->id]);
                    })
                    ->catch(static function (Batch $batch, Throwable $e) {
                        InteropLog::write('batch.catch', null, ['batch' => $batch->id, 'message' => $e->getMessage()]);
                    })
                    ->finally(static function (Batch $batch) {
                        InteropLog::write('batch.finally', null, ['batch' => $batch->id]);
                    });
                if ($this->option('allow-failures')) {
                    $pending->allowFailures();
                }
                if ($this->option('queue') !== null) {
                    $pending->onQueue($this->option('queue'));
                }
                $before = DB::table($this->jobsTable())->max('id') ?? 0;
                $out['batch'] = $pending->dispatch()->id;
                // Batches are pushed with Queue::bulk, which fires no JobQueued events: find the
                // members by the batch id inside their serialized commands.
                $this->queued = DB::table($this->jobsTable())->where('id', '>', $before)
                    ->where('payload', 'like', '%'.$out['batch'].'%')->pluck('id')->all();
                break;

            default:
                for ($i = 1; $i <= $count; $i++) {
                    $this->dispatchOne($kind, $i, $out);
                }
        }

        $out['jobs'] = $this->rows();
        $this->line(json_encode($out, JSON_UNESCAPED_SLASHES));

        return 0;
    }

    private function dispatchOne(string $kind, int $i, array &$out)
    {
        $queue = $this->option('queue');
        $delay = $this->option('delay') !== null ? (int) $this->option('delay') : null;

        switch ($kind) {
            case 'listener':
                event(new OrderShipped($i));

                return;
            case 'raw':
                $data = ['n' => $i, 'k' => 'v', 'path' => 'a/b'];
                $delay === null
                    ? Queue::push(Jobs\RawHandler::class.'@handle', $data, $queue)
                    : Queue::later($delay, Jobs\RawHandler::class.'@handle', $data, $queue);

                return;
            case 'closure':
                $pending = dispatch(static function () use ($i) {
                    InteropLog::write('Closure', null, ['n' => $i]);
                });
                if ($queue !== null) {
                    $pending->onQueue($queue);
                }
                if ($delay !== null) {
                    $pending->delay($delay);
                }

                return;
            case 'notification':
                $user = $this->user($i, $out);
                $notification = new Shipped('shipped '.$i);
                $notification->onQueue($queue)->delay($delay);
                $user->notify($notification);

                return;
            case 'mail':
                $mail = new ShippedMail($i);
                $mail->onQueue($queue)->delay($delay);
                Mail::to('customer'.$i.'@example.com')->queue($mail);

                return;
        }

        $job = $this->makeJob($kind, $i, $out);
        if ($queue !== null) {
            $job->onQueue($queue);
        }
        if ($delay !== null) {
            $job->delay($delay);
        } elseif ($kind === 'delayed') {
            $job->delay(60);
        }
        dispatch($job);
    }

    private function makeJob(string $kind, int $i, array &$out)
    {
        switch ($kind) {
            case 'plain':
            case 'delayed':
                return new Jobs\Plain($kind.'-'.$i, $i);
            case 'flaky':
                $backoff = (string) $this->option('backoff');
                $backoff = strpos($backoff, ',') !== false ? array_map('intval', explode(',', $backoff)) : (int) $backoff;
                $max = $this->option('max-exceptions');

                return new Jobs\Flaky((int) ($this->option('fail') ?: 1), (int) $this->option('tries'), $backoff,
                    $max === null ? null : (int) $max, (int) $this->option('timeout'));
            case 'failing':
                return new Jobs\Failing('failing '.$i);
            case 'retry-until':
                return new Jobs\RetryUntil((int) $this->option('seconds'), (int) $this->option('fail'));
            case 'releasing':
                return new Jobs\Releasing();
            case 'slow':
                return new Jobs\Slow((float) $this->option('seconds'), (int) $this->option('timeout'));
            case 'unique':
                return new Jobs\Unique($this->option('key'));
            case 'unique-via':
                return new Jobs\UniqueVia($this->option('key'));
            case 'unique-plain':
                return new Jobs\UniquePlain();
            case 'unique-until-processing':
                return new Jobs\UniqueUntilProcessing($this->option('key'));
            case 'encrypted':
                return new Jobs\Secret('secret-'.$i);
            case 'model':
                $user = $this->user($i, $out);
                $other = $this->user($i + 1000, $out);

                return new Jobs\WithModel($user, User::query()->whereKey([$user->id, $other->id])->get());
            case 'noop':
                return new Jobs\Noop($i);
            case 'typed':
                return new Jobs\Typed();
            case 'guarded':
                return $this->guarded($i);
        }

        throw new InvalidArgumentException("unknown kind [$kind]: use one of ".implode(', ', self::KINDS));
    }

    /** A Jobs\Guarded with the --middleware asked for, serialized into its middleware property. */
    private function guarded(int $i)
    {
        $job = new Jobs\Guarded('guarded-'.$i, (float) $this->option('seconds'), (int) $this->option('fail'), (int) $this->option('tries'), $this->option('wait-for') ?: null);
        $spec = explode(':', (string) $this->option('middleware'));
        switch ($spec[0]) {
            case 'overlap':
                $m = (new WithoutOverlapping($this->option('key')))
                    ->releaseAfter((int) $this->option('release-after'))
                    ->expireAfter((int) $this->option('expire-after'));
                if (in_array('dont-release', $spec, true)) {
                    $m->dontRelease();
                }
                if (in_array('shared', $spec, true) && method_exists($m, 'shared')) {
                    $m->shared();
                }
                break;
            case 'throttle':
                $class = in_array('redis', $spec, true) ? ThrottlesExceptionsWithRedis::class : ThrottlesExceptions::class;
                $m = (new $class((int) $this->option('max-attempts'), (int) $this->option('decay')))
                    ->backoff((int) $this->option('retry-after'));
                if (in_array('by-job', $spec, true)) {
                    $m->byJob();
                }
                break;
            case 'rate-limited':
                $m = in_array('redis', $spec, true) ? new RateLimitedWithRedis('interop') : new RateLimited('interop');
                if (in_array('dont-release', $spec, true)) {
                    $m->dontRelease();
                }
                break;
            default:
                throw new InvalidArgumentException('guarded needs --middleware=overlap, throttle or rate-limited');
        }

        return $job->through([$m]);
    }

    private function user(int $i, array &$out)
    {
        $user = User::query()->create(['name' => 'user '.$i, 'email' => uniqid('u'.$i.'-', true).'@example.com']);
        $out['users'][] = $user->id;

        return $user;
    }

    private function jobsTable()
    {
        return config('queue.connections.'.config('queue.default').'.table', 'jobs');
    }

    /** The rows queued during this command, read back from the jobs table. */
    private function rows()
    {
        if (! $this->queued) {
            return [];
        }
        $rows = DB::table($this->jobsTable())->whereIn('id', $this->queued)->get()->keyBy('id');
        $out = [];
        foreach ($this->queued as $id) {
            $row = $rows[$id] ?? null;
            if ($row === null) {
                // Run and deleted already by a worker: what its payload said when pushed.
                $pushed = $this->pushed[$id] ?? [];
                $out[(int) $id] = [
                    'id' => (int) $id,
                    'uuid' => $pushed['uuid'] ?? null,
                    'queue' => $pushed['queue'] ?? config('queue.connections.'.config('queue.default').'.queue', 'default'),
                    'displayName' => $pushed['displayName'] ?? null,
                    'availableAt' => 0,
                ];
                continue;
            }
            $payload = json_decode($row->payload, true);
            $out[(int) $id] = [
                'id' => (int) $row->id,
                'uuid' => $payload['uuid'] ?? null,
                'queue' => $row->queue,
                'displayName' => $payload['displayName'] ?? null,
                'availableAt' => (int) $row->available_at,
            ];
        }
        ksort($out);

        return array_values($out);
    }
}
