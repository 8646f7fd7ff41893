<?php
// Writes values.txt: PHP serialize() output of values that exercise every form (one base64 line each),
// for the round-trip test. Run: php make-values.php
namespace App;

error_reporting(E_ALL & ~E_DEPRECATED);

enum Status: string { case Active = 'a'; case Gone = 'g'; }
enum Pure { case One; }
class Base { private $secret = 'base'; protected $prot = 1; public $pub = 2; }
class Child extends Base { private $secret = 'child'; public $self; public $list = []; }
class Legacy implements \Serializable {
    public $x = 5;
    public function serialize() { return 'raw{}"data'; }
    public function unserialize($s) {}
}
class Node { public $next; public $name; }

$c = new Child;
$c->self = $c;
$shared = new Node; $shared->name = 'shared';
$arr = ['a' => $shared, 'b' => $shared, 'c' => [1, 2]];
$x = 1; $refs = [&$x, &$x, 'k' => 3];
$n1 = new Node; $n2 = new Node; $n1->next = $n2; $n2->next = $n1; $n1->name = "ü\x00\"";
$vals = [
    null, true, false, 0, -1, PHP_INT_MAX, PHP_INT_MIN, 1.5, -0.0, INF, -INF, NAN, 1e100, '', "a\"b;\x00\xff",
    [], [1, 2, 3], [5 => 'x', -3 => 'y', 'k' => ['n' => null]],
    Status::Active, Pure::One, [Status::Gone, Status::Gone],
    $c, $arr, $refs, $n1, new \ArrayObject([1, 2]), new Legacy, [new Legacy, 'k' => new Legacy], new \DateTimeImmutable('2024-01-02 03:04:05.5', new \DateTimeZone('+02:00')),
    new \DateTime('2024-07-01 12:00:00', new \DateTimeZone('CEST')), (object) ['1' => 'int-like', 'a' => 1],
];
$out = '';
foreach ($vals as $v) { $out .= base64_encode(serialize($v)) . "\n"; }
file_put_contents(__DIR__.'/values.txt', $out);

