//go:build unix

package faults

import (
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// galeraProvider is where Debian's galera-4 installs the replication library.
const galeraProvider = "/usr/lib/galera/libgalera_smm.so"

// StartGalera starts a MariaDB Galera cluster of n nodes on this machine, each a mariadbd with its own
// data directory and ports: the first bootstraps the cluster, the others join it one after the other
// and receive its state by rsync. The nodes run as the mysql user, since rsync's state transfer drops
// to nobody when started by root. They are killed when the test ends.
func StartGalera(t testing.TB, n int) []*Server {
	t.Helper()
	for _, bin := range []string{"mariadb-install-db", "rsync"} {
		if _, err := exec.LookPath(bin); err != nil {
			testenv.Missing(t, "%s not found: apt-get install mariadb-server galera-4 rsync", bin)
		}
	}
	if _, err := os.Stat(galeraProvider); err != nil {
		testenv.Missing(t, "%s not found: apt-get install galera-4", galeraProvider)
	}
	if os.Getuid() != 0 {
		testenv.Missing(t, "starting a Galera cluster of the test's own needs root here (its nodes run as the mysql user)")
	}
	u, err := user.Lookup("mysql")
	if err != nil {
		testenv.Missing(t, "no mysql system user to run Galera nodes: apt-get install mariadb-server")
	}
	owner := u.Uid + ":" + u.Gid
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	nodes := make([]*Server, n)
	var first string // the first node's group communication address, which the others join
	for i := range nodes {
		dir := tempDir(t, owner)
		data, tmp := filepath.Join(dir, "data"), filepath.Join(dir, "tmp")
		if err := os.Mkdir(tmp, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(tmp, uid, gid); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--tmpdir="+tmp, "--user=mysql",
			"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput(); err != nil {
			t.Fatalf("mariadb-install-db: %v\n%s", err, out)
		}
		s := &Server{Dialect: "mysql", Port: stillPort(t), dir: dir, log: filepath.Join(dir, "server.log")}
		group, ist, sst := "127.0.0.1:"+strconv.Itoa(stillPort(t)), "127.0.0.1:"+strconv.Itoa(stillPort(t)), "127.0.0.1:"+strconv.Itoa(stillPort(t))
		cluster := "gcomm://" + first
		s.args = []string{"/usr/sbin/mariadbd", "--no-defaults", "--datadir=" + data, "--tmpdir=" + tmp, "--port=" + strconv.Itoa(s.Port),
			"--bind-address=127.0.0.1", "--socket=" + filepath.Join(dir, "sock"), "--pid-file=" + filepath.Join(dir, "pid"),
			"--user=mysql", "--skip-name-resolve", "--innodb-buffer-pool-size=32M", "--innodb-flush-log-at-trx-commit=2",
			"--binlog-format=ROW", "--innodb-autoinc-lock-mode=2",
			"--wsrep-on=ON", "--wsrep-provider=" + galeraProvider, "--wsrep-node-address=127.0.0.1", "--wsrep-node-name=node" + strconv.Itoa(i+1),
			"--wsrep-provider-options=gmcast.listen_addr=tcp://" + group + ";ist.recv_addr=" + ist + ";gcache.size=32M",
			"--wsrep-sst-method=rsync", "--wsrep-sst-receive-address=" + sst, "--wsrep-cluster-address=" + cluster}
		if i == 0 {
			s.args = append(s.args, "--wsrep-new-cluster")
			first = group
		}
		// A joiner answers once its state transfer is done and it has synced (until then it refuses
		// queries), so the nodes start one after the other.
		s.Start(t)
		t.Cleanup(func() { s.Kill(t) })
		nodes[i] = s
	}
	return nodes
}

// stillPort returns a TCP port nothing listens on now, below Linux's range of ephemeral ports
// (32768 on): a joining node binds its ports only after its state transfer, seconds later, and a port
// of that range may meanwhile be the local end of an outgoing connection.
func stillPort(t testing.TB) int {
	t.Helper()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			l.Close()
			return port
		}
	}
	t.Fatal("no free port between 20000 and 32000")
	return 0
}
