package githubapp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"sync"
	"testing"
)

var (
	keysOnce           sync.Once
	pkcs1PEM, pkcs8PEM []byte
	ecPEM              []byte
)

// testKeys makes one RSA key in both encodings GitHub users meet, and a non-RSA key.
func testKeys(t *testing.T) (pkcs1, pkcs8, ec []byte) {
	t.Helper()
	keysOnce.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		pkcs1PEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			panic(err)
		}
		pkcs8PEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
		eckey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		ecder, err := x509.MarshalPKCS8PrivateKey(eckey)
		if err != nil {
			panic(err)
		}
		ecPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecder})
	})
	return pkcs1PEM, pkcs8PEM, ecPEM
}

func TestEndpoints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		want Endpoints
	}{
		{"", Endpoints{"https://api.github.com/", "https://uploads.github.com/", "https://github.com/", "https://api.github.com"}},
		{"https://github.com", Endpoints{"https://api.github.com/", "https://uploads.github.com/", "https://github.com/", "https://api.github.com"}},
		{"https://github.com/", Endpoints{"https://api.github.com/", "https://uploads.github.com/", "https://github.com/", "https://api.github.com"}},
		{"https://ghe.example.com", Endpoints{"https://ghe.example.com/api/v3/", "https://ghe.example.com/api/uploads/", "https://ghe.example.com/", "https://ghe.example.com/api/v3"}},
		{"https://ghe.example.com:8443/", Endpoints{"https://ghe.example.com:8443/api/v3/", "https://ghe.example.com:8443/api/uploads/", "https://ghe.example.com:8443/", "https://ghe.example.com:8443/api/v3"}},
		{"https://octocorp.ghe.com", Endpoints{"https://api.octocorp.ghe.com/", "https://uploads.octocorp.ghe.com/", "https://octocorp.ghe.com/", "https://api.octocorp.ghe.com"}},
		{"http://127.0.0.1:4000", Endpoints{"http://127.0.0.1:4000/api/v3/", "http://127.0.0.1:4000/api/uploads/", "http://127.0.0.1:4000/", "http://127.0.0.1:4000/api/v3"}},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			got, err := Config{URL: tt.url}.Endpoints()
			if err != nil || got != tt.want {
				t.Errorf("Endpoints(%q) = %+v, %v; want %+v", tt.url, got, err, tt.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	pkcs1, pkcs8, ec := testKeys(t)
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // "" for valid
	}{
		{"PKCS1", Config{AppID: 1, PrivateKey: pkcs1}, ""},
		{"PKCS8", Config{AppID: 1, PrivateKey: pkcs8, URL: "https://ghe.example.com"}, ""},
		{"ZeroAppID", Config{PrivateKey: pkcs1}, "app id"},
		{"NegativeAppID", Config{AppID: -3, PrivateKey: pkcs1}, "app id"},
		{"NoKey", Config{AppID: 1}, "empty"},
		{"NotPEM", Config{AppID: 1, PrivateKey: []byte("ghs_notakey")}, "not PEM"},
		{"BrokenPEM", Config{AppID: 1, PrivateKey: []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n")}, "PKCS#1"},
		{"ECKey", Config{AppID: 1, PrivateKey: ec}, "RSA"},
		{"Certificate", Config{AppID: 1, PrivateKey: []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")}, "CERTIFICATE"},
		{"PlainHTTP", Config{AppID: 1, PrivateKey: pkcs1, URL: "http://ghe.example.com"}, "https"},
		{"NoScheme", Config{AppID: 1, PrivateKey: pkcs1, URL: "ghe.example.com"}, "host"},
		{"WithPath", Config{AppID: 1, PrivateKey: pkcs1, URL: "https://ghe.example.com/api/v3"}, "origin"},
		{"WithCredentials", Config{AppID: 1, PrivateKey: pkcs1, URL: "https://x:y@ghe.example.com"}, "origin"},
		{"FTP", Config{AppID: 1, PrivateKey: pkcs1, URL: "ftp://ghe.example.com"}, "https"},
		{"Unparsable", Config{AppID: 1, PrivateKey: pkcs1, URL: "https://ghe example.com"}, "URL"},
		{"NegativeRate", Config{AppID: 1, PrivateKey: pkcs1, WritesPerSecond: -1}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error mentioning %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "AAAA") {
				t.Errorf("error quotes key material: %v", err)
			}
			if _, newErr := New(tt.cfg); (newErr == nil) != (err == nil) {
				t.Errorf("New() error %v disagrees with Validate() %v", newErr, err)
			}
		})
	}
}
