package api_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// rawBody opens a connection to s and sends the head of a request whose
// body is declared as size bytes (chunked when size < 0); the caller sends
// the body, or not, on the returned connection.
func rawBody(t testing.TB, s *apitest.Server, method, path string, size int64, headers map[string]string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: svcd\r\nContent-Type: application/json\r\n", method, path)
	if size >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", size)
	} else {
		b.WriteString("Transfer-Encoding: chunked\r\n")
	}
	for k, v := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	return c
}

// rawAnswer reads the answer on c within d: its status and body, or an
// error when the connection ends or nothing arrives in time.
func rawAnswer(c net.Conn, d time.Duration) (int, string, error) {
	c.SetReadDeadline(time.Now().Add(d))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	return res.StatusCode, b.String(), nil
}
