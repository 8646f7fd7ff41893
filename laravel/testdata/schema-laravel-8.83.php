<?php
// Prints the DDL Laravel 8.83 (Debian php-laravel-framework) generates for the queue and cache
// migrations, as testdata/schema-laravel-8.83.tsv: php schema-laravel-8.83.php > schema-laravel-8.83.tsv
require '/usr/share/php/Illuminate/Support/autoload.php';
foreach (['Database','Container','Events'] as $p) { @include_once "/usr/share/php/Illuminate/$p/autoload.php"; }
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Database\Schema\Grammars\MySqlGrammar;
use Illuminate\Database\Schema\Grammars\PostgresGrammar;
use Illuminate\Database\Schema\Grammars\SQLiteGrammar;
use Illuminate\Database\MySqlConnection;
use Illuminate\Database\PostgresConnection;
use Illuminate\Database\SQLiteConnection;
$conns = [
 'mysql' => [new MySqlConnection(fn() => null, 'db', '', ['charset'=>'utf8mb4','collation'=>'utf8mb4_unicode_ci']), new MySqlGrammar],
 'pgsql' => [new PostgresConnection(fn() => null, 'db', ''), new PostgresGrammar],
 'sqlite' => [new SQLiteConnection(fn() => null, 'db', ''), new SQLiteGrammar],
];
$defs = [
 'jobs' => function ($table) { $table->bigIncrements('id'); $table->string('queue')->index(); $table->longText('payload'); $table->unsignedTinyInteger('attempts'); $table->unsignedInteger('reserved_at')->nullable(); $table->unsignedInteger('available_at'); $table->unsignedInteger('created_at'); },
 'failed_jobs' => function ($table) { $table->id(); $table->string('uuid')->unique(); $table->text('connection'); $table->text('queue'); $table->longText('payload'); $table->longText('exception'); $table->timestamp('failed_at')->useCurrent(); },
 'job_batches' => function ($table) { $table->string('id')->primary(); $table->string('name'); $table->integer('total_jobs'); $table->integer('pending_jobs'); $table->integer('failed_jobs'); $table->text('failed_job_ids'); $table->mediumText('options')->nullable(); $table->integer('cancelled_at')->nullable(); $table->integer('created_at'); $table->integer('finished_at')->nullable(); },
 'cache' => function ($table) { $table->string('key')->primary(); $table->mediumText('value'); $table->integer('expiration'); },
 'cache_locks' => function ($table) { $table->string('key')->primary(); $table->string('owner'); $table->integer('expiration'); },
];
$defs['jobs_legacy'] = function ($table) { $table->bigIncrements('id'); $table->string('queue'); $table->longText('payload'); $table->unsignedTinyInteger('attempts'); $table->unsignedInteger('reserved_at')->nullable(); $table->unsignedInteger('available_at'); $table->unsignedInteger('created_at'); $table->index(['queue', 'reserved_at']); };
$defs['failed_jobs_legacy'] = function ($table) { $table->bigIncrements('id'); $table->text('connection'); $table->text('queue'); $table->longText('payload'); $table->longText('exception'); $table->timestamp('failed_at')->useCurrent(); };
foreach ($conns as $name => [$conn, $grammar]) {
  $conn->useDefaultSchemaGrammar();
  foreach ($defs as $t => $fn) {
    $bp = new Blueprint(str_replace("_legacy", "", $t)); $bp->create(); $fn($bp);

    foreach ($bp->toSql($conn, $conn->getSchemaGrammar()) as $sql) echo "$name\t$t\t$sql\n";
  }
}
