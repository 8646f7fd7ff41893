package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLoadAppPHP reads config/app.php as PHP does without a cached configuration: a literal timezone
// or cipher (Laravel 5–10) wins over APP_TIMEZONE / APP_CIPHER, ours (ARTISAN_GO_) over it; an
// env() of another variable reads that variable, and the default of env('APP_TIMEZONE', ...) is
// used when the variable is not set.
func TestLoadAppPHP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, appPHP, dotenv string
		environ              []string
		timezone, cipher     string
	}{
		{"literals", "'timezone' => 'Europe/Paris',\n    'cipher' => \"AES-128-CBC\", // the app's", "APP_TIMEZONE=Asia/Tokyo\nAPP_CIPHER=AES-256-GCM\n", nil, "Europe/Paris", "AES-128-CBC"},
		{"ours wins", "'timezone' => 'Europe/Paris',", "", []string{"ARTISAN_GO_APP_TIMEZONE=Asia/Tokyo"}, "Asia/Tokyo", "AES-256-CBC"},
		{"another variable", "'timezone' => env('APP_TZ', 'America/New_York'),", "APP_TIMEZONE=Asia/Tokyo\n", nil, "America/New_York", "AES-256-CBC"},
		{"another variable set", "'timezone' => env('APP_TZ', 'America/New_York'),", "APP_TZ=Asia/Tokyo\n", nil, "Asia/Tokyo", "AES-256-CBC"},
		{"default", "'timezone' => env('APP_TIMEZONE', 'Europe/Berlin'),", "", nil, "Europe/Berlin", "AES-256-CBC"},
		{"variable over default", "'timezone' => env('APP_TIMEZONE', 'Europe/Berlin'),", "", []string{"APP_TIMEZONE=Asia/Tokyo"}, "Asia/Tokyo", "AES-256-CBC"},
		{"not a literal", "'timezone' => date_default_timezone_get(),", "APP_TIMEZONE=Asia/Tokyo\n", nil, "Asia/Tokyo", "AES-256-CBC"},
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		app := "<?php\n\nreturn [\n    /*\n    | the timezone\n    */\n    " + tc.appPHP + "\n    'nested' => ['timezone' => 'UTC'],\n];\n"
		if err := os.WriteFile(filepath.Join(dir, "config", "app.php"), []byte(app), 0o644); err != nil {
			t.Fatal(err)
		}
		env := writeFile(t, dir, ".env", tc.dotenv)
		cfg, err := Load(LoadParams{EnvFile: env, Environ: tc.environ})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.App.Timezone != tc.timezone || cfg.App.Cipher != tc.cipher {
			t.Errorf("%s: timezone %q cipher %q, want %q %q", tc.name, cfg.App.Timezone, cfg.App.Cipher, tc.timezone, tc.cipher)
		}
	}
}
