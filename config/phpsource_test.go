package config

import (
	"math"
	"reflect"
	"testing"
)

// TestReadPHPConfigSource reads the values of a config file written as Laravel's skeletons write
// them: strings, numbers, booleans, null, nested arrays of both syntaxes, env() with a default and a
// cast, arithmetic and concatenation on them, Str::slug, and leaves what it does not evaluate (other
// calls, constants, method chains) unknown without losing the entries after it.
func TestReadPHPConfigSource(t *testing.T) {
	t.Parallel()
	src := `<?php

use Illuminate\Support\Str;

return [
    /*
    | A comment with 'quotes' => and [brackets].
    */
    'default' => env('QUEUE_CONNECTION', 'sync'), // a comment
    # another comment
    'connections' => [
        'database' => [
            'driver' => 'database',
            'table' => env('DB_QUEUE_TABLE', 'jobs'),
            'queue' => 'default',
            'retry_after' => (int) env('DB_QUEUE_RETRY_AFTER', 90),
            'after_commit' => false,
        ],
        'redis' => array('driver' => "redis", 'block_for' => null, 'url' => 'http://a/b'),
        'mysql' => [
            'options' => extension_loaded('pdo_mysql') ? array_filter([
                PDO::MYSQL_ATTR_SSL_CA => env('MYSQL_ATTR_SSL_CA'),
            ]) : [],
            'prefix' => Str::slug(env('APP_NAME', 'laravel'), '_').'_cache',
            'providers' => ServiceProvider::defaultProviders()->merge([App\Providers\A::class])->toArray(),
            'strict' => true,
        ],
    ],
    'list' => ['a', 'b', 7 => 'c', 'd'],
    'ratio' => 0.5,
    'five_minutes' => 60 * 5,
    'sum' => 1 + 2 * 3 - 4 / 2,
    'half' => 3 / 2,
    'env_times' => env('X', 1) * 60,
    'octal' => 0454, 'hex' => 0x12C, 'bin' => 0b100101100, 'exp' => 3e2, 'sep' => 3_00,
    'grouped' => (60 * 5), 'negated' => -(-300), 'pow' => 2 ** 8 + 44, 'mod' => 1300 % 1000,
    'joined' => 'my_' . 'jobs' . 2, 'fcast' => (float) '300',
    'arrow' => fn ($x): int => $x * 2, 'after_arrow' => 'kept',
    'closure' => function () { return ['x' => 1]; }, 'after_closure' => 'kept too',
    'nowdoc' => <<<'EOT'
        my_jobs ] }
        EOT,
    'heredoc' => <<<EOT
    plain
    EOT . '!',
    'interpolated' => <<<EOT
    a $b
    EOT,
    'attributed' => #[\JetBrains\PhpStorm\Pure(['a' => ']'])] fn () => 1, 'after_attribute' => 'kept',
    'spread' => [...$base, 'table' => 'x'],
    'constant_key' => [PDO::X => 1, 'table' => 'y'],
    'escaped' => 'it\'s',
    'hyphens' => Str::slug((string) env('APP_NAME', 'laravel')).'-cache-',
    'qualified' => \Illuminate\Support\Str::slug('Été @ Home', '_'),
    'greek' => Str::slug('Αθήνα'),
    'precedence' => 'v' . 1 + 2, 'floats' => 7.0 . '_' . 0.1 + 0.2, 'big' => 1e20 . 'x', 'neg_zero' => 'x' . -0.0,
    'overflow' => -9223372036854775807 - 10, 'pow_overflow' => 2 ** 62 * 4, 'nulls' => null . 'a' . true . false,
    'underscored' => 'x' . '1_000' + 1, 'saturated' => (int) '99999999999999999999',
    'string_casts' => (string) true . '|' . (string) null . '|' . (string) 1.5 . '|' . (string) false,
    'sqlite' => env('DB_DATABASE', database_path('database.sqlite')), 'files' => storage_path('framework/cache/data'), 'base' => base_path(),
    'tern_true' => env('X') ? 'yes' : function () { return [1]; }, 'tern_false' => env('NOPE') ? [f() => 1] : ['a' => 'b'],
    'elvis' => env('NOPE') ?: 'fallback', 'elvis_set' => env('X') ?: g(), 'coalesce' => env('NOPE') ?? 'dflt', 'coalesce_set' => env('X') ?? g(),
    'tern_unknown' => f() ? 1 : 2, 'tern_zero' => '0' ? 'a' : 'b',
    'merged' => array_merge(['a' => 1, 'b' => 2, 5 => 'x'], env('NOPE') ? ['c' => array_map(fn ($n) => $n, explode(':', 'a:b'))] : ['b' => 3, 9 => 'y']),
    'merge_unknown' => array_merge(['a' => 1], f(), ['b' => 2]), 'after_merge' => 'kept',
];
`
	env := map[string]string{"DB_QUEUE_RETRY_AFTER": "300.7", "QUEUE_CONNECTION": "database", "APP_NAME": "My App", "X": "2"}
	a := readPHPConfigSource(src, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "/app")
	if a == nil {
		t.Fatal("no array")
	}
	for _, path := range [][]string{{"spread", "table"}, {"constant_key", "table"}} {
		if _, _, unknown := sourceGet(a, path...); !unknown {
			t.Errorf("%v: not unknown, though its array has entries of keys not known", path)
		}
	}
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"default"}, "database"},
		{[]string{"connections", "database", "table"}, "jobs"},
		{[]string{"connections", "database", "retry_after"}, int64(300)},
		{[]string{"connections", "database", "after_commit"}, false},
		{[]string{"connections", "redis", "driver"}, "redis"},
		{[]string{"connections", "redis", "block_for"}, nil},
		{[]string{"connections", "redis", "url"}, "http://a/b"},
		{[]string{"connections", "mysql", "options"}, phpUnknown{}},
		{[]string{"connections", "mysql", "prefix"}, "my_app_cache"},
		{[]string{"connections", "mysql", "providers"}, phpUnknown{}},
		{[]string{"connections", "mysql", "strict"}, true},
		{[]string{"list", "1"}, "b"},
		{[]string{"list", "7"}, "c"},
		{[]string{"list", "8"}, "d"},
		{[]string{"ratio"}, 0.5},
		{[]string{"five_minutes"}, int64(300)},
		{[]string{"sum"}, int64(5)},
		{[]string{"half"}, 1.5},
		{[]string{"env_times"}, int64(120)},
		{[]string{"octal"}, int64(300)}, {[]string{"hex"}, int64(300)}, {[]string{"bin"}, int64(300)},
		{[]string{"exp"}, 300.0}, {[]string{"sep"}, int64(300)}, {[]string{"grouped"}, int64(300)},
		{[]string{"negated"}, int64(300)}, {[]string{"pow"}, int64(300)}, {[]string{"mod"}, int64(300)},
		{[]string{"joined"}, "my_jobs2"}, {[]string{"fcast"}, 300.0},
		{[]string{"arrow"}, phpUnknown{}}, {[]string{"after_arrow"}, "kept"},
		{[]string{"closure"}, phpUnknown{}}, {[]string{"after_closure"}, "kept too"},
		{[]string{"nowdoc"}, "my_jobs ] }"}, {[]string{"heredoc"}, "plain!"}, {[]string{"interpolated"}, phpUnknown{}},
		{[]string{"attributed"}, phpUnknown{}}, {[]string{"after_attribute"}, "kept"},
		{[]string{"escaped"}, "it's"},
		{[]string{"hyphens"}, "my-app-cache-"}, {[]string{"qualified"}, "ete_at_home"}, {[]string{"greek"}, phpUnknown{}},
		{[]string{"precedence"}, "v3"}, {[]string{"floats"}, "7_0.3"}, {[]string{"big"}, "1.0E+20x"}, {[]string{"neg_zero"}, "x-0"},
		{[]string{"overflow"}, -9223372036854775817.0}, {[]string{"pow_overflow"}, 18446744073709551616.0}, {[]string{"nulls"}, "a1"},
		{[]string{"string_casts"}, "1||1.5|"}, {[]string{"underscored"}, phpUnknown{}}, {[]string{"saturated"}, int64(math.MaxInt64)},
		{[]string{"sqlite"}, "/app/database/database.sqlite"}, {[]string{"files"}, "/app/storage/framework/cache/data"}, {[]string{"base"}, "/app"},
		{[]string{"tern_true"}, "yes"}, {[]string{"tern_false", "a"}, "b"},
		{[]string{"elvis"}, "fallback"}, {[]string{"elvis_set"}, "2"}, {[]string{"coalesce"}, "dflt"}, {[]string{"coalesce_set"}, "2"},
		{[]string{"tern_unknown"}, phpUnknown{}}, {[]string{"tern_zero"}, "b"},
		{[]string{"merged", "a"}, int64(1)}, {[]string{"merged", "b"}, int64(3)}, {[]string{"merged", "0"}, "x"}, {[]string{"merged", "1"}, "y"},
		{[]string{"merge_unknown"}, phpUnknown{}}, {[]string{"after_merge"}, "kept"},
	} {
		if got, ok := a.get(c.path...); !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v = %#v (%v), want %#v", c.path, got, ok, c.want)
		}
	}
}

