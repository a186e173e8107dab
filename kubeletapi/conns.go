package kubeletapi

import (
	"context"
	"net"
	"sync"
	"time"
)

// conns are the connections the direct way dialed, by address, and how
// many readers are at each address (Client.Begin), so that a reader of
// many kubelets lets go of each one's connection when it is done with it.
// Kept alive, the connections to 20,000 kubelets would hold 20,000
// descriptors and their buffers until their idle timeout (a scan's whole
// length): memory that grows with the nodes read.
type conns struct {
	mu     sync.Mutex
	open   map[string]map[*conn]bool
	users  map[string]int
	dialer net.Dialer
}

func newConns() *conns {
	return &conns{open: map[string]map[*conn]bool{}, users: map[string]int{},
		dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
}

// conn is a dialed connection that leaves conns when closed.
type conn struct {
	net.Conn
	cs   *conns
	addr string
	once sync.Once
}

func (c *conn) Close() error {
	c.once.Do(func() {
		c.cs.mu.Lock()
		delete(c.cs.open[c.addr], c)
		if len(c.cs.open[c.addr]) == 0 {
			delete(c.cs.open, c.addr)
		}
		c.cs.mu.Unlock()
	})
	return c.Conn.Close()
}

func (cs *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := cs.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, cs: cs, addr: addr}
	cs.mu.Lock()
	if cs.open[addr] == nil {
		cs.open[addr] = map[*conn]bool{}
	}
	cs.open[addr][c] = true
	cs.mu.Unlock()
	return c, nil
}

// begin counts a reader at addr; end uncounts it and, when it was the
// last, closes the connections to addr (idle ones leave the transport's
// pool as their reads fail; there is no request on them: no reader left).
func (cs *conns) begin(addr string) {
	cs.mu.Lock()
	cs.users[addr]++
	cs.mu.Unlock()
}

func (cs *conns) end(addr string) {
	cs.mu.Lock()
	var closing []*conn
	if cs.users[addr]--; cs.users[addr] <= 0 {
		delete(cs.users, addr)
		for c := range cs.open[addr] {
			closing = append(closing, c)
		}
	}
	cs.mu.Unlock()
	for _, c := range closing {
		c.Close()
	}
}

// openTo is how many connections to addr are open.
func (cs *conns) openTo(addr string) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.open[addr])
}

// Begin marks the start of a reader's requests to node n's kubelet; the
// function it returns marks their end, after which, on the direct way to
// many kubelets, the connections to n's address are closed once no other
// reader is at it. A reader of many nodes (fleet) brackets each node's
// reads so; one that does not keeps its connections until the idle
// timeout, as any HTTP client.
func (c *Client) Begin(n Node) (end func()) {
	if c.conns == nil {
		return func() {}
	}
	addr := n.hostPort()
	c.conns.begin(addr)
	var once sync.Once
	return func() { once.Do(func() { c.conns.end(addr) }) }
}
