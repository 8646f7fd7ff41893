package memcached

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestValueFlags maps PHP-serialized values to the flags and data PHP's memcached extension stores
// (checked with php-memcached 3.2: an int is flag 1 "1732000000", true flag 3 "1", a string flag 0, an
// array flag 4 serialized) and back.
func TestValueFlags(t *testing.T) {
	for _, tt := range []struct {
		serialized string
		flags      int
		data       string
	}{
		{"i:1732000000;", flagLong, "1732000000"},
		{"i:-3;", flagLong, "-3"},
		{"b:1;", flagBool, "1"},
		{"b:0;", flagBool, ""},
		{`s:16:"aB3dE6gH9jK2mN5p";`, flagString, "aB3dE6gH9jK2mN5p"},
		{`a:1:{s:1:"a";i:1;}`, flagSerialized, `a:1:{s:1:"a";i:1;}`},
		{"d:0.5;", flagDouble, "0.5"},
	} {
		flags, data := stored(tt.serialized)
		if flags != tt.flags || data != tt.data {
			t.Errorf("stored(%s) = %d %q, want %d %q", tt.serialized, flags, data, tt.flags, tt.data)
		}
		back, err := serialized(flags, data)
		if err != nil || back != tt.serialized {
			t.Errorf("serialized(%d, %q) = %q, %v, want %s", flags, data, back, err, tt.serialized)
		}
	}
	if _, err := serialized(flagString|0x10, "x"); err == nil {
		t.Error("a compressed value was read")
	}
	if _, err := serialized(5, "x"); err == nil {
		t.Error("an igbinary value was read")
	}
}

// TestServerErrorKeepsConnection sends a request the server refuses and then a good one on the same
// store: the refusal is ErrServer, sent once, and the connection stays usable.
func TestServerErrorKeepsConnection(t *testing.T) {
	addr := os.Getenv("MEMCACHED_HOST")
	if addr == "" {
		addr = "127.0.0.1"
	}
	s, err := Open(context.Background(), Params{Servers: []Server{{Host: addr, Port: 11211}}, Prefix: "artisan_go_test_" + strconv.FormatInt(time.Now().UnixNano(), 10)})
	if err != nil {
		testenv.Missing(t, "memcached is not reachable: %v (apt-get install memcached, or run .ci/services)", err)
	}
	defer s.Close()
	ctx := context.Background()
	conn := s.servers[0].conn
	if _, err := s.roundTrip(ctx, "k", "no_such_command\r\n"); !errors.Is(err, ErrServer) {
		t.Fatalf("an unknown command: %v, want ErrServer", err)
	}
	if s.servers[0].conn != conn {
		t.Fatal("the server's refusal dropped the connection (and sent the command again)")
	}
	if err := s.CachePut(ctx, "k", "i:41;", time.Minute); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CacheIncrement(ctx, "k", 1); err != nil || n != 42 {
		t.Fatalf("increment after the refusal: %d, %v", n, err)
	}
	if v, ok, err := s.CacheGet(ctx, "k"); err != nil || !ok || v != "i:42;" {
		t.Fatalf("get: %q %v %v", v, ok, err)
	}
	if _, err := s.CacheIncrement(ctx, "absent", 1); !errors.Is(err, ErrMiss) {
		t.Fatalf("increment of an absent key: %v, want ErrMiss", err)
	}
}
