package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// maxCases are pairs of --backoff and --delay values with PHP 8.2's max() of them.
var maxCases = []struct{ a, b, want string }{
	{"10,20", "5", "5"}, {"0", "5", "5"}, {"10,20", "0", "10,20"}, {"5", "5.0", "5"}, {" 5", "3", " 5"},
	{"abc", "0", "abc"}, {"2", "10", "10"}, {"1e1", "9", "1e1"}, {"0x1A", "9", "9"}, {"inf", "9", "inf"},
	{"", "0", "0"}, {"0", "", "0"}, {"3 ", "20", "20"}, {"10", "10,5", "10,5"}, {"-1", "0", "0"},
	{"1_0", "9", "9"}, {" ", "0", "0"}, {"7.5", "7", "7.5"},
}

func TestPHPMax(t *testing.T) {
	t.Parallel()
	for _, c := range maxCases {
		if got := phpMax(c.a, c.b); got != c.want {
			t.Errorf("phpMax(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// TestPHPMaxAgainstPHP checks the table above with PHP's own max().
func TestPHPMaxAgainstPHP(t *testing.T) {
	t.Parallel()
	php, err := exec.LookPath("php")
	if err != nil {
		testenv.Missing(t, "php is not in PATH")
	}
	script := `foreach (json_decode($argv[1], true) as $c) echo json_encode(max($c['a'], $c['b'])), "\n";`
	// The cases' fields are unexported: encode them as PHP reads them.
	type pair struct {
		A string `json:"a"`
		B string `json:"b"`
	}
	ps := make([]pair, len(maxCases))
	for i, c := range maxCases {
		ps[i] = pair{c.a, c.b}
	}
	pairs, _ := json.Marshal(ps)
	out, err := exec.CommandContext(context.Background(), php, "-r", script, string(pairs)).Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(maxCases) {
		t.Fatalf("php printed %d lines for %d cases", len(lines), len(maxCases))
	}
	for i, c := range maxCases {
		var got string
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("php line %q: %v", lines[i], err)
		}
		if got != c.want {
			t.Errorf("PHP's max(%q, %q) = %q, the table says %q", c.a, c.b, got, c.want)
		}
	}
}
