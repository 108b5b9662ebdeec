package verify

import "strings"

// Report formats a Plan can ask for.
const (
	FormatGoJSON = "gojson" // `go test -json` events on standard output
	FormatJUnit  = "junit"  // a JUnit XML file written by pytest
	// FormatUnittest is the status lines `python3 -m unittest -v` prints, read from the output.
	FormatUnittest = "unittest"
)

// JUnitPath is where pytest writes its report inside the sandbox; the caller reads it
// back after the run (it lives in the sandbox's /tmp, outside the repository, so it
// never ends up in the patch).
const JUnitPath = "/tmp/frognano-junit.xml"

// Plan is how a test command is run so that its results can be read per test.
type Plan struct {
	// Display is the command as the user or Detect wrote it, for reports.
	Display string
	// Shell is what runs in the sandbox (through bash -lc).
	Shell string
	// ReportFile is a file the caller reads back after the run, when Format needs one.
	ReportFile string
	// Format is FormatGoJSON, FormatJUnit, FormatUnittest or "" (exit code only).
	Format string
}

// PlanFor turns a command into a Plan. Only simple commands are rewritten: "go test
// ARGS" gains -json, a pytest command gains --junitxml, "python3 -m unittest ARGS" gains
// -v (last, so that it also wins over a -q, and after "discover" whose own options
// follow it; the test names are still the user's). A command with shell syntax
// (pipes, &&, ;, redirections, substitutions) or any other tool runs as is and is
// judged by its exit code only.
func PlanFor(cmd string) Plan {
	cmd = strings.TrimSpace(cmd)
	p := Plan{Display: cmd, Shell: cmd}
	if cmd == "" || strings.ContainsAny(cmd, "|&;<>()$`\\\"'\n*?[]{}~#") {
		return p
	}
	f := strings.Fields(cmd)
	switch {
	case len(f) >= 2 && f[0] == "go" && f[1] == "test":
		for _, a := range f[2:] {
			if a == "-json" || a == "--json" || strings.HasPrefix(a, "-json=") || a == "-c" || a == "-list" ||
				strings.HasPrefix(a, "-list=") {
				return p
			}
		}
		p.Shell = "go test -json " + strings.Join(f[2:], " ")
		p.Shell = strings.TrimSpace(p.Shell)
		p.Format = FormatGoJSON
	case isPytestCmd(f):
		// Remove a report left by an earlier run first, so that a run that dies
		// before writing one is not judged by the old one. "&&" keeps pytest's exit code.
		p.Shell = "rm -f " + JUnitPath + " && " + strings.Join(f, " ") + " --junitxml=" + JUnitPath
		p.ReportFile = JUnitPath
		p.Format = FormatJUnit
	case isPythonModuleCmd(f, "unittest"):
		p.Shell = strings.Join(f, " ") + " -v"
		p.Format = FormatUnittest
	}
	return p
}

func isPytestCmd(f []string) bool {
	switch {
	case f[0] == "pytest" || f[0] == "py.test":
		return true
	}
	return isPythonModuleCmd(f, "pytest")
}

// isPythonModuleCmd matches "python3 -m MODULE ..." (python, python3 or python3.N).
func isPythonModuleCmd(f []string, module string) bool {
	return len(f) >= 3 && (f[0] == "python" || f[0] == "python3" || strings.HasPrefix(f[0], "python3.")) &&
		f[1] == "-m" && f[2] == module
}
