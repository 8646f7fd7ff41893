package interop

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
)

// TestModelTablesAsPHP asks PHP for the table Eloquent names for each model of
// laravel/testdata/model-tables.tsv (Str::snake(Str::pluralStudly(class_basename))) and compares it
// with the file, which laravel's own test holds ModelTable to, and with ModelTable.
func TestModelTablesAsPHP(t *testing.T) {
	t.Parallel()
	app := phpapp.New(t, testenv.SQLite(t), phpapp.WithoutSchema())
	f, err := os.Open(filepath.Join("..", "..", "laravel", "testdata", "model-tables.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var words []string
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if word, table, ok := strings.Cut(sc.Text(), "\t"); ok && !strings.HasPrefix(word, "#") {
			words = append(words, word)
			want[word] = table
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := `$f = is_file($a = '` + app.Dir() + `/vendor/autoload.php') ? $a : stream_resolve_include_path('Illuminate/autoload.php'); require $f;` +
		`foreach (explode("\n", trim(stream_get_contents(STDIN))) as $w) echo $w, "\t", Illuminate\Support\Str::snake(Illuminate\Support\Str::pluralStudly($w)), "\n";`
	cmd := exec.CommandContext(ctx, app.PHP(), "-r", script)
	cmd.Stdin = strings.NewReader(strings.Join(words, "\n"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		word, php, _ := strings.Cut(line, "\t")
		n++
		if want[word] != php {
			t.Errorf("%s: PHP names the table %q, model-tables.tsv says %q", word, php, want[word])
		}
		if got := laravel.ModelTable(`App\Models\` + word); got != php {
			t.Errorf("%s: PHP names the table %q, ModelTable %q", word, php, got)
		}
	}
	if n != len(words) {
		t.Fatalf("PHP answered %d of %d words", n, len(words))
	}
}
