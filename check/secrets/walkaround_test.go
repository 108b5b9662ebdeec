package secrets

import (
	"encoding/base64"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/frognano/frognano/internal/secrettest"
)

// genericValue is a made-up value that gitleaks' generic rule always finds after a keyword
// (api_key = "..."): no stopword can be spelt with its alphabet.
func genericValue(t *testing.T) string {
	return secrettest.GenericSecret(t, 40)
}

// pemBody is the base64 body of a made-up private key, in 64-character lines.
func pemBody(t *testing.T, n int) []string {
	b := base64.StdEncoding.EncodeToString([]byte(secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", n)))
	var lines []string
	for len(b) > 64 {
		lines, b = append(lines, b[:64]), b[64:]
	}
	return append(lines, b)
}

// walkAround is one way a patch got a secret past the per-hunk scan (issue 28, section 1):
// the base's files, the files the patch writes, and what the scan must find.
type walkAround struct {
	name  string
	files func(t *testing.T) (base, patch map[string]string)
	want  []Finding
}

var readme = map[string]string{"README.md": "hello\n"}

func pemLine(kind, which string) string { return "-----" + which + " " + kind + "-----" }

// walkArounds are the three examples of the issue and siblings of each class, all written
// by a patch in block mode, all published before the scan read whole files and judged allow
// rules itself.
var walkArounds = []walkAround{
	// Class 1: an allow rule of gitleaks' defaults that judges the file's path, which the
	// patch chooses.
	{
		name: "RulePathAllowList/OctokitReadmeGitHubPAT", // the example
		files: func(t *testing.T) (map[string]string, map[string]string) {
			return readme, map[string]string{"@octokit/auth-token/README.md": "# auth\n\nGITHUB=" + githubToken(t) + "\n"}
		},
		want: []Finding{{Rule: "github-pat", File: "@octokit/auth-token/README.md", Line: 3}},
	},
	{
		name: "RulePathAllowList/OctokitReadmeGitHubAppToken",
		files: func(t *testing.T) (map[string]string, map[string]string) {
			token := "ghu" + "_" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)
			return readme, map[string]string{"vendor/@octokit/auth-token/README.md": "GH_APP=" + token + "\n"}
		},
		want: []Finding{{Rule: "github-app-token", File: "vendor/@octokit/auth-token/README.md", Line: 1}},
	},
	{
		// An AND allow-list: a BitBake include file (path) whose line sets SRC...="..." (line).
		name: "RulePathAndLineAllowList/BitBakeInclude",
		files: func(t *testing.T) (map[string]string, map[string]string) {
			return readme, map[string]string{"conf/build.inc": "SRC_API_KEY = \"" + genericValue(t) + "\"\n"}
		},
		want: []Finding{{Rule: "generic-api-key", File: "conf/build.inc", Line: 1}},
	},
	// Class 2: an allow regex of gitleaks' defaults whose target is the rest of the line or
	// match, which the patch writes beside the secret.
	{
		name: "LineAllowRegex/DockerMountSecret", // the example
		files: func(t *testing.T) (map[string]string, map[string]string) {
			return map[string]string{"Dockerfile": "FROM scratch\n"},
				map[string]string{"Dockerfile": "FROM scratch\nRUN --mount=type=secret,id=npm API_KEY=" + genericValue(t) + " npm ci\n"}
		},
		want: []Finding{{Rule: "generic-api-key", File: "Dockerfile", Line: 2}},
	},
	{
		name: "LineAllowRegex/JavaScriptImport", // the example
		files: func(t *testing.T) (map[string]string, map[string]string) {
			return readme, map[string]string{"web/client.js": "import { api } from \"./api\"; const apiKey = \"" + genericValue(t) + "\";\n"}
		},
		want: []Finding{{Rule: "generic-api-key", File: "web/client.js", Line: 1}},
	},
	{
		// "author" in the match: the name authorization_token holds it.
		name: "MatchAllowRegex/Authorization",
		files: func(t *testing.T) (map[string]string, map[string]string) {
			return readme, map[string]string{"app/settings.py": "authorization_token = \"" + genericValue(t) + "\"\n"}
		},
		want: []Finding{{Rule: "generic-api-key", File: "app/settings.py", Line: 1}},
	},
	{
		// "keyring" in the match.
		name: "MatchAllowRegex/Keyring",
		files: func(t *testing.T) (map[string]string, map[string]string) {
			return readme, map[string]string{"app/vault.py": "keyring_password = \"" + genericValue(t) + "\"\n"}
		},
		want: []Finding{{Rule: "generic-api-key", File: "app/vault.py", Line: 1}},
	},
	// Class 3: a secret assembled from lines the patch did not change: no hunk holds it whole.
	{
		name: "UnchangedLines/PrivateKeyBody", // the example
		files: func(t *testing.T) (map[string]string, map[string]string) {
			kind := "RSA " + "PRIVATE KEY"
			return map[string]string{"deploy/key.pem": pemLine(kind, "BEGIN") + "\nPASTE THE KEY HERE\n" + pemLine(kind, "END") + "\n"},
				map[string]string{"deploy/key.pem": pemLine(kind, "BEGIN") + "\n" + strings.Join(pemBody(t, 240), "\n") + "\n" + pemLine(kind, "END") + "\n"}
		},
		want: []Finding{{Rule: "private-key", File: "deploy/key.pem", Line: 1}},
	},
	{
		// The other half of the key is in the base: its BEGIN line and the start of its body.
		name: "UnchangedLines/PrivateKeyHalfInTheBase",
		files: func(t *testing.T) (map[string]string, map[string]string) {
			kind, body := "EC "+"PRIVATE KEY", pemBody(t, 240)
			return map[string]string{"deploy/half.pem": pemLine(kind, "BEGIN") + "\n" + strings.Join(body[:2], "\n") + "\n"},
				map[string]string{"deploy/half.pem": pemLine(kind, "BEGIN") + "\n" + strings.Join(body, "\n") + "\n" + pemLine(kind, "END") + "\n"}
		},
		want: []Finding{{Rule: "private-key", File: "deploy/half.pem", Line: 1}},
	},
	{
		// curl on one line, its -u on the next: the patch changes only the credentials.
		name: "UnchangedLines/CurlContinuation",
		files: func(t *testing.T) (map[string]string, map[string]string) {
			head := "#!/bin/sh\ncurl https://api.example.com/data \\\n"
			return map[string]string{"scripts/fetch.sh": head + "  -u \"$API_USER:$API_PASS\"\n"},
				map[string]string{"scripts/fetch.sh": head + "  -u deploy:" + genericValue(t) + "\n"}
		},
		want: []Finding{{Rule: "curl-auth-user", File: "scripts/fetch.sh", Line: 2}},
	},
	{
		// A Kubernetes Secret whose kind and data lines are the base's: the patch fills in the
		// value the base left empty.
		name: "UnchangedLines/KubernetesSecretValue",
		files: func(t *testing.T) (map[string]string, map[string]string) {
			head := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n"
			v := base64.StdEncoding.EncodeToString([]byte(secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 24)))
			return map[string]string{"k8s/secret.yaml": head + "  db: \"\"\n"}, map[string]string{"k8s/secret.yaml": head + "  db: " + v + "\n"}
		},
		want: []Finding{{Rule: "kubernetes-secret-yaml", File: "k8s/secret.yaml", Line: 2}},
	},
}

