// Package dockertest is the TestMain of the test binaries that run sandboxes on the real
// Docker engine (runner, runner/env, runner/sandbox): one Docker client for the whole binary,
// the images its tests need checked before any test starts (a missing image fails the binary
// with how to build it, instead of every test failing its own way), and, when asked, the
// frognano-executor the sandboxes run, built from this module the way the images build it;
// and the sandbox image with the fake scanners of testdata/scanners added (ScanImage), which
// the runner's and frognano run's scanner tests share.
//
// It is imported only from _test.go files: nothing in frognano's programs may depend on it.
package dockertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/docker/docker/client"

	"github.com/frognano/frognano/internal/buildtest"
	"github.com/frognano/frognano/runner/sandbox"
)

// BuildHint is how to build the images the tests need.
const BuildHint = "build them with: make sandbox-image (deploy/sandbox/build-offline.sh --go)"

// Options says what a test binary needs.
type Options struct {
	// Tests names the binary's tests in the messages ("the sandbox tests").
	Tests string
	// Images are the images to check besides sandbox.DefaultImage.
	Images []string
	// Executor builds cmd/frognano-executor into a temporary folder (Env.Executor).
	Executor bool
}

// Env is what Main hands the tests.
type Env struct {
	Docker   *client.Client
	Executor string // the static frognano-executor's path; "" unless Options.Executor
}

// Main is a test binary's TestMain: it connects to the Docker engine, checks the images, builds
// the executor if asked, hands all that to ready (which keeps it in the package's variables
// and may set up more), runs the tests, then closes the client, removes the executor and exits
// with the tests' code. Any failure before the tests exits 1 with a message on stderr.
func Main(m *testing.M, o Options, ready func(Env)) {
	os.Exit(run(m, o, ready))
}

func run(m *testing.M, o Options, ready func(Env)) int {
	docker, err := sandbox.NewClient()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %s need a Docker engine: %v\n", o.Tests, err)
		return 1
	}
	defer docker.Close()
	for _, img := range append([]string{sandbox.DefaultImage}, o.Images...) {
		if _, err := docker.ImageInspect(context.Background(), img); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: image %s is missing (%v); %s\n", img, err, BuildHint)
			return 1
		}
	}
	e := Env{Docker: docker}
	if o.Executor {
		dir, err := os.MkdirTemp("", "dockertest-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		e.Executor = filepath.Join(dir, "frognano-executor")
		if err := buildtest.Static(e.Executor, "github.com/frognano/frognano/cmd/frognano-executor"); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
	}
	ready(e)
	return m.Run()
}
