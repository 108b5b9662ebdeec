package report

import (
	"strings"
	"testing"
)

// TestSettingWords: every place check/deps reads an index from is said in words for what it
// does, never the catch-all, so that a new index in uv.toml, [tool.pdm], pdm.toml, poetry.toml
// or .npmrc reads like pip's --extra-index-url.
func TestSettingWords(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"--index-url": "replaces the package index", "uv.toml.index-url": "replaces the package index",
		"tool.uv.pip.index-url": "replaces the package index", "pypi.url": "replaces the package index", "registry": "replaces the package index",
		"uv.toml.extra-index-url": "adds a package index", "uv.toml.index": "adds a package index", "tool.pdm.source": "adds a package index",
		"pypi.extra.url": "adds a package index", "repositories.private.url": "adds a package index",
		"@acme:registry": "replaces the registry of the scope", "strict-ssl": "stops checking", "tool.pdm.source verify_ssl": "stops checking",
		"tool.uv.allow-insecure-host": "trusts this host", "tool.uv.index-strategy": "lets any index answer",
		"uv.toml.python-install-mirror": "changes where uv downloads Python",
	} {
		if got := settingWords(name); !strings.HasPrefix(got, want) {
			t.Errorf("settingWords(%q) = %q, want %q...", name, got, want)
		}
	}
}
