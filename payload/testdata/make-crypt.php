<?php
// Writes crypt.txt with Laravel's own Encrypter (Debian's php-laravel-framework, 8.83): one line per
// cipher: "CIPHER KEY CIPHERTEXT", where the plaintext is serialize("O:8:\"App\\Ping\":1:{...}") as the
// queue writes it for ShouldBeEncrypted jobs. Run: php make-crypt.php
require '/usr/share/php/Illuminate/Encryption/autoload.php';

use Illuminate\Encryption\Encrypter;

$command = 'O:8:"App\Ping":1:{s:1:"n";i:1;}';
$out = '';
foreach (['AES-128-CBC' => 16, 'AES-256-CBC' => 32, 'AES-128-GCM' => 16, 'AES-256-GCM' => 32] as $cipher => $len) {
    $key = str_repeat(chr(0x41 + $len), $len);
    $e = new Encrypter($key, $cipher);
    $out .= $cipher.' base64:'.base64_encode($key).' '.$e->encrypt($command)."\n";
}
file_put_contents(__DIR__.'/crypt.txt', $out);
