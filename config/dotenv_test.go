package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// dotenvCases are .env contents and what they set with HOME_DIR=/home/app and DB_HOST=from-env in the
// real environment.
var dotenvCases = []struct {
	name    string
	content string
	want    map[string]string
}{
	{"plain", "A=b\nC=d", map[string]string{"A": "b", "C": "d"}},
	{"spaces around", "  A  =  b  ", map[string]string{"A": "b"}},
	{"empty value", "A=\nB= ", map[string]string{"A": "", "B": ""}},
	{"export prefix", "export APP=b\nexport\tCD=d", map[string]string{"APP": "b", "CD": "d"}},
	{"export is a name", "export=x", map[string]string{"export": "x"}},
	{"comment lines and blank lines", "# x=y\n\n   # A=1\nA=2\n", map[string]string{"A": "2"}},
	{"inline comment after space", "A=b # the b", map[string]string{"A": "b"}},
	{"hash ends an unquoted value", "A=b#c", map[string]string{"A": "b"}},
	{"hash inside quotes", `A="b#c"` + "\nB='b # c'", map[string]string{"A": "b#c", "B": "b # c"}},
	{"single quotes are literal", `A='x\ny ${HOME_DIR} $B'`, map[string]string{"A": `x\ny ${HOME_DIR} $B`}},
	{"double quote escapes", `A="q\"q \\ \$HOME_DIR t\tn\n"`, map[string]string{"A": "q\"q \\ $HOME_DIR t\tn\n"}},
	{"double quotes keep spaces", `A=" padded "`, map[string]string{"A": " padded "}},
	{"comment after quotes", `A="b" # c`, map[string]string{"A": "b"}},
	{"quoted name", `"A"=b`, map[string]string{"A": "b"}},
	{"interpolation from the environment", "A=${HOME_DIR}/x\nB=\"${HOME_DIR}\"", map[string]string{"A": "/home/app/x", "B": "/home/app"}},
	{"interpolation from earlier lines", "NAME=shop\nDB=${NAME}_db", map[string]string{"NAME": "shop", "DB": "shop_db"}},
	{"real environment wins in interpolation", "DB_HOST=file\nX=${DB_HOST}", map[string]string{"DB_HOST": "file", "X": "from-env"}},
	{"unknown reference kept", "A=${NOPE}x", map[string]string{"A": "${NOPE}x"}},
	{"escaped dollar not interpolated", `A="\${HOME_DIR}"`, map[string]string{"A": "${HOME_DIR}"}},
	{"dollar without braces kept", "A=$HOME_DIR", map[string]string{"A": "$HOME_DIR"}},
	{"two references", "A=${HOME_DIR}:${HOME_DIR}", map[string]string{"A": "/home/app:/home/app"}},
	{"later entry wins", "A=1\nA=2", map[string]string{"A": "2"}},
	{"bare name unsets", "A=1\nA\nB=2", map[string]string{"B": "2"}},
	{"multi-line double quotes", "KEY=\"line one\nline two\"\nB=c", map[string]string{"KEY": "line one\nline two", "B": "c"}},
	{"CRLF line ends", "A=b\r\nC=\"d\"\r\n", map[string]string{"A": "b", "C": "d"}},
	{"base64 key with equals", "APP_KEY=base64:AAAA+/==", map[string]string{"APP_KEY": "base64:AAAA+/=="}},
	{"dots in names", "a.b=c", map[string]string{"a.b": "c"}},
	{"quotes inside an unquoted value", `A=it's`, map[string]string{"A": "it's"}},
	{"empty quotes", `A=""` + "\nB=''", map[string]string{"A": "", "B": ""}},
	{"escaped backslash before the closing quote", `A="x\\"`, map[string]string{"A": `x\`}},
	{"multi-line with an escaped quote inside", "A=\"one \\\"two\\\"\nthree\"", map[string]string{"A": "one \"two\"\nthree"}},
	{"self reference", "A=x\nA=${A}y", map[string]string{"A": "xy"}},
	{"reference with dots", "a.b=1\nC=${a.b}", map[string]string{"a.b": "1", "C": "1"}},
	{"comment right after the equals", "A=#x\nB= # y", map[string]string{"A": "", "B": ""}},
	{"tab after the value", "A=b\t", map[string]string{"A": "b"}},
	{"value with equals signs", "A=x=y==", map[string]string{"A": "x=y=="}},
	{"unclosed multi-line value drops the rest", "A=1\nB=\"abc\nC=2", map[string]string{"A": "1"}},
	// phpdotenv's line splitter sees `="` with one double quote as a multi-line start, single quotes or not.
	{"=\" inside single quotes starts a multi-line value", "A=1\nK='0=\"'\nB=2", map[string]string{"A": "1"}},
	{"byte order mark", "\ufeffDB_CONNECTION=sqlite\nB=2", map[string]string{"DB_CONNECTION": "sqlite", "B": "2"}},
	{"byte order mark before a comment", "\ufeff# app\nA=1", map[string]string{"A": "1"}},
	// PHP's trim() takes spaces, tabs, line breaks, NUL and \v, not a no-break space or a form feed.
	{"no-break space kept", "A=secret\u00a0\nB=\u00a0secret", map[string]string{"A": "secret\u00a0", "B": "\u00a0secret"}},
	{"trailing NUL trimmed", "A=secret\x00", map[string]string{"A": "secret"}},
}

func TestParseDotenv(t *testing.T) {
	t.Parallel()
	environ := map[string]string{"HOME_DIR": "/home/app", "DB_HOST": "from-env"}
	for _, tt := range dotenvCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := parseDotenv(".env", tt.content, environ)
			if err != nil {
				t.Fatalf("parseDotenv: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// dotenvErrorCases are .env contents phpdotenv rejects, with the line and message expected.
var dotenvErrorCases = []struct {
	name, content string
	line          int
	msg           string
}{
	{"space in unquoted value", "A=1\nB=two words", 2, "unexpected text after whitespace"},
	{"unclosed single quote", "A='abc", 1, "missing closing quote"},
	{"text after closing quote", `A="b"c`, 1, "unexpected text after whitespace"},
	{"unknown escape", `A="\q"`, 1, "unexpected escape sequence"},
	{"bad name", "A-B=c", 1, "invalid name"},
	{"leading equals", "=c", 1, "starts with '='"},
	{"bare name with a trailing space", "A=1\nDB_PASSWORD \nB=2", 2, "invalid name"},
}

func TestParseDotenvErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range dotenvErrorCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := parseDotenv("/app/.env", tt.content, nil)
			var fe *EnvFileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want an *EnvFileError", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
			if fe.Line != tt.line || !strings.Contains(fe.Msg, tt.msg) || fe.Path != "/app/.env" {
				t.Errorf("got %v, want line %d containing %q", err, tt.line, tt.msg)
			}
		})
	}
}

func TestLaravelEnvValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string
		defined bool
	}{
		{"null", "", false}, {"(null)", "", false}, {"NULL", "", false},
		{"empty", "", true}, {"(empty)", "", true},
		{"true", "true", true}, {"(TRUE)", "true", true}, {"(false)", "false", true},
		{`"quoted"`, "quoted", true}, {`'single'`, "single", true}, {`"mismatched'`, `"mismatched'`, true},
		{"plain", "plain", true},
	}
	for _, tt := range tests {
		got, defined := laravelEnvValue(tt.in)
		if got != tt.want || defined != tt.defined {
			t.Errorf("laravelEnvValue(%q) = %q, %v; want %q, %v", tt.in, got, defined, tt.want, tt.defined)
		}
	}
}

