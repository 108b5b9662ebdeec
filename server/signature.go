package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

const signaturePrefix = "sha256="

// Sign returns the X-Hub-Signature-256 header value GitHub sends for body.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// VerifySignature checks an X-Hub-Signature-256 header against the raw body
// with a constant-time comparison. Only SHA-256 is accepted: a delivery
// carrying only the legacy SHA-1 X-Hub-Signature is refused.
func VerifySignature(secret, body []byte, header string) error {
	hexSig, ok := strings.CutPrefix(header, signaturePrefix)
	if !ok {
		if header == "" {
			return fmt.Errorf("%w: no X-Hub-Signature-256 header", ErrUnauthorized)
		}
		return fmt.Errorf("%w: X-Hub-Signature-256 is not sha256", ErrUnauthorized)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: X-Hub-Signature-256 is not a SHA-256 hex digest", ErrUnauthorized)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return fmt.Errorf("%w: signature does not match", ErrUnauthorized)
	}
	return nil
}
