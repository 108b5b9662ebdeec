// Package secrettest makes values that look like secrets at run time, for the tests of the
// secrets check and of what frognano shows, so that no such value is ever committed to
// frognano's own repository. It is imported only from _test.go files.
package secrettest

import (
	"crypto/rand"
	"encoding/base64"
	"math"
	"math/big"
	"strings"
	"testing"
)

// MadeUp returns n characters drawn at random from alphabet.
func MadeUp(t testing.TB, alphabet string, n int) string {
	t.Helper()
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			t.Fatal(err)
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}

// NoStopwords is an alphabet for made-up values of gitleaks' generic rule (`api_key = "..."`),
// 40 characters of it each: no stopword of that rule (which lets a value holding one through as
// a placeholder: "data", "http", "md5", "vpn", ...) can be spelt with it but "000000" and
// "xxxxxx", and 40 random characters of it fall to the rule's entropy floor (3.5) about twice
// in a million: a value made of it is found.
const NoStopwords = "0123456789BCDFGHJKLNQRSTWXZ"

// GenericSecret returns a made-up value of n characters of NoStopwords that gitleaks' generic
// rule finds every time: no stopword ("000000", "xxxxxx") and an entropy above 3.6. A value drawn
// from all letters and digits holds one of the rule's stopwords often enough ("api", "key",
// "abc", ...) that a test wanting the finding failed at random (CI, 2026-12-07).
func GenericSecret(t testing.TB, n int) string {
	t.Helper()
	for {
		v := MadeUp(t, NoStopwords, n)
		l := strings.ToLower(v)
		if Entropy(v) > 3.6 && !strings.Contains(l, "000000") && !strings.Contains(l, "xxxxxx") {
			return v
		}
	}
}

// AWSKey returns a made-up AWS access key id ("AKIA" and 16 characters of A-Z, 2-7) whose
// Shannon entropy is above 3.6 bits a character: above the floor of gitleaks' aws-access-token
// rule (3.0) and of its generic-api-key rule (3.5), so that both find it every time. Drawn
// freely, about one key in 5,000 fell under the first and one in fourteen under the second,
// and a test that wanted the finding failed at random.
func AWSKey(t testing.TB) string {
	t.Helper()
	for {
		if k := "AKIA" + MadeUp(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16); Entropy(k) > 3.6 {
			return k
		}
	}
}

// PrivateKey returns a made-up RSA private key block in PEM's shape (600 random bytes, base64
// in lines of 64) and its body's lines, which gitleaks' private-key rule finds.
func PrivateKey(t testing.TB) (string, []string) {
	t.Helper()
	body := make([]byte, 600)
	if _, err := rand.Read(body); err != nil {
		t.Fatal(err)
	}
	b := base64.StdEncoding.EncodeToString(body)
	var lines []string
	for len(b) > 64 {
		lines = append(lines, b[:64])
		b = b[64:]
	}
	lines = append(lines, b)
	kind := "RSA " + "PRIVATE KEY"
	return "-----BEGIN " + kind + "-----\n" + strings.Join(lines, "\n") + "\n-----END " + kind + "-----", lines
}

// Entropy is the Shannon entropy of s in bits a character, as gitleaks computes it.
func Entropy(s string) float64 {
	n := map[rune]float64{}
	for _, r := range s {
		n[r]++
	}
	e := 0.0
	for _, c := range n {
		p := c / float64(len(s))
		e -= p * math.Log2(p)
	}
	return e
}
