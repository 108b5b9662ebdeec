package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"

	"github.com/frognano/frognano/runner/sandbox"
)

// scanDockerfile makes the image's additions, as an operator adds scanners to a sandbox image
// (docs/environments.md): testdata/scanners/fake-sast, a tiny SAST tool, installed as itself
// and under the names of two tools frognano knows (semgrep, which runs no code of the
// repository, and pylint, which does), and as the Python module bandit (so that
// `python3 -m bandit` runs it).
const scanDockerfile = "FROM %s\n" +
	"COPY fake-sast /usr/local/bin/fake-sast\n" +
	"COPY bandit-main.py /usr/lib/python3/dist-packages/bandit/__main__.py\n" +
	"COPY empty /usr/lib/python3/dist-packages/bandit/__init__.py\n" +
	"USER root\n" +
	"RUN ln -s fake-sast /usr/local/bin/semgrep && ln -s fake-sast /usr/local/bin/pylint\n" +
	"USER 1000:1000\n"

var scanImages struct {
	sync.Mutex
	tags map[string]string // by the folder of testdata
}

// ScanImage returns the sandbox image with the fake scanners added (scanDockerfile), building
// it once per test binary, offline (no pull, no network), with the classic builder. Its tag
// names its content (the sandbox image's id and the files), so test binaries of different
// versions running at once never use each other's. testdata is the repository's testdata
// folder as the test's package sees it ("../testdata").
func ScanImage(t testing.TB, docker *client.Client, testdata string) string {
	t.Helper()
	scanImages.Lock()
	defer scanImages.Unlock()
	if tag := scanImages.tags[testdata]; tag != "" {
		return tag
	}
	script, err := os.ReadFile(filepath.Join(testdata, "scanners", "fake-sast"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := docker.ImageInspect(context.Background(), sandbox.DefaultImage)
	if err != nil {
		t.Fatalf("inspecting %s: %v", sandbox.DefaultImage, err)
	}
	files := map[string]file{
		"Dockerfile":     {0o644, []byte(fmt.Sprintf(scanDockerfile, sandbox.DefaultImage))},
		"fake-sast":      {0o755, script},
		"bandit-main.py": {0o644, []byte("import runpy\nrunpy.run_path('/usr/local/bin/fake-sast', run_name='__main__')\n")},
		"empty":          {0o644, nil},
	}
	h := sha256.New()
	h.Write([]byte(base.ID))
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "\x00%s\x00%o\x00%d\x00", n, files[n].mode, len(files[n].body))
		h.Write(files[n].body)
	}
	tag := "frognano-sandbox-scan:" + hex.EncodeToString(h.Sum(nil))[:12]
	if _, err := docker.ImageInspect(context.Background(), tag); err != nil {
		if err := derive(context.Background(), docker, tag, names, files); err != nil {
			t.Fatalf("building %s from %s: %v", tag, sandbox.DefaultImage, err)
		}
	}
	if scanImages.tags == nil {
		scanImages.tags = map[string]string{}
	}
	scanImages.tags[testdata] = tag
	return tag
}

type file struct {
	mode int64
	body []byte
}

// derive builds tag from a context of files.
func derive(ctx context.Context, docker *client.Client, tag string, names []string, files map[string]file) error {
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	for _, n := range names {
		f := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: f.mode, Size: int64(len(f.body))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	resp, err := docker.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{
		Tags: []string{tag}, Remove: true, ForceRemove: true, NetworkMode: "none",
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// The engine streams JSON messages; a failed step is one with an error.
	dec := json.NewDecoder(resp.Body)
	for {
		var m struct{ Error string }
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
	}
}
