<?php
// Writes the Laravel 12.54 and 13.x payloads in this directory with PHP's own serialize and
// json_encode. The classes below stand in for the framework's: their properties, defaults and order
// are those of laravel/framework's source at the named tag (Bus/Queueable.php, Queue/InteractsWithQueue.php,
// Queue/Middleware/*.php), and the envelopes follow Queue::createObjectPayload of that tag. A job
// that does not use SerializesModels serializes every property. Run: php make.php

namespace Illuminate\Queue\Middleware {
    // v13.24.0 WithoutOverlapping: key, releaseAfter, expiresAfter, prefix, shareKey.
    class WithoutOverlapping
    {
        public $key;
        public $releaseAfter = 0;
        public $expiresAfter = 0;
        public $prefix = 'laravel-queue-overlap:';
        public $shareKey = false;

        public function __construct($key, $releaseAfter, $expiresAfter, $shareKey)
        {
            [$this->key, $this->releaseAfter, $this->expiresAfter, $this->shareKey] = [$key, $releaseAfter, $expiresAfter, $shareKey];
        }
    }

    // v13.24.0 ThrottlesExceptions: decaySeconds (11.0+), reportCallback (11.3+), deleteWhen/failWhen
    // callbacks (12.14/12.20+), all protected.
    class ThrottlesExceptions
    {
        protected $key;
        protected $byJob = false;
        protected $maxAttempts;
        protected $decaySeconds;
        protected $retryAfterMinutes = 0;
        protected $reportCallback;
        protected $whenCallback;
        protected array $deleteWhenCallbacks = [];
        protected array $failWhenCallbacks = [];
        protected $prefix = 'laravel_throttles_exceptions:';
        protected $limiter;

        public function __construct($maxAttempts, $decaySeconds, $retryAfterMinutes)
        {
            [$this->maxAttempts, $this->decaySeconds, $this->retryAfterMinutes] = [$maxAttempts, $decaySeconds, $retryAfterMinutes];
        }
    }

    // v13.24.0 RateLimited serializes limiterName, releaseAfter and shouldRelease (__sleep).
    class RateLimited
    {
        protected $limiterName;
        protected $releaseAfter;
        public $shouldRelease = true;

        public function __construct($name, $releaseAfter)
        {
            [$this->limiterName, $this->releaseAfter] = [$name, $releaseAfter];
        }

        public function __sleep()
        {
            return ['limiterName', 'releaseAfter', 'shouldRelease'];
        }
    }

    // v13.24.0 Skip (11.23+): whether to skip, decided at dispatch (Skip::when / Skip::unless).
    class Skip
    {
        public function __construct(protected bool $skip = false)
        {
        }
    }

    // v13.24.0 SkipIfBatchCancelled (9.49+): no properties.
    class SkipIfBatchCancelled
    {
    }

    // v13.24.0 Release (13.18.1+): whether to release, decided at dispatch, and the delay.
    class Release
    {
        public function __construct(protected bool $release = false, protected int $releaseAfter = 0)
        {
        }
    }
}

namespace App\Jobs {
    // The public properties of v13.24.0's Queueable and InteractsWithQueue, in their order.
    trait Queueable13
    {
        public $connection;
        public $queue;
        public $messageGroup;
        public $deduplicator;
        public $debounceOwner = '';
        public $uniqueLockOwner = '';
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
        public $chainConnection;
        public $chainQueue;
        public $chainCatchCallbacks;
    }

    // The public properties of v12.54.0's Queueable, in their order.
    trait Queueable12
    {
        public $connection;
        public $queue;
        public $messageGroup;
        public $deduplicator;
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
        public $chainConnection;
        public $chainQueue;
        public $chainCatchCallbacks;
    }

    // A 12.54 unique job whose id is a property, with its own displayName().
    class WeeklyReport
    {
        use Queueable12;

        public $job;
        public $uniqueId;
        public $uniqueFor = 3600;

        public function __construct($id) { $this->uniqueId = $id; }

        public function displayName() { return 'Nightly report'; }
    }

    class NightlyReport
    {
        use Queueable13;

        public $job;
        public $reportId;
        public $uniqueFor = 3600;

        public function __construct($id) { $this->reportId = $id; }

        public function uniqueId() { return $this->reportId; }

        public function displayName() { return 'Nightly report'; }
    }

    class SearchIndex
    {
        use Queueable13;

        public $job;
        public $debounceId;

        public function __construct($id) { $this->debounceId = $id; }
    }

    // v13.24.0's Bus/Batchable.php: batchId, then the private fakeBatch.
    trait Batchable13
    {
        public $batchId;
        private $fakeBatch;
    }

    class ImportRow
    {
        use Batchable13, Queueable13;

        public $job;
        public $row;

        public function __construct($row) { $this->row = $row; }
    }

    class SyncAccount
    {
        use Queueable13;

        public $job;
        public $accountId;

