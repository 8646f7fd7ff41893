// Package layering checks the rules that keep the packages in their layers, by reading the module's
// own source: only laravel/ writes SQL (test harnesses aside), only config/ imports viper, payload/
// imports nothing of ours and does no I/O, and the command line does not link the benchmark harness.
// It needs no tool but the Go standard library, so `make test` and `make lint` both run it.
package layering

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/artisan-go/artisan-go"

// known lists the places that break a rule today, each with the change that removes it. A known
// exception that no longer occurs fails the test too, so that the list only shrinks.
var known = map[string]string{}

// harnesses may hold SQL of their own: they create the databases (and servers) tests run in, and read
// the rows PHP wrote as an oracle that does not go through the code it checks.
var harnesses = []string{"internal/testenv", "internal/phpapp", "internal/faults"}

// sqlText matches string literals that read as SQL statements rather than prose.
var sqlText = []*regexp.Regexp{
	regexp.MustCompile(`(?is)\bselect\b.+\bfrom\s+\S`),
	regexp.MustCompile(`(?i)\binsert\s+into\s+\S+\s*(\(|values\b|select\b)`),
	regexp.MustCompile(`(?i)\bupdate\s+\S+\s+set\s`),
	regexp.MustCompile(`(?i)\bdelete\s+from\s`),
	regexp.MustCompile(`(?i)\b(create|alter|drop)\s+(table|index|schema|database)\b`),
}

// noIO are the standard packages that do I/O, which payload/ must not import.
var noIO = []string{"os", "net", "database", "syscall", "io/ioutil", "io/fs", "log", "embed", "plugin"}

// pkg is one package of the module as the build sees it (tests and other build tags aside).
type pkg struct {
	dir     string // relative to the module root, with slashes
	path    string // import path
	files   []string
	imports []string
}

func TestLayers(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	found := map[string]string{} // rule key -> what broke it
	for _, p := range pkgs {
		for _, imp := range p.imports {
			if strings.HasPrefix(imp, "github.com/spf13/viper") && p.dir != "config" {
				found["viper "+p.dir] = p.dir + " imports " + imp + "; only config/ reads configuration"
			}
			if p.dir == "payload" && (imp == module || strings.HasPrefix(imp, module+"/")) {
				found["payload-imports "+imp] = "payload/ imports " + imp + "; it is the leaf every other package builds on"
			}
			if p.dir == "payload" && slices.ContainsFunc(noIO, func(io string) bool { return imp == io || strings.HasPrefix(imp, io+"/") }) {
				found["payload-io "+imp] = "payload/ imports " + imp + "; decoding does no I/O"
			}
		}
		if p.dir == "laravel" || strings.HasPrefix(p.dir, "laravel/") || slices.Contains(harnesses, p.dir) {
			continue
		}
		for _, f := range p.files {
			rel := filepath.ToSlash(filepath.Join(p.dir, f))
			if lit := sqlLiteral(t, filepath.Join(root(t), rel)); lit != "" {
				found["sql "+rel] = rel + " holds SQL text " + strconv.Quote(lit) + "; SQL belongs in laravel/, behind a method"
			}
		}
	}
	for _, from := range []string{"cli", "cmd/artisan-go"} {
		for _, heavy := range []string{"internal/bench", "golang.org/x/image"} {
			if reaches(pkgs, from, heavy) {
				found["bench "+from+" -> "+heavy] = from + " links " + heavy + " into the binary; the benchmark harness is not part of it"
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(found)) {
		if _, ok := known[key]; !ok {
			t.Errorf("%s", found[key])
		}
	}
	for key, why := range known {
		if _, ok := found[key]; !ok {
			t.Errorf("known exception %q (%s) no longer occurs: remove it from the list", key, why)
		}
	}
}

// TestRulesCatchBreaks checks that the SQL scan sees statements and leaves prose alone.
func TestRulesCatchBreaks(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"select id, payload from jobs where queue = ?":         true,
		"SELECT 1 FROM dual":                                   true,
		"insert into `jobs` (queue) values (?)":                true,
		"insert into %s values (?, ?)":                         true,
		"dispatch %s: insert into %s: %w":                      false,
		"update jobs set reserved_at = null":                   true,
		"delete from jobs where id = ?":                        true,
		"ALTER TABLE jobs ADD INDEX x (queue)":                 true,
		"create table if not exists t (id integer)":            true,
		"select the queue to work from the list":               true, // reads as SQL: rephrase such prose
		"--queue names the queues to work, in priority order":  false,
		"delete the job without the success path":              false,
		"update the batch counters":                            false,
		"run `php artisan queue:table && php artisan migrate`": false,
	} {
		if got := isSQL(s); got != want {
			t.Errorf("isSQL(%q) = %v, want %v", s, got, want)
		}
	}
}

func isSQL(s string) bool {
	return slices.ContainsFunc(sqlText, func(re *regexp.Regexp) bool { return re.MatchString(s) })
}

// sqlLiteral returns the first string literal in the file that reads as SQL, or "".
func sqlLiteral(t *testing.T, path string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var hit string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || hit != "" {
			return hit == ""
		}
		if s, err := strconv.Unquote(lit.Value); err == nil && isSQL(s) {
			hit = s
		}
		return false
	})
	return hit
}

// reaches reports whether package from imports target, directly or through other packages of the
// module, in a normal build.
func reaches(pkgs map[string]*pkg, from, target string) bool {
	seen := map[string]bool{}
	var walk func(path string) bool
	walk = func(path string) bool {
		if path == target || path == module+"/"+target || strings.HasPrefix(path, target+"/") {
			return true
		}
		if seen[path] {
			return false
		}
		seen[path] = true
		p := pkgs[path]
		if p == nil {
			return false
		}
		return slices.ContainsFunc(p.imports, walk)
	}
	return walk(module + "/" + from)
}

// load reads every package of the module with the default build context, so files behind build tags
// and test files are left out, as they are from the binary.
func load(t *testing.T) map[string]*pkg {
	t.Helper()
	base := root(t)
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != base && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != base {
			return filepath.SkipDir // another module (internal/bench/peers): not this one's packages
		}
		bp, err := build.Default.ImportDir(path, 0)
		if err != nil {
			return nil // no buildable Go files here
		}
		rel, _ := filepath.Rel(base, path)
		rel = filepath.ToSlash(rel)
		ip := module
		if rel != "." {
			ip += "/" + rel
		}
		pkgs[ip] = &pkg{dir: rel, path: ip, files: slices.Concat(bp.GoFiles, bp.CgoFiles), imports: bp.Imports}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s", len(pkgs), base)
	}
	return pkgs
}

// root returns the module's root directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
