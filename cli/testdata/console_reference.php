<?php
// What PHP's queue:work builds its lines from, for cli's console tests. argv[1] is JSON:
// {"ms": [run times in milliseconds], "tags": [Symfony Console markup]}. Prints JSON:
// {"number_format": [number_format($ms, 2).'ms' ...], "whole_ms": [number_format($ms).'ms' ...], "for_humans": [CarbonInterval::milliseconds($ms)
// ->cascade()->forHumans(short: true) ...], "decorated": [each markup rendered with colours]}.
require '/usr/share/php/Carbon/autoload.php';
require '/usr/share/php/Symfony/Component/Console/autoload.php';
use Carbon\CarbonInterval;
use Symfony\Component\Console\Formatter\OutputFormatter;
$in = json_decode($argv[1], true);
$out = ['number_format' => [], 'whole_ms' => [], 'for_humans' => [], 'decorated' => []];
foreach ($in['ms'] as $ms) {
    $out['number_format'][] = number_format($ms, 2).'ms';
    $out['whole_ms'][] = number_format($ms).'ms';
    $out['for_humans'][] = CarbonInterval::milliseconds($ms)->cascade()->forHumans(short: true);
}
$f = new OutputFormatter(true);
foreach ($in['tags'] as $tag) {
    $out['decorated'][] = $f->format($tag);
}
echo json_encode($out);
