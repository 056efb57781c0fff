package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
)

// TLSFiles are the certificate, key and CA of mutual TLS between nodes.
type TLSFiles struct {
	Cert, Key, CA string
}

// Enabled reports whether TLS files were given.
func (f TLSFiles) Enabled() bool { return f.Cert != "" || f.Key != "" || f.CA != "" }

// tlsConfigs loads the files into a server and a client configuration:
// both sides present a certificate signed by the CA and verify the other's
// (TLS 1.3). The cluster-key handshake still runs inside the tunnel.
func (f TLSFiles) tlsConfigs() (server, client *tls.Config, err error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return nil, nil, errors.New("cluster: TLS needs a certificate, its key and the CA (--tls-cert, --tls-key, --tls-ca)")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: TLS key pair: %w", err)
	}
	caPEM, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, nil, errors.New("cluster: TLS CA: no certificate in " + f.CA)
	}
	server = &tls.Config{
		Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13,
	}
	client = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS13}
	return server, client, nil
}

// clientTLS wraps an outgoing connection to addr.
func clientTLS(c net.Conn, cfg *tls.Config, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	cc := cfg.Clone()
	cc.ServerName = host
	tc := tls.Client(c, cc)
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	return tc, nil
}