// TestLoadLaravelSkeletonEnv reads the .env a fresh Laravel 11 application ships with.
func TestLoadLaravelSkeletonEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := `APP_NAME=Laravel
APP_ENV=local
APP_KEY=base64:2fl+Ktvkfl+Fuz4Qp/A75G2RTiWVA/ZoKZvp6fiiM10=
APP_DEBUG=true
APP_TIMEZONE=UTC
APP_URL=http://localhost

APP_LOCALE=en
APP_MAINTENANCE_DRIVER=file
# APP_MAINTENANCE_STORE=database

BCRYPT_ROUNDS=12

LOG_CHANNEL=stack
LOG_LEVEL=debug

DB_CONNECTION=sqlite
# DB_HOST=127.0.0.1
# DB_PORT=3306
# DB_DATABASE=laravel
# DB_USERNAME=root
# DB_PASSWORD=

SESSION_DRIVER=database
SESSION_PATH=/
SESSION_DOMAIN=null

QUEUE_CONNECTION=database

CACHE_STORE=database
CACHE_PREFIX=

REDIS_CLIENT=phpredis
REDIS_HOST=127.0.0.1
REDIS_PASSWORD=null
REDIS_PORT=6379

MAIL_FROM_ADDRESS="hello@example.com"
MAIL_FROM_NAME="${APP_NAME}"

VITE_APP_NAME="${APP_NAME}"
ARTISAN_GO_LARAVEL_VERSION=11
`
	path := writeFile(t, dir, ".env", env)
	cfg, err := Load(LoadParams{EnvFile: path})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	want := Default()
	want.LaravelVersion = "11"
	want.DB = DB{Driver: "sqlite", Host: "127.0.0.1", Database: filepath.Join(dir, "database", "database.sqlite"), Username: "root"}
	want.App.Key = "base64:2fl+Ktvkfl+Fuz4Qp/A75G2RTiWVA/ZoKZvp6fiiM10="
	want.App.Env = "local"
	want.App.MaintenanceDriver = "file"    // APP_MAINTENANCE_DRIVER, read from 11
	want.App.MaintenanceStore = "database" // env('APP_MAINTENANCE_STORE', 'database') from 11
	want.Cache.Store = "database"
	want.Cache.Prefix = "" // CACHE_PREFIX= sets it to empty, as Laravel's env() does
	want.Cache.Redis.Prefix = "laravel_database_"
	want.Worker.MaintenanceFile = filepath.Join(dir, "storage", "framework", "down") // beside the .env file
	want.Cache.File.Path = filepath.Join(dir, "storage", "framework", "cache", "data")
	// LOG_CHANNEL=stack: the single channel's file.
	want.Log.LaravelFile = filepath.Join(dir, "storage", "logs", "laravel.log")
	cfg.sources = nil // where keys were set: TestValidateNamesWhereSet
	if cfg.EnvFile() != path {
		t.Errorf("EnvFile() = %q, want %q", cfg.EnvFile(), path)
	}
	want.envFile = path
	if !reflect.DeepEqual(*cfg, want) {
		t.Errorf("got  %+v\nwant %+v", *cfg, want)
	}
}

// FuzzParseDotenv checks that no input panics, and that a value written in single quotes (which
// phpdotenv keeps literally) reads back unchanged. A value holding `="` is left out: phpdotenv's line
// splitter takes any line with `="` and one double quote for the start of a multi-line value, even
// inside single quotes, and drops it when no line closes it (K='0="' sets nothing, checked with
// phpdotenv 5 from Debian).
func FuzzParseDotenv(f *testing.F) {
	f.Add("A=b\nexport C=\"d\\n${A}\" # x\n", "plain")
	f.Add("KEY=\"multi\nline\"\nB='x'", "it's ${HOME}")
	f.Add("=\n\"\n'\n#", "")
	f.Fuzz(func(t *testing.T, content, value string) {
		_, _, _ = parseDotenv(".env", content, map[string]string{"HOME": "/h"})
		if strings.ContainsAny(value, "'\r\n") || strings.Contains(value, `="`) {
			return
		}
		got, _, err := parseDotenv(".env", "K='"+value+"'\n", nil)
		if err != nil {
			t.Fatalf("single-quoted %q: %v", value, err)
		}
		if got["K"] != strings.TrimSpace(value) && got["K"] != value {
			t.Fatalf("single-quoted %q read as %q", value, got["K"])
		}
	})
}
