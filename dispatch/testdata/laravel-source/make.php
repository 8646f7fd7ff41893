<?php
// Writes, for one Laravel release, the payloads its own Queue::createPayload and its Queueable,
// InteractsWithQueue and SerializesModels traits make for the jobs below, one JSON line per case.
// The release's src/ comes from a checkout of laravel/framework; the classes it needs beyond the queue
// and the bus (the container, Str, Carbon) are Laravel 8.83's from Debian's php-laravel-framework.
// Run through make.sh.
namespace {
    $src = $argv[1];
    require '/usr/share/php/Illuminate/Support/autoload.php';
    require '/usr/share/php/Illuminate/Cache/autoload.php'; // the array store that records a unique lock's key
    // The release's queue, bus and their contracts win over 8.83's: this autoloader goes first.
    spl_autoload_register(function ($class) use ($src) {
        foreach (['Illuminate\\Queue\\', 'Illuminate\\Bus\\', 'Illuminate\\Contracts\\Queue\\', 'Illuminate\\Contracts\\Bus\\', 'Illuminate\\Support\\Reflector'] as $ns) {
            if (str_starts_with($class, $ns)) {
                $f = $src.'/Illuminate/'.str_replace('\\', '/', substr($class, strlen('Illuminate\\'))).'.php';
                foreach ([$f, str_replace('/Support/', '/Reflection/', $f)] as $f) { // Reflector moved in 13.x
                    if (is_file($f)) {
                        require $f;

                        return;
                    }
                }
            }
        }
    }, true, true);
    // Classes 8.83 does not have at all come from the release too.
    spl_autoload_register(function ($class) use ($src) {
        $f = $src.'/'.str_replace('\\', '/', $class).'.php';
        if (str_starts_with($class, 'Illuminate\\') && is_file($f)) {
            require $f;
        }
    });
    foreach (['Support', 'Collections'] as $p) {
        if (is_file("$src/Illuminate/$p/functions.php")) {
            require "$src/Illuminate/$p/functions.php";
        }
    }
}

namespace App\Jobs {
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;

    // The make:job stub's traits (Dispatchable adds no property); every property is given in the
    // constructor, none is at its default.
    class SendInvoice implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels; // the make:job stub's order

        public $invoiceId;
        public $note;
        public $tries;

        public function __construct($id)
        {
            $this->invoiceId = $id;
            $this->note = 'ünï/€';
            $this->tries = 3;
        }
    }

    class Flaky implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels; // the make:job stub's order

        public $invoiceId;
        public $backoff;
        public $timeout;
        public $maxExceptions;
        public $failOnTimeout;
        public $deleteWhenMissingModels;

        public function __construct($id)
        {
            $this->invoiceId = $id;
            $this->backoff = [1, 5, 10];
            $this->timeout = 120;
            $this->maxExceptions = 2;
            $this->failOnTimeout = true;
            $this->deleteWhenMissingModels = true;
        }
    }
}

namespace App\Jobs {
    // Properties createPayload reads as they are: limits written as a string or a float, dates (a
    // retryUntil, timeoutAt before 8.0, and a backoff entry) as timestamps or the seconds until them.
    class Loose implements \Illuminate\Contracts\Queue\ShouldQueue
    {
        use \Illuminate\Queue\InteractsWithQueue, \Illuminate\Bus\Queueable, \Illuminate\Queue\SerializesModels;

        public $tries;
        public $timeout;
        public $maxExceptions;
        public $failOnTimeout;
        public $backoff;
        public $retryUntil;
        public $timeoutAt;
        public $retryAfter;

        public function __construct()
        {
            $this->tries = '3';
            $this->timeout = 1.5;
            $this->maxExceptions = '2';
            $this->failOnTimeout = 1;
            $this->backoff = [1, '2', 3.5, \Carbon\Carbon::createFromTimestamp(1763700060)];
            $this->retryUntil = $this->timeoutAt = \Carbon\Carbon::createFromTimestamp(1763703600);
            $this->retryAfter = '30';
        }
    }
}

