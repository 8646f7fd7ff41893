package config

import (
	"os"
	"path/filepath"
	"regexp"
)

// appPHPKeys are the settings config/app.php writes as literals up to Laravel 10 ('timezone' =>
// 'UTC', 'cipher' => 'AES-256-CBC'), which PHP then reads whatever the environment says, and
// Laravel 11 as env('APP_TIMEZONE', 'UTC'), with a default of the application's own; appPHPVars
// are the variables the configuration reads for them (keys.go).
var (
	appPHPKeys = map[string]string{"timezone": "app.timezone", "cipher": "app.cipher"}
	appPHPVars = map[string]string{"app.timezone": "APP_TIMEZONE", "app.cipher": "APP_CIPHER"}
)

// appPHPEntry matches one `'key' => value,` line of config/app.php's array.
var appPHPEntry = regexp.MustCompile(`(?m)^\s*['"](timezone|cipher)['"]\s*=>\s*(.+?)\s*,?\s*(?://.*)?$`)

// appPHPLiteral and appPHPEnv read the value: a quoted string, or env('NAME', 'default').
var (
	appPHPLiteral = regexp.MustCompile(`^(?:'([^'\\]*)'|"([^"\\$]*)")$`)
	appPHPEnv     = regexp.MustCompile(`^env\(\s*['"](\w+)['"]\s*,\s*(?:'([^'\\]*)'|"([^"\\$]*)")\s*\)$`)
)

// appPHPSettings reads config/app.php under appDir, when there is one, for the values of appPHPKeys.
// A literal is what PHP uses: it comes back in literal, and covered names its key, so that the
// environment's Laravel variable (APP_TIMEZONE) does not override it. env('NAME', 'default') comes
// back as the default in defaults, below every other layer, or as the value of NAME when that is
// another variable than the one the key is read from (lookup reads the .env file and the environment).
func appPHPSettings(appDir string, lookup func(string) (string, bool)) (literal, defaults []setting, covered map[string]bool) {
	if appDir == "" {
		return nil, nil, nil
	}
	path := filepath.Join(appDir, "config", "app.php")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil
	}
	covered = map[string]bool{}
	seen := map[string]bool{}
	for _, m := range appPHPEntry.FindAllSubmatch(b, -1) {
		name, expr := string(m[1]), string(m[2])
		if seen[name] {
			continue // the first: the top-level entry comes before any nested array's
		}
		seen[name] = true
		key := appPHPKeys[name]
		source := "'" + name + "' in " + path
		if l := appPHPLiteral.FindStringSubmatch(expr); l != nil {
			literal = append(literal, setting{path: key, value: l[1] + l[2], source: source})
			covered[key] = true
			continue
		}
		e := appPHPEnv.FindStringSubmatch(expr)
		if e == nil {
			continue // a constant or a call: not read
		}
		def := e[2] + e[3]
		if appPHPVars[key] != e[1] {
			// Another variable than ours: its value, else the default, is what PHP reads.
			if v, ok := lookup(e[1]); ok {
				if v, defined := laravelEnvValue(v); defined {
					def = v
				}
			}
			literal = append(literal, setting{path: key, value: def, source: e[1] + " through " + source})
			covered[key] = true
			continue
		}
		defaults = append(defaults, setting{path: key, value: def, source: "the default of " + source})
	}
	return literal, defaults, covered
}
