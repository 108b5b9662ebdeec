package egress

import (
	"slices"
	"strings"
)

// Advice is one thing to do so that the next run has what this one lacked.
type Advice struct {
	// Ecosystem is Python, Go, Node, Rust, System, Files or a toolchain of the tables; "" for a
	// missing command no table knows.
	Ecosystem string
	// NotFound is the missing command this advice is for ("" when it is for network use): a
	// program name the model ran (commandName's characters only), shown as code.
	NotFound string
	// Why says what in the run and the base commit points here. It is built from this
	// package's own words, program names of its tables and file names of Manifests only, never
	// from the model's text, so it can be shown as it is.
	Why string
	// Setup is a .frognano/setup.sh snippet, one of docs/environments.md's examples (the test
	// TestSnippetsAreTheDocumentedOnes keeps them the same); "" when there is none.
	Setup string
	// Image says to map the repository to an image that has the toolchain
	// (FROGNANO_SANDBOX_IMAGES, the operator's setting).
	Image bool
	// Hint is one more sentence of this package's own (Markdown), when the snippet needs a word.
	Hint string
	// SetupExists is whether the base commit already has .frognano/setup.sh (then: add to it).
	SetupExists bool
}

// Manifests are the files at the root of a repository that name its ecosystem.
var Manifests = []string{"requirements.txt", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "go.mod", "package.json", "Cargo.toml"}

var manifestEcosystem = map[string]string{
	"requirements.txt": Python, "pyproject.toml": Python, "setup.py": Python, "setup.cfg": Python, "Pipfile": Python,
	"go.mod": Go, "package.json": Node, "Cargo.toml": Rust,
}

// Snippets are docs/environments.md's examples of .frognano/setup.sh, byte for byte.
var Snippets = map[string]string{
	Python: `# Python (the default image has pip; installing into its system Python is allowed).
# With .frognano/setup-inputs listing requirements.txt, setup sees only that file and the
# environment is reused until it changes.
set -eu
python3 -m pip install --no-cache-dir -r requirements.txt
# pip install -e . needs the package's own files (setup.py, pyproject.toml, its sources): list
# them in .frognano/setup-inputs, or list nothing and setup sees the whole base commit (and runs
# again for each new one). The link points at /workspace, where every sandbox has the checkout.
`,
	Go: `# Go (a Go image, e.g. FROGNANO_SANDBOX_IMAGES=acme/api=frognano-sandbox-go:test; that image sets
# GOPROXY=off, so give setup your module proxy: FROGNANO_SETUP_ENV="GOPROXY=https://…")
set -eu
export GOMODCACHE=/opt/gomodcache
go mod download
echo "GOMODCACHE=$GOMODCACHE" >> "$FROGNANO_ENV"   # the offline sandboxes read the modules there
`,
	Node: `# Node (Debian's Node on the default image; drop the apt-get line on an image that has Node)
set -eu
apt-get update && apt-get install -y --no-install-recommends nodejs npm
npm ci
# /workspace is not kept: put node_modules at the root, where Node looks after the checkout's
# own folders (and npm puts /node_modules/.bin on the PATH of package scripts). The root
# filesystem is read-only in the sandboxes: tools that write into node_modules/.cache fail there.
if [ -d node_modules ]; then mv node_modules /node_modules; fi
`,
	Rust: `# Rust (Debian's cargo, Rust 1.63, on the default image; drop the apt-get line on a Rust image)
set -eu
apt-get update && apt-get install -y --no-install-recommends cargo
cargo vendor --locked /opt/cargo-vendor > /dev/null   # needs a committed Cargo.lock
# Cargo reads /.cargo/config.toml for any project under /: use the vendored crates, offline.
# The sandboxes' CARGO_HOME is /tmp/.cargo (HOME=/tmp); target/ is built in /workspace.
mkdir -p /.cargo
printf '[source.crates-io]\nreplace-with = "vendored"\n[source.vendored]\ndirectory = "/opt/cargo-vendor"\n[net]\noffline = true\n' > /.cargo/config.toml
`,
}

// advise picks what to do: an image (or setup's install) for each missing toolchain, then a
// setup snippet for each ecosystem whose package manager or fetcher tried the network, or, when
// the tries came from no command it knows, for the ecosystems the base commit's files name.
func advise(r *Report, in Input) []Advice {
	var out []Advice
	has := func(eco string) bool {
		return slices.ContainsFunc(out, func(a Advice) bool { return a.Ecosystem == eco })
	}
	for _, m := range r.Missing {
		if m.Toolchain != "" && has(m.Toolchain) {
			continue
		}
		a := Advice{Ecosystem: m.Toolchain, NotFound: m.Command, Image: true, Setup: Snippets[m.Toolchain], SetupExists: in.HasSetup,
			Why: "was not found in the sandbox"}
		if a.Setup == "" {
			a.Hint = "Or install it in `.frognano/setup.sh`, which runs as root with network before the model (Debian's packages with `apt-get`)."
		}
		out = append(out, a)
	}
	if !r.Attempted() {
		return out
	}
	byEco := map[string][]string{} // ecosystem: the tools that tried, in order
	var ecos []string
	for _, c := range r.Calls {
		eco, ok := tools[c.Tool]
		if !ok || (c.Lookups == 0 && c.NoRoute == 0) {
			continue
		}
		if _, seen := byEco[eco]; !seen {
			ecos = append(ecos, eco)
		}
		if !slices.Contains(byEco[eco], c.Tool) {
			byEco[eco] = append(byEco[eco], c.Tool)
		}
	}
	why := map[string]string{}
	for _, eco := range ecos {
		why[eco] = strings.Join(byEco[eco], ", ") + " tried to reach the network"
	}
	for _, f := range in.Files {
		eco, ok := manifestEcosystem[f]
		if !ok {
			continue
		}
		if len(byEco) == 0 && !slices.Contains(ecos, eco) {
			ecos = append(ecos, eco) // the tries came from no command we know: the files tell
		}
		if slices.Contains(ecos, eco) && !strings.Contains(why[eco], "the repository has") {
			why[eco] = strings.TrimPrefix(why[eco]+"; the repository has "+f, "; ")
		}
	}
	// A try from a command no table names, and no file that names an ecosystem: the way to
	// give a run what it downloads is still setup.
	if len(ecos) == 0 {
		ecos, why[Files] = []string{Files}, "a command tried to reach the network"
	}
	for _, eco := range ecos {
		if has(eco) {
			continue
		}
		a := Advice{Ecosystem: eco, Why: why[eco], Setup: Snippets[eco], SetupExists: in.HasSetup}
		switch eco {
		case Python:
			if !slices.Contains(in.Files, "requirements.txt") && slices.ContainsFunc(in.Files, func(f string) bool { return manifestEcosystem[f] == Python }) {
				a.Hint = "The repository has no `requirements.txt`: install the package itself as the snippet's last comment says (`pip install -e .`, with its files listed in `.frognano/setup-inputs`)."
			}
		case Go:
			a.Image = true
			a.Hint = "The default image has no Go: map the repository to a Go image first (`deploy/sandbox/Dockerfile.go-example` shows one)."
		case System:
			a.Hint = "Install system packages in `.frognano/setup.sh`, which runs as root with network before the model: `apt-get update && apt-get install -y --no-install-recommends PACKAGE`."
		case Files:
			a.Hint = "Download what the tests need in `.frognano/setup.sh`, which runs with network before the model, and put it outside `/workspace` (under `/opt`, say): what setup writes in `/workspace` is dropped."
		}
		out = append(out, a)
	}
	return out
}