namespace App\Jobs {
    // A unique job whose displayName() is not its class name, for the lock key (12.41+ uses the name).
    class Named implements \Illuminate\Contracts\Queue\ShouldQueue
    {
        use \Illuminate\Queue\InteractsWithQueue, \Illuminate\Bus\Queueable, \Illuminate\Queue\SerializesModels;

        public $uniqueId = 42;

        public function displayName()
        {
            return 'Invoices for 42';
        }
    }
}

namespace {
    // The key UniqueLock::acquire takes the job's lock under, read from an array store's locks.
    function uniqueKey($job)
    {
        $store = new \Illuminate\Cache\ArrayStore;
        (new \Illuminate\Bus\UniqueLock(new \Illuminate\Cache\Repository($store)))->acquire($job);

        return array_keys($store->locks)[0];
    }

    // Queueable::dispatchNextJobInChain hands the next link to dispatch(): kept here to be pushed.
    function dispatch($job)
    {
        $GLOBALS['dispatched'] = $job;
    }

    class FixtureQueue extends \Illuminate\Queue\Queue
    {
        public function payload($job, $queue, $delay = null)
        {
            return $this->createPayload($job, $queue, '', $delay);
        }
    }

    \Illuminate\Support\Str::createUuidsUsing(fn () => \Ramsey\Uuid\Uuid::fromString('9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d'));
    \Carbon\Carbon::setTestNow(\Carbon\Carbon::createFromTimestamp(1763700000));
    $q = new FixtureQueue;
    $q->setContainer(new \Illuminate\Container\Container);
    $cases = [
        'plain' => fn () => $q->payload(new App\Jobs\SendInvoice(7), 'default'),
        'queued' => fn () => $q->payload((new App\Jobs\SendInvoice(8))->onQueue('emails')->delay(90), 'emails', 90),
        'connection' => fn () => $q->payload((new App\Jobs\SendInvoice(9))->onConnection('other'), 'default'),
        'options' => fn () => $q->payload(new App\Jobs\Flaky(10), 'default'),
        // Delayed by a date, as ->delay(now()->addMinutes(5)) delays it.
        'loose' => function () use ($q) {
            $at = \Carbon\Carbon::createFromTimestamp(1763700300);

            return $q->payload((new App\Jobs\Loose)->delay($at), 'default', $at);
        },
        // A chain of two on chainq: the head as Bus::chain dispatches it, and its next link as the
        // head's dispatchNextJobInChain hands it to dispatch() after the head ran.
        'chain-head' => fn () => $q->payload($GLOBALS['head'], 'chainq'),
        'chain-next' => function () use ($q) {
            $head = unserialize(serialize($GLOBALS['head']));
            $head->dispatchNextJobInChain();
            $next = $GLOBALS['dispatched'];

            return $q->payload($next, $next->queue ?? 'default');
        },
    ];
    if (method_exists(App\Jobs\SendInvoice::class, 'chain')) { // chains came in 5.5
        $GLOBALS['head'] = (new App\Jobs\SendInvoice(11))->onQueue('chainq')->chain([new App\Jobs\SendInvoice(12)]);
        $GLOBALS['head']->chainQueue = 'chainq';
    } else {
        unset($cases['chain-head'], $cases['chain-next']);
    }
    foreach ($cases as $name => $make) {
        echo json_encode(['case' => $name, 'payload' => $make()], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
    }
    // ShouldBeUnique lock keys (without the cache prefix): the class and its uniqueId, or from 12.41
    // the displayName() the class defines (hashed from 12.54).
    if (! is_file("$src/Illuminate/Bus/UniqueLock.php")) { // before it, 8.83's would stand in
        exit;
    }
    $plain = new App\Jobs\SendInvoice(7);
    $plain->uniqueId = 42;
    foreach (['unique-plain' => $plain, 'unique-named' => new App\Jobs\Named] as $name => $job) {
        echo json_encode(['case' => $name, 'key' => uniqueKey($job)], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
    }
}
