package secrets

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/secrettest"
)

// k8sValue is a made-up value of a Kubernetes Secret's data (base64 of 24 random letters).
func k8sValue(t *testing.T) string {
	return base64.StdEncoding.EncodeToString([]byte(secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 24)))
}

const k8sHead = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n"

// TestValueBehindAnotherIsFound: gitleaks' Kubernetes Secret rule takes the first entry of the
// data, and reads on after its match: a value written after another was in no match. So an entry
// the patch wrote first (a placeholder, a Helm template) or one the base already held let a new
// value after it through, listed as a placeholder or as the base's. The scan reads the file
// again with what it found blanked, until nothing new comes: the new value refuses the patch.
// Each case was published before.
func TestValueBehindAnotherIsFound(t *testing.T) {
	t.Parallel()
	held := k8sValue(t)
	for _, tc := range []struct {
		name, base, first string
		want              Allowance // what the first entry is judged
	}{
		{"EmptyPlaceholder", "", `note: ""`, PlaceholderRule},
		{"HelmTemplate", "", "note: {{ .Values.note | b64enc }}", PlaceholderRule},
		{"ValueTheBaseHeld", k8sHead + "  db: " + held + "\n", "db: " + held, InBase},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"README.md": "x\n"}
			if tc.base != "" {
				files["k8s/secret.yaml"] = tc.base
			}
			b := setup(t, files)
			v := k8sValue(t)
			res := b.result(t, b.change(t, map[string]string{"k8s/secret.yaml": k8sHead + "  " + tc.first + "\n  db2: " + v + "\n"}))
			if len(res.Findings) != 1 || res.Findings[0].Rule != "kubernetes-secret-yaml" {
				t.Errorf("findings %v (allowed %v): want the new value found by kubernetes-secret-yaml", res.Findings, res.Allowed)
			}
			if len(res.Allowed) != 1 || res.Allowed[0].Allowed != tc.want {
				t.Errorf("allowed %v: want the first entry, %s", res.Allowed, tc.want)
			}
			// Redact, for what the run shows: the value goes whatever stands before it.
			if out := Redact("$ cat k8s/secret.yaml\n" + k8sHead + "  " + tc.first + "\n  db2: " + v + "\n"); strings.Contains(out, v) {
				t.Errorf("Redact left the value in clear:\n%s", out)
			}
		})
	}
	t.Run("AValueBehindAValue", func(t *testing.T) {
		t.Parallel()
		v1, v2 := k8sValue(t), k8sValue(t)
		out := Redact(k8sHead + "  a: " + v1 + "\n  b: " + v2 + "\n")
		if strings.Contains(out, v1) || strings.Contains(out, v2) {
			t.Errorf("Redact left a value in clear:\n%s", out)
		}
	})
	t.Run("PlaceholdersStay", func(t *testing.T) {
		t.Parallel()
		in := k8sHead + "  a: \"\"\n  b: {{ .Values.b }}\n"
		if out := Redact(in); out != in {
			t.Errorf("Redact changed placeholders:\n%s", out)
		}
	})
}
