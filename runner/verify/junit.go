package verify

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// readJUnit reads per-test results from a JUnit XML report as pytest writes it:
// <testcase classname="pkg.module.Class" name="test_x[param]"> with an optional
// <failure>, <error> or <skipped> child. Keys are "classname.name" (or just name).
// A testcase listed more than once keeps its worst result. It returns nil when the
// report is missing, too large, not well-formed XML, or carries a DOCTYPE (the report
// is untrusted; entity tricks are refused outright rather than bounded).
func readJUnit(report []byte) map[string]Status {
	if len(report) == 0 || len(report) > maxReportBytes {
		return nil
	}
	tests, err := parseJUnit(report)
	if err != nil {
		return nil
	}
	return tests
}

var errDoctype = errors.New("junit report has a DOCTYPE or ENTITY declaration")

func parseJUnit(report []byte) (map[string]Status, error) {
	dec := xml.NewDecoder(bytes.NewReader(report))
	dec.Strict = true
	tests := map[string]Status{}
	var (
		inCase bool
		key    string
		status Status
		suites int
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.Directive:
			d := strings.ToUpper(strings.TrimSpace(string(t)))
			if strings.HasPrefix(d, "DOCTYPE") || strings.HasPrefix(d, "ENTITY") {
				return nil, errDoctype
			}
		case xml.StartElement:
			switch t.Name.Local {
			case "testsuite", "testsuites":
				suites++
			case "testcase":
				inCase, status = true, Pass
				key = caseKey(attr(t, "classname"), attr(t, "name"))
			case "failure", "error":
				if inCase {
					status = worse(status, Fail)
				}
			case "skipped":
				if inCase {
					status = worse(status, Skip)
				}
			}
		case xml.EndElement:
			if t.Name.Local == "testcase" && inCase {
				if key != "" {
					record(tests, key, status)
				}
				inCase = false
			}
		}
	}
	if suites == 0 {
		return nil, errors.New("junit report has no testsuite element")
	}
	return tests, nil
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func caseKey(classname, name string) string {
	switch {
	case classname == "":
		return name
	case name == "":
		return classname
	}
	return classname + "." + name
}
