package envtest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Wheel builds a pure-Python wheel of project at version holding files (path in the wheel →
// content), with its METADATA, WHEEL and RECORD, and returns its file name and bytes.
func Wheel(project, version string, files map[string]string) (string, []byte) {
	dist := strings.ReplaceAll(project, "-", "_")
	info := fmt.Sprintf("%s-%s.dist-info", dist, version)
	all := map[string]string{}
	for k, v := range files {
		all[k] = v
	}
	all[info+"/METADATA"] = fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", project, version)
	all[info+"/WHEEL"] = "Wheel-Version: 1.0\nGenerator: frognano-envtest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	var record strings.Builder
	for _, n := range names {
		sum := sha256.Sum256([]byte(all[n]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(all[n]))
	}
	record.WriteString(info + "/RECORD,,\n")
	all[info+"/RECORD"] = record.String()
	names = append(names, info+"/RECORD")

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			panic(err) // writing to memory
		}
		_, _ = w.Write([]byte(all[n]))
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%s-%s-py3-none-any.whl", dist, version), buf.Bytes()
}

var pep503Norm = regexp.MustCompile(`[-_.]+`)

// SimpleIndex lays out a PEP 503 simple repository for the given wheels (file name → bytes) of
// project: /simple/ lists the project, /simple/NAME/ links each file with its sha256, and the
// files are under /packages/. Give the result to NewServer; pip's index URL is then
// URL()+"/simple/".
func SimpleIndex(project string, wheels map[string][]byte) map[string][]byte {
	norm := strings.ToLower(pep503Norm.ReplaceAllString(project, "-"))
	files := map[string][]byte{
		"simple/index.html": fmt.Appendf(nil, "<!DOCTYPE html>\n<html><body>\n<a href=\"%s/\">%s</a>\n</body></html>\n", norm, norm),
	}
	var links strings.Builder
	names := make([]string, 0, len(wheels))
	for n := range wheels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sum := sha256.Sum256(wheels[n])
		fmt.Fprintf(&links, "<a href=\"../../packages/%s#sha256=%s\">%s</a>\n", n, hex.EncodeToString(sum[:]), n)
		files["packages/"+n] = wheels[n]
	}
	files["simple/"+norm+"/index.html"] = fmt.Appendf(nil, "<!DOCTYPE html>\n<html><body>\n%s</body></html>\n", links.String())
	return files
}

// GoProxyFiles lays out a GOPROXY tree (the module proxy protocol: PATH/@v/list,
// PATH/@v/VERSION.info, .mod and .zip) for the given module@version pairs, copied from the
// download cache of modCache (a GOMODCACHE). Each module must be fully in that cache; a
// test downloads it there beforehand (through the Go module proxy, at test preparation).
func GoProxyFiles(modCache string, mods ...string) (map[string][]byte, error) {
	files := map[string][]byte{}
	versions := map[string][]string{}
	for _, mv := range mods {
		p, v, ok := strings.Cut(mv, "@")
		if !ok {
			return nil, fmt.Errorf("%q is not module@version", mv)
		}
		ep, ev := escapeModule(p), escapeModule(v)
		for _, ext := range []string{".info", ".mod", ".zip"} {
			b, err := os.ReadFile(filepath.Join(modCache, "cache", "download", filepath.FromSlash(ep), "@v", ev+ext))
			if err != nil {
				return nil, fmt.Errorf("module %s is not in the module cache %s: %w", mv, modCache, err)
			}
			files[ep+"/@v/"+ev+ext] = b
		}
		versions[ep] = append(versions[ep], v)
	}
	for ep, vs := range versions {
		sort.Strings(vs)
		files[ep+"/@v/list"] = []byte(strings.Join(vs, "\n") + "\n")
	}
	return files, nil
}

// escapeModule is the module cache's and proxy protocol's case encoding: each upper-case
// letter becomes '!' and its lower-case form.
func escapeModule(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