// utf16Text is s in UTF-16 as a Windows tool writes a text file: little-endian with a BOM, or
// big-endian without.
func utf16Text(s string, bigEndian bool) string {
	var b []byte
	if !bigEndian {
		b = []byte{0xff, 0xfe}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			b = binary.BigEndian.AppendUint16(b, u)
		} else {
			b = binary.LittleEndian.AppendUint16(b, u)
		}
	}
	return string(b)
}

func init() {
	walkArounds = append(walkArounds,
		// Class 4: a key in a text the rules cannot read as bytes: UTF-16, which GitHub shows as
		// text to whoever opens the file. Published before: the rules read a NUL beside every
		// character.
		walkAround{
			name: "Encoding/UTF16LittleEndianWithBOM",
			files: func(t *testing.T) (map[string]string, map[string]string) {
				return readme, map[string]string{"deploy/settings.ps1.out": utf16Text("# settings\r\n\r\n$env:GITHUB=\""+githubToken(t)+"\"\r\n", false)}
			},
			want: []Finding{{Rule: "github-pat", File: "deploy/settings.ps1.out", Line: 3}},
		},
		walkAround{
			name: "Encoding/UTF16BigEndian",
			files: func(t *testing.T) (map[string]string, map[string]string) {
				return readme, map[string]string{"notes.txt": utf16Text("GITHUB="+githubToken(t)+"\n", true)}
			},
			want: []Finding{{Rule: "github-pat", File: "notes.txt", Line: 1}},
		},
		walkAround{
			// A whole private key, in UTF-16 with CRLF line ends, inside a binary file.
			name: "Encoding/UTF16PrivateKeyInABinary",
			files: func(t *testing.T) (map[string]string, map[string]string) {
				kind := "RSA " + "PRIVATE KEY"
				key := pemLine(kind, "BEGIN") + "\r\n" + strings.Join(pemBody(t, 240), "\r\n") + "\r\n" + pemLine(kind, "END") + "\r\n"
				return readme, map[string]string{"assets/blob.bin": "\x00\x01\x02\xff\n" + utf16Text(key, false)[2:] + "\x00\xfe\x03"}
			},
			want: []Finding{{Rule: "private-key", File: "assets/blob.bin", Line: 2}},
		},
		// Class 5: a name the patch chose that a report or a path check could misread: each is
		// found under its own name.
		walkAround{
			name: "Name/Space",
			files: func(t *testing.T) (map[string]string, map[string]string) {
				return readme, map[string]string{"deploy/my creds.txt": "GITHUB=" + githubToken(t) + "\n"}
			},
			want: []Finding{{Rule: "github-pat", File: "deploy/my creds.txt", Line: 1}},
		},
		walkAround{
			name: "Name/QuotesTabNonASCII",
			files: func(t *testing.T) (map[string]string, map[string]string) {
				return readme, map[string]string{"dé\"p'l\toy/k.txt": "GITHUB=" + githubToken(t) + "\n"}
			},
			want: []Finding{{Rule: "github-pat", File: "dé\"p'l\toy/k.txt", Line: 1}},
		},
		walkAround{
			name: "Name/Newline",
			files: func(t *testing.T) (map[string]string, map[string]string) {
				return readme, map[string]string{"a\nb.txt": "GITHUB=" + githubToken(t) + "\n"}
			},
			want: []Finding{{Rule: "github-pat", File: "a\nb.txt", Line: 1}},
		},
		walkAround{
			// gitleaks skips the file it read its configuration from: the patch's own
			// .gitleaks.toml and .gitleaksignore are scanned like any file.
			name: "Name/GitleaksOwnFiles",
			files: func(t *testing.T) (map[string]string, map[string]string) {
				return readme, map[string]string{".gitleaks.toml": "# GITHUB=" + githubToken(t) + "\n", ".gitleaksignore": "GITHUB=" + githubToken(t) + "\n"}
			},
			want: []Finding{{Rule: "github-pat", File: ".gitleaks.toml", Line: 1}, {Rule: "github-pat", File: ".gitleaksignore", Line: 1}},
		},
		walkAround{
			// A lone CR ends no line for git nor gitleaks: the key is on line 1.
			name: "LineEnds/CR",
			files: func(t *testing.T) (map[string]string, map[string]string) {
				return readme, map[string]string{"mac.txt": "x\rGITHUB=" + githubToken(t) + "\r"}
			},
			want: []Finding{{Rule: "github-pat", File: "mac.txt", Line: 1}},
		},
	)
}

// TestWalkAroundsAreFound: each walk-around of walkArounds is found, and refuses the patch.
// Every one of them was published before (the per-hunk scan with gitleaks' rule allow-lists):
// run this file against that scan and each subtest fails.
func TestWalkAroundsAreFound(t *testing.T) {
	t.Parallel()
	for _, w := range walkArounds {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			base, files := w.files(t)
			b := setup(t, base)
			got := b.scan(t, b.change(t, files))
			if !reflect.DeepEqual(got, w.want) {
				t.Fatalf("findings: got %v, want %v", got, w.want)
			}
		})
	}
}
