package compose

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// built holds the images this test binary built: the service and PostgreSQL, tagged for this
// run alone (several test runs may share one engine; the layers stay cached) and built once
// for every test that needs them. TestMain removes them.
var built struct {
	once      sync.Once
	image, pg string
	out       string
	err       error
}

// testImages builds (once per test binary) the service image and the PostgreSQL image with
// build-images.sh and returns their tags.
func testImages(t *testing.T) (image, pg string) {
	t.Helper()
	built.once.Do(func() {
		tag := "test-" + randHex(t, 4)
		built.image, built.pg = "frognano:"+tag, "frognano-postgres:"+tag
		env := []string{"FROGNANO_IMAGE=" + built.image, "FROGNANO_POSTGRES_IMAGE=" + built.pg}
		built.out, built.err = command(t, env, 15*time.Minute, "deploy/compose/build-images.sh")
	})
	if built.err != nil {
		t.Fatalf("building the images (run deploy/sandbox/build-offline.sh --go first): %v\n%s", built.err, built.out)
	}
	return built.image, built.pg
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.image != "" {
		if out, err := exec.Command("docker", "rmi", built.image, built.pg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "removing the test's images: %v %s\n", err, out)
		}
	}
	os.Exit(code)
}
