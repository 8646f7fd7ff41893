<?php

use Illuminate\Database\Migrations\Migration;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Facades\Schema;

/**
 * interop_log: one row per job run (by PHP or by the Go worker), with what the runner saw.
 */
class CreateInteropLogTable extends Migration
{
    public function up()
    {
        Schema::create('interop_log', function (Blueprint $table) {
            $table->id();
            $table->string('class');
            $table->string('uuid')->nullable();
            $table->string('job_id')->nullable();
            $table->integer('attempts')->default(0);
            $table->string('queue')->nullable();
            $table->string('runner', 16);
            $table->longText('props');
            $table->bigInteger('logged_at');
            $table->index('uuid');
        });
    }

    public function down()
    {
        Schema::dropIfExists('interop_log');
    }
}
