package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeCA makes a CA and a node certificate for 127.0.0.1 signed by it, as
// PEM files in dir; it returns the TLS file set.
func writeCA(t *testing.T, dir, name string) TLSFiles {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	f := TLSFiles{Cert: filepath.Join(dir, name+".crt"), Key: filepath.Join(dir, name+".key"), CA: filepath.Join(dir, name+"-ca.crt")}
	os.WriteFile(f.Cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(f.Key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	os.WriteFile(f.CA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600)
	return f
}

func tlsLayer(t *testing.T, f TLSFiles, key []byte) *authStreamLayer {
	t.Helper()
	var opt streamOptions
	var err error
	if opt.tlsServer, opt.tlsClient, err = f.tlsConfigs(); err != nil {
		t.Fatal(err)
	}
	l, err := newAuthStreamLayer("127.0.0.1:0", nil, key, slog.New(slog.NewTextHandler(io.Discard, nil)), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestTLSStreamLayer: nodes whose certificates the CA signed connect (and
// still pass the cluster-key handshake); a node with another CA does not.
func TestTLSStreamLayer(t *testing.T) {
	dir := t.TempDir()
	key := DeriveKey("k", "raft")
	good := writeCA(t, dir, "good")
	other := writeCA(t, dir, "other")
	server := tlsLayer(t, good, key)
	go func() {
		for {
			c, err := server.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	friend := tlsLayer(t, good, key)
	c, err := friend.dialKind(server.Addr().String(), connRaft, 2*time.Second)
	if err != nil {
		t.Fatalf("dial with a certificate of the CA: %v", err)
	}
	c.Close()
	stranger := tlsLayer(t, other, key)
	if c, err := stranger.dialKind(server.Addr().String(), connRaft, 2*time.Second); err == nil {
		c.Close()
		t.Fatal("a node with another CA's certificate connected")
	}
	if _, _, err := (TLSFiles{Cert: good.Cert}).tlsConfigs(); err == nil {
		t.Fatal("TLS without key and CA accepted")
	}
}
