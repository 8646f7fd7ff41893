<?php
// The line Laravel's exception handler logs for an exception, through Monolog's LineFormatter set up as
// Laravel's LogManager sets it up; the exception chain (outermost first) comes as JSON in argv[1],
// its file, line and trace set by reflection. Used by cli's TestMonologLine.
require '/usr/share/php/Monolog/autoload.php';
use Monolog\Formatter\LineFormatter;
// argv: json of {env, date, chain: [{class, message, file, line, trace:[{file,line,function}]}]} outermost first
$in = json_decode($argv[1], true);
$prev = null;
foreach (array_reverse($in['chain']) as $t) {
    $cls = $t['class'];
    if (! class_exists($cls)) { // a class of the framework's, declared here under its name
        $ns = substr($cls, 0, (int) strrpos($cls, '\\'));
        eval(($ns !== '' ? "namespace $ns; " : '').'class '.substr($cls, strrpos($cls, '\\') === false ? 0 : strrpos($cls, '\\') + 1).' extends \\RuntimeException {}');
    }
    $e = new $cls($t['message'], 0, $prev);
    foreach (['file' => $t['file'], 'line' => $t['line']] as $k => $v) {
        $r = new ReflectionProperty(Exception::class, $k); $r->setAccessible(true); $r->setValue($e, $v);
    }
    $r = new ReflectionProperty(Exception::class, 'trace'); $r->setAccessible(true);
    $r->setValue($e, array_map(fn ($f) => ['file' => $f['file'], 'line' => $f['line'], 'function' => $f['function']], $t['trace']));
    $prev = $e;
}
$f = new LineFormatter(null, 'Y-m-d H:i:s', true, true);
$f->includeStacktraces();
$record = ['message' => $prev->getMessage(), 'context' => ['exception' => $prev], 'level' => 400, 'level_name' => 'ERROR',
  'channel' => $in['env'], 'datetime' => new DateTimeImmutable($in['date']), 'extra' => []];
echo $f->format($record);
