package mail_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// received is one message as the in-process SMTP server saw it.
type received struct {
	From, User string
	To         []string
	Data       []byte
	TLS        bool
}

// smtpServer is an in-process SMTP server (github.com/emersion/go-smtp) on
// 127.0.0.1:0 that records what it receives.
type smtpServer struct {
	Addr string
	Port int

	user, pass string
	mu         sync.Mutex
	msgs       []received
}

type serverOpts struct {
	user, pass string      // when set, AUTH PLAIN is offered and required
	starttls   *tls.Config // offer STARTTLS with this config
	implicit   *tls.Config // listen with TLS from the first byte
}

func startSMTP(t *testing.T, o serverOpts) *smtpServer {
	t.Helper()
	s := &smtpServer{user: o.user, pass: o.pass}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{srv: s, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.TLSConfig = o.starttls
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.implicit != nil {
		ln = tls.NewListener(ln, o.implicit)
	}
	s.Addr = ln.Addr().String()
	s.Port = ln.Addr().(*net.TCPAddr).Port
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return s
}

func (s *smtpServer) messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

type session struct {
	srv  *smtpServer
	conn *smtp.Conn
	user string
	cur  received
}

func (x *session) AuthMechanisms() []string {
	if x.srv.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (x *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != x.srv.user || password != x.srv.pass {
			return errors.New("invalid username or password")
		}
		x.user = username
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if x.srv.user != "" && x.user == "" {
		return smtp.ErrAuthRequired
	}
	_, isTLS := x.conn.TLSConnectionState()
	x.cur = received{From: from, User: x.user, TLS: isTLS}
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.cur.To = append(x.cur.To, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.cur.Data = b
	x.srv.mu.Lock()
	x.srv.msgs = append(x.srv.msgs, x.cur)
	x.srv.mu.Unlock()
	return nil
}

func (x *session) Reset()        { x.cur = received{} }
func (x *session) Logout() error { return nil }

// testCert is a self-signed certificate for 127.0.0.1 and a pool that
// trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "svcd test SMTP"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