// FuzzReadPHPConfigSource: any text is read without a panic or an endless loop, and env() is
// evaluated on whatever array comes back.
func FuzzReadPHPConfigSource(f *testing.F) {
	f.Add(`<?php return ['a' => env('X', 60 * 5), 'b' => [1, 2, 'c' => (int) '7'], 'd' => f()->g(), PDO::X => 1];`)
	f.Add(`<?php return array('x' => "y", 'z' => array(null, true, false, 0.5, -1)) ;`)
	f.Add("<?php if (x()) { return ['a' => 1]; } return ['b' => <<<'E'\n  q\n  E, #[A(']')] 'c' => [...$d]];")
	f.Add(`<?php /* ' */ return [ 'a' => 'it\'s', # c
 'b' => "q$x" ] ;`)
	f.Fuzz(func(t *testing.T, src string) {
		readPHPConfigSource(src, func(string) (string, bool) { return "3", true }, "/app")
	})
}

// TestReadPHPConfigSourceReturns: the file's array is the one its top-level return gives; a return
// in a function's body is not it, and one in another block (an if) leaves the file unread, since which
// one PHP runs is not known.
func TestReadPHPConfigSourceReturns(t *testing.T) {
	t.Parallel()
	if a := readPHPConfigSource(`<?php $f = function () { if (true) { return ['a' => 1]; } }; return ['b' => 2];`, nil, ""); a == nil || a.values["b"] != int64(2) {
		t.Errorf("a return in a function's body was taken for the file's: %+v", a)
	}
	if a := readPHPConfigSource(`<?php if (!env('X')) { return ['a' => 1]; } return ['b' => 2];`, nil, ""); a != nil {
		t.Errorf("a file with a return in an if was read: %+v", a)
	}
}

// TestPHPTokensAttribute passes over an attribute whole, brackets and quotes inside it included.
func TestPHPTokensAttribute(t *testing.T) {
	t.Parallel()
	toks := phpTokens(`<?php #[\A\B(['a' => ']'], "x]")] 'k' => 1`)
	if len(toks) != 3 || toks[0] != (phpToken{'s', "k"}) || toks[1].kind != '>' || toks[2] != (phpToken{'n', "1"}) {
		t.Fatalf("tokens %+v, want 'k' => 1", toks)
	}
}
