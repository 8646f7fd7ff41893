<?php
// Writes floats.txt: one float per line as its IEEE-754 bits in big-endian hex and PHP's serialize() of it, for the
// float-format test. Run: php make-floats.php
mt_srand(42);
$vals = [0.0, -0.0, 0.1, 9.75, 1e25, 1e15, 1e16, 1e17, 1e-4, 1e-5, 0.00012, 123456789012345678.0, 5e-324, PHP_FLOAT_MAX, PHP_FLOAT_MIN, 2.5, -1.5e300, 1/3, 100.0, 1e21, 0.30000000000000004];
for ($e = -30; $e <= 30; $e++) { $vals[] = 10.0 ** $e; $vals[] = 1.5 * 10.0 ** $e; $vals[] = -7.25 * 10.0 ** $e; }
for ($i = 0; $i < 3000; $i++) {
    $bits = pack('J', (mt_rand(0, 0x7fffffff) << 33) ^ (mt_rand(0, 0x7fffffff) << 2) ^ mt_rand(0, 3));
    $f = unpack('E', $bits)[1];
    if (is_nan($f) || is_infinite($f)) continue;
    $vals[] = $f;
    $vals[] = round(mt_rand() / 1000, mt_rand(0, 6));
}
$out = '';
foreach ($vals as $f) { $out .= bin2hex(pack('E', $f)) . ' ' . serialize($f) . "\n"; }
file_put_contents(__DIR__.'/floats.txt', $out);
