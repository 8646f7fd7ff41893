package config

import (
	"strings"
	"testing"
)

// TestUnknownConnection: queue:work refuses a connection the application does not have, as Laravel
// does, and accepts "database", QUEUE_CONNECTION's connection and those listed under connections.
func TestUnknownConnection(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		environ []string
		yaml    string
		arg     string
		ok      bool
	}{
		{"unknown", nil, "", "nope", false},
		{"database", []string{"QUEUE_CONNECTION=jobs-db"}, "", "database", true},
		{"QUEUE_CONNECTION", []string{"QUEUE_CONNECTION=jobs-db"}, "", "jobs-db", true},
		{"not QUEUE_CONNECTION's", []string{"QUEUE_CONNECTION=jobs-db"}, "", "other-db", false},
		{"listed", nil, "connections: [reports]\n", "reports", true},
		{"skeleton", nil, "", "redis", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := LoadParams{Environ: c.environ, Overrides: map[string]any{"connection": c.arg}}
			if c.yaml != "" {
				p.ConfigFile = writeFile(t, t.TempDir(), "c.yaml", c.yaml)
			}
			cfg, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			want := "The [" + c.arg + "] queue connection has not been configured."
			if c.ok && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !c.ok && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Fatalf("Validate: %v, want %q", err, want)
			}
		})
	}
}

// TestQueueDriver names the driver of each connection the operations commands may be given, without a
// cached configuration: the worker's connection and those listed are database ones, the skeleton's
// others have the driver of their name, and any other name is not configured.
func TestQueueDriver(t *testing.T) {
	t.Parallel()
	cfg, err := Load(LoadParams{Environ: []string{"QUEUE_CONNECTION=jobs-db"}, ConfigFile: writeFile(t, t.TempDir(), "c.yaml", "connections: [reports]\n")})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"jobs-db": "database", "database": "database", "reports": "database", "sync": "sync", "null": "null", "redis": "redis", "nope": ""} {
		if d, known := cfg.QueueDriver(name); d != want || known != (want != "") {
			t.Errorf("QueueDriver(%q) = %q, %v; want %q", name, d, known, want)
		}
	}
}
