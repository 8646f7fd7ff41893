<?php

namespace App\Support;

use DateTimeInterface;
use Illuminate\Contracts\Queue\Job;
use Illuminate\Database\Eloquent\Collection as EloquentCollection;
use Illuminate\Database\Eloquent\Model;
use Illuminate\Support\Facades\DB;
use ReflectionObject;
use UnitEnum;

/**
 * Writes what PHP saw while running a job into the interop_log table, so that tests can compare it
 * with what was dispatched (and with what the Go worker saw for the same job).
 */
class InteropLog
{
    /** @var \Illuminate\Contracts\Queue\Job|null the job being processed by this worker */
    public static $current;

    /**
     * Record a job object: its class, its queue job, and every declared property (public,
     * protected and private) with its value as PHP sees it after unserializing.
     */
    public static function job(object $command, ?Job $job = null, array $extra = [])
    {
        $props = [];
        $ref = new ReflectionObject($command);
        foreach ($ref->getProperties() as $prop) {
            if ($prop->isStatic() || $prop->getName() === 'job') {
                continue;
            }
            $prop->setAccessible(true);
            if (! $prop->isInitialized($command)) {
                continue;
            }
            $props[$prop->getName()] = static::normalize($prop->getValue($command));
        }

        static::write(get_class($command), $job ?? static::$current, $props + $extra);
    }

    /**
     * Record an event that is not a job object itself: a raw job, a batch callback, a closure.
     */
    public static function write(string $class, ?Job $job, array $props = [])
    {
        $job = $job ?? static::$current;

        DB::table('interop_log')->insert([
            'class' => $class,
            'uuid' => $job ? $job->uuid() : null,
            'job_id' => $job ? (string) $job->getJobId() : null,
            'attempts' => $job ? $job->attempts() : 0,
            'queue' => $job ? $job->getQueue() : null,
            'runner' => 'php',
            'props' => json_encode(static::normalize($props), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION),
            'logged_at' => (int) round(microtime(true) * 1000000),
        ]);
    }

    /**
     * Turn a PHP value into something json_encode keeps: models become their class and key,
     * dates ISO-8601 strings with microseconds, enums Class:Case, closures the string "Closure", other objects
     * their class and public properties.
     */
    public static function normalize($value)
    {
        if (is_array($value)) {
            return array_map([static::class, 'normalize'], $value);
        }
        if (! is_object($value)) {
            return is_float($value) && ! is_finite($value) ? (string) $value : $value;
        }
        if ($value instanceof Model) {
            return ['@model' => get_class($value), 'key' => $value->getKey(), 'attributes' => $value->attributesToArray()];
        }
        if ($value instanceof EloquentCollection) {
            return ['@collection' => get_class($value), 'keys' => $value->modelKeys()];
        }
        if ($value instanceof DateTimeInterface) {
            return $value->format('Y-m-d\\TH:i:s.uP');
        }
        if (interface_exists(UnitEnum::class) && $value instanceof UnitEnum) {
            return get_class($value).':'.$value->name;
        }
        if ($value instanceof \Closure) {
            return 'Closure';
        }

        return ['@object' => get_class($value)] + array_map([static::class, 'normalize'], get_object_vars($value));
    }
}