        public function __construct($id) { $this->accountId = $id; }

        public function displayName() { return 'Sync account'; }
    }
}

namespace {
    use App\Jobs\NightlyReport;
    use App\Jobs\SearchIndex;
    use App\Jobs\SyncAccount;
    use App\Jobs\WeeklyReport;
    use App\Jobs\ImportRow;
    use Illuminate\Queue\Middleware\RateLimited;
    use Illuminate\Queue\Middleware\Release;
    use Illuminate\Queue\Middleware\Skip;
    use Illuminate\Queue\Middleware\SkipIfBatchCancelled;
    use Illuminate\Queue\Middleware\ThrottlesExceptions;
    use Illuminate\Queue\Middleware\WithoutOverlapping;

    // The envelope of Queue::createObjectPayload at 12.54/13.x: 13.x adds deleteWhenMissingModels.
    function envelope($job, $uuid, $v13, array $context = null)
    {
        $p = [
            'uuid' => $uuid,
            'displayName' => method_exists($job, 'displayName') ? $job->displayName() : get_class($job),
            'job' => 'Illuminate\Queue\CallQueuedHandler@call',
            'maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null,
            'timeout' => null, 'retryUntil' => null,
        ];
        if ($v13) {
            $p['deleteWhenMissingModels'] = false;
        }
        $p['data'] = ['commandName' => get_class($job), 'command' => serialize(clone $job), 'batchId' => $job->batchId ?? null];
        $p['createdAt'] = 1790000000;
        $p['delay'] = null;
        if ($context !== null) {
            // ContextServiceProvider adds the hidden Context, values serialized, under this key.
            $p['illuminate:log:context'] = ['data' => [], 'hidden' => array_map('serialize', $context)];
        }
        file_put_contents(__DIR__.'/'.$GLOBALS['name'].'.json', json_encode($p, JSON_UNESCAPED_UNICODE));
    }

    // 13.24: a unique job whose lock owner PHP's UniqueLock::acquire stored in the command, and the
    // key and owner in the hidden Context (InteractsWithUniqueJobs).
    $job = new NightlyReport(42);
    $job->uniqueLockOwner = 'Ow9nEr7Tok3nA1b2';
    $key = 'laravel_unique_job:'.hash('xxh128', 'Nightly report').':42';
    $name = '13.24-unique-owner';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e01', true, [
        'laravel_unique_job_cache_store' => null, 'laravel_unique_job_key' => $key,
        'laravel_unique_job_lock_owner' => 'Ow9nEr7Tok3nA1b2',
    ]);

    // 12.54: a unique job with a uniqueId property and without the Context (pushed past
    // PendingDispatch): the key is computed, with the displayName hashed.
    $job = new WeeklyReport('42');
    $name = '12.54-unique-display';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e02', false);

    // 13.6: a debounced job; PendingDispatch::acquireDebounceLock stored the 40-character owner.
    $job = new SearchIndex('posts');
    $job->debounceOwner = 'Deb0unceOwnerTokenAbCdEfGhIjKlMnOpQrStUv';
    $job->delay = 30;
    $name = '13.6-debounce';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e03', true);

    // 13.x middleware: WithoutOverlapping keyed by the hashed displayName, ThrottlesExceptions with
    // decaySeconds, RateLimited with releaseAfter.
    $job = new SyncAccount(9);
    $job->middleware = [new WithoutOverlapping('acct-9', 5, 60, false)];
    $name = '13.24-overlap';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e04', true);

    $job = new SyncAccount(9);
    $job->middleware = [new ThrottlesExceptions(3, 120, 2)];
    $name = '13.24-throttle';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e05', true);

    $job = new SyncAccount(9);
    $job->middleware = [new RateLimited('accounts', 11)];
    $name = '13.24-rate-limited';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e06', true);

    // Skip::when(true) and Skip::unless(true), and a batched job with SkipIfBatchCancelled.
    $job = new SyncAccount(9);
    $job->middleware = [new Skip(true)];
    $name = '13.24-skip';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e07', true);

    $job = new SyncAccount(9);
    $job->middleware = [new Skip(false)];
    $name = '13.24-skip-not';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e08', true);

    // Release::when(true, 15) and Release::unless(true, 15).
    $job = new SyncAccount(9);
    $job->middleware = [new Release(true, 15)];
    $name = '13.24-release';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e10', true);

    $job = new SyncAccount(9);
    $job->middleware = [new Release(false, 15)];
    $name = '13.24-release-not';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e11', true);

    $job = new ImportRow(7);
    $job->batchId = '9f3c2a10-5b7e-4d21-8c4a-2e6f1d0b7a55';
    $job->middleware = [new SkipIfBatchCancelled];
    $name = '13.24-skip-batch-cancelled';
    envelope($job, '3f1f0c1e-8d6a-4c3e-9a51-6b0d2f7c9e09', true);
}
