package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDoUnknownCommand(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"no:such"}, nil, &out, &errb); code != 2 {
		t.Fatalf("exit status %d, want 2", code)
	}
	if !strings.Contains(errb.String(), `unknown command "no:such"`) {
		t.Fatalf("stderr %q does not name the command", errb.String())
	}
}

func TestDoListsCommands(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if code := Do(context.Background(), nil, nil, &out, &out); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	for name := range commands {
		if !strings.Contains(out.String(), name) {
			t.Errorf("usage does not list %s", name)
		}
	}
}
