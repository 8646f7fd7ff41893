package faults

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy between a worker and its database that injects network faults: latency, a
// pause (a black hole that later heals), resets of every open connection, and cuts right after the
// client sends a chosen statement (a COMMIT whose answer never comes back).
type Proxy struct {
	Addr   string
	target string
	ln     net.Listener

	mu      sync.Mutex
	cond    *sync.Cond
	conns   map[net.Conn]struct{}
	latency time.Duration
	paused  bool
	cut     []byte        // lower-case statement text that cuts the connection once sent
	cuts    int           // how many cuts are left
	cutDone int           // how many cuts were made
	late    chan struct{} // non-nil: a cut statement reaches the server once it is closed

	refuse   []byte // lower-case statement text answered by the proxy with refusal, unsent
	refusal  []byte // the MySQL error packet sent back for it
	refusals int    // how many refusals are left
	refusedN int    // how many statements were refused

	hold  []byte // lower-case statement text that pauses the proxy before it is passed on
	holds int    // how many holds are left
}

// StartProxy listens on a free loopback port and forwards every connection to target (host:port).
// It stops when the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.Resume()
		p.Reset()
	})
	return p
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go p.pipe(c, s, true)
		go p.pipe(s, c, false)
	}
}

// pipe copies from src to dst, applying the faults; fromClient marks the worker-to-database side.
func (p *Proxy) pipe(src, dst net.Conn, fromClient bool) {
	cutHere := false
	defer func() {
		if cutHere {
			// The server's side stays: the server reads the statement and answers before it sees
			// its connection close (a reset would make it drop the unread statement), and the
			// answer then finds no client.
			return
		}
		p.drop(src, dst)
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.paused {
				p.cond.Wait()
			}
			delay := p.latency
			cut := fromClient && p.cuts > 0 && bytes.Contains(bytes.ToLower(buf[:n]), p.cut)
			var refusal []byte
			if fromClient && p.refusals > 0 && bytes.Contains(bytes.ToLower(buf[:n]), p.refuse) {
				p.refusals--
				p.refusedN++
				refusal = p.refusal
			}
			if fromClient && p.holds > 0 && bytes.Contains(bytes.ToLower(buf[:n]), p.hold) {
				// A server that stops answering just as the statement comes: it, and everything
				// after it, waits until Resume.
				p.holds--
				p.paused = true
				for p.paused {
					p.cond.Wait()
				}
			}
			var late chan struct{}
			if cut {
				p.cuts--
				p.cutDone++
				late = p.late
			}
			p.mu.Unlock()
			if delay > 0 {
				time.Sleep(delay)
			}
			if refusal != nil {
				// The server never sees the statement: its session stays as it was (inside the
				// transaction, for a COMMIT), and the client reads the error as the server's.
				if _, werr := src.Write(refusal); werr != nil {
					return
				}
				continue
			}
			if cut {
				// The client's side goes before the statement is passed on, so that no answer
				// can reach the client first.
				cutHere = true
				p.drop(src)
			}
			if late != nil {
				<-late // the client knows of the cut before the server has the statement
			}
			if _, werr := dst.Write(buf[:n]); werr != nil || cut {
				return // a cut statement reaches the server; its answer never reaches the client
			}
		}
		if err != nil {
			return
		}
	}
}

// drop closes connections with a reset.
func (p *Proxy) drop(conns ...net.Conn) {
	p.mu.Lock()
	for _, c := range conns {
		delete(p.conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
	}
}

// Latency delays every chunk forwarded either way by d.
func (p *Proxy) Latency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
}

// Pause holds every byte in both directions (a black hole) until Resume.
func (p *Proxy) Pause() {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
}

// Resume forwards again what Pause held.
func (p *Proxy) Resume() {
	p.mu.Lock()
	p.paused = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Reset resets every open connection.
func (p *Proxy) Reset() {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
	}
}

// CutAfter cuts the client's connection at the next n chunks it sends that contain stmt (compared in
// lower case), and passes each on to the server: the statement runs, and its answer never comes back.
func (p *Proxy) CutAfter(stmt string, n int) {
	p.mu.Lock()
	p.cut, p.cuts, p.late = bytes.ToLower([]byte(stmt)), n, nil
	p.mu.Unlock()
}

// CutDeliverLate is CutAfter with the statement passed on to the server only once deliver is closed:
// the client knows its connection is lost while the server has not yet seen the statement (a COMMIT
// slow to arrive, or still unread by a busy server).
func (p *Proxy) CutDeliverLate(stmt string, n int, deliver chan struct{}) {
	p.mu.Lock()
	p.cut, p.cuts, p.late = bytes.ToLower([]byte(stmt)), n, deliver
	p.mu.Unlock()
}

// PauseAt pauses the proxy (as Pause) when the client next sends a chunk that contains stmt (compared
// in lower case), before passing it on: the statement's answer never comes until Resume.
func (p *Proxy) PauseAt(stmt string) {
	p.mu.Lock()
	p.hold, p.holds = bytes.ToLower([]byte(stmt)), 1
	p.mu.Unlock()
}

// RefuseMySQL answers the next n chunks the client sends that contain stmt (compared in lower case;
// one MySQL command each) with a MySQL error packet of code, SQLSTATE state and message, in place of
// the server, which never sees them.
func (p *Proxy) RefuseMySQL(stmt string, n int, code uint16, state, message string) {
	payload := append([]byte{0xff, byte(code), byte(code >> 8), '#'}, state...)
	payload = append(payload, message...)
	// Length (3 bytes, little-endian) and sequence id 1: the answer to a command sent as packet 0.
	packet := append([]byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), 1}, payload...)
	p.mu.Lock()
	p.refuse, p.refusal, p.refusals = bytes.ToLower([]byte(stmt)), packet, n
	p.mu.Unlock()
}

// Refused returns how many statements RefuseMySQL answered.
func (p *Proxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refusedN
}

// Cuts returns how many connections CutAfter cut.
func (p *Proxy) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cutDone
}
