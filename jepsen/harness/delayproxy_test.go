package harness

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestDelayProxy: a round trip through the proxy takes at least twice its
// delay and the bytes arrive intact, in order.
func TestDelayProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			c.Write([]byte(line))
		}
	}()
	const delay = 60 * time.Millisecond
	p, err := NewDelayProxy("127.0.0.1:0", ln.Addr().String(), delay)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, msg := range []string{"one\n", "two\n", "three\n"} {
		start := time.Now()
		c.Write([]byte(msg))
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if got != msg {
			t.Fatalf("echo %q, want %q", got, msg)
		}
		if rtt := time.Since(start); rtt < 2*delay {
			t.Fatalf("round trip %s, want at least %s", rtt, 2*delay)
		}
	}
}

func TestStaleName(t *testing.T) {
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	gone := strconv.FormatInt(int64(done.Process.Pid), 36)
	self := strconv.FormatInt(int64(os.Getpid()), 36)
	for name, want := range map[string]bool{
		"sj" + gone + "-1-n1": true,
		"sj" + gone + "-1-br": true,
		"sj" + self + "-1-n1": false, // this process runs
		"eth0":                false,
		"sj-1-n1":             false,
		"sjabc":               false,
		"sj!!-1-n1":           false,
	} {
		if got := staleName(name); got != want {
			t.Errorf("staleName(%q) = %v, want %v", name, got, want)
		}
	}
}
