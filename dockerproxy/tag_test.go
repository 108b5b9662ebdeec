package dockerproxy_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
)

// TestTagFormBody is an attack by a compromised service on the one tag the proxy allows:
// the query says frognano-env:TAG, and a form-encoded body says another name. The engine reads
// its parameters with Go's ParseForm, where a POST body's form values come before the query's,
// so the environment image (which a repository's setup script wrote) would be tagged with any
// name, the operator's sandbox image's among them. Nothing but frognano-env tags may appear.
func TestTagFormBody(t *testing.T) {
	t.Parallel()
	b := setup(t, "review-"+randHex(t, 4))
	ctx := context.Background()
	suffix := randHex(t, 6)
	envRef := "frognano-env:review-" + suffix
	victim := "fnproxy-review-victim:" + suffix

	// An environment image, as runner/env commits one.
	ccfg, hcfg := sandboxConfig(b.labels(t))
	c, err := b.engine.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	b.remove(t, c.ID)
	committed, err := b.engine.ContainerCommit(ctx, c.ID, container.CommitOptions{
		Reference: envRef, Config: &container.Config{Labels: map[string]string{"dev.frognano.env": "1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, ref := range []string{victim, envRef, envRef + "-ok", committed.ID} {
			if _, err := b.engine.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
				t.Logf("removing %s: %v", ref, err)
			}
		}
	})

	req, err := http.NewRequest("POST", "http://docker/v1.41/images/"+envRef+"/tag?repo=frognano-env&tag=review-"+suffix+"-ok",
		strings.NewReader("repo=fnproxy-review-victim&tag="+suffix))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if _, err := b.engine.ImageInspect(ctx, victim); err == nil {
		t.Fatalf("the environment image was tagged %s through the proxy (answer %d %s)", victim, resp.StatusCode, body)
	}
	// What the query asked is what the engine did, or nothing.
	if resp.StatusCode/100 == 2 {
		if _, err := b.engine.ImageInspect(ctx, envRef+"-ok"); err != nil {
			t.Errorf("the proxy answered %d but %s-ok does not exist: %v", resp.StatusCode, envRef, err)
		}
	}
}
