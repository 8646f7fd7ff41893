package redislock

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestACLUser authenticates as a Redis 6+ ACL user (REDIS_USERNAME), created on the test server for
// the test and deleted after it.
func TestACLUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, _ := openTest(t, 0)
	user, password := testenv.Name("artisan_go_user"), testenv.Name("pw")
	if _, err := admin.Command(ctx, "ACL", "SETUSER", user, "on", ">"+password, "~*", "+@all"); err != nil {
		t.Fatalf("create an ACL user: %v", err)
	}
	t.Cleanup(func() { admin.Command(context.Background(), "ACL", "DELUSER", user) })

	prefix := LockPrefix(testenv.Name("app")+"_database_", "app_cache")
	l, err := Open(ctx, Params{Addr: redisAddr(t), Username: user, Password: password, Prefix: prefix})
	if err != nil {
		t.Fatalf("open as the ACL user: %v", err)
	}
	defer l.Close()
	if ok, err := l.LockAcquire(ctx, "acl", "owner", 60); !ok || err != nil {
		t.Fatalf("lock as the ACL user: %v, %v", ok, err)
	}
	if _, err := l.LockRelease(ctx, "acl", "owner"); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Params{Addr: redisAddr(t), Username: user, Password: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "REDIS_USERNAME") {
		t.Fatalf("a wrong password: %v, want an error naming REDIS_USERNAME and REDIS_PASSWORD", err)
	}
}

// TestTLS connects over TLS to a Redis server of its own that speaks only TLS, checking the server's
// certificate against the test's authority; without that authority the connection is refused.
func TestTLS(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Missing(t, "redis-server is not installed: apt-get install redis-server (or run .ci/services)")
	}
	dir := t.TempDir()
	ca := writeCerts(t, dir)
	port := testenv.FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	srv := exec.Command(bin, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", filepath.Join(dir, "server.pem"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.pem"), "--tls-auth-clients", "no",
		"--save", "", "--appendonly", "no", "--dir", dir)
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	// The server logs "Ready to accept connections" once it listens.
	ready := make(chan bool, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if strings.Contains(s.Text(), "Ready to accept connections") {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("redis-server exited before it was ready")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("redis-server did not become ready")
	}

	ctx := context.Background()
	l, err := Open(ctx, Params{Addr: addr, Prefix: "p:", TLS: &tls.Config{ServerName: "127.0.0.1", RootCAs: ca}})
	if err != nil {
		t.Fatalf("open over TLS: %v", err)
	}
	defer l.Close()
	if err := l.CacheForever(ctx, "illuminate:queue:restart", "1800000000"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := l.CacheGet(ctx, "illuminate:queue:restart"); v != "1800000000" || !ok || err != nil {
		t.Fatalf("read back over TLS: %q %v %v", v, ok, err)
	}
	_, err = Open(ctx, Params{Addr: addr, TLS: &tls.Config{ServerName: "127.0.0.1"}})
	if err == nil || !strings.Contains(err.Error(), "ca_file") {
		t.Fatalf("a server certificate from an unknown authority: %v, want an error naming cache.redis.ca_file", err)
	}
}

// writeCerts writes a test authority (ca.pem) and a server certificate for 127.0.0.1 it signed
// (server.pem, server.key) into dir, and returns the authority as a pool.
func writeCerts(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "artisan-go test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"ca.pem": {Type: "CERTIFICATE", Bytes: caDER}, "server.pem": {Type: "CERTIFICATE", Bytes: der},
		"server.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return pool
}
