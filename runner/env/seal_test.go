package env_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/secrettest"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

// madeUpValue is an operator's setup value made at run time, with characters that base64's two
// alphabets, URL-encoding and JSON each spell their own way.
func madeUpValue(t testing.TB) string {
	return "mirror/" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 24) + "+k=v&x"
}

// TestSetupThatLeavesAValueIsNotSealed is issue 28's "prevent rather than chase": a setup
// script that leaves the operator's value (FROGNANO_SETUP_ENV) in the environment, by each of
// the ways below, gets no environment. The build fails like a failed setup, the reason names
// the file (or the variable) and the form and never the value, says how to fix it, and no
// image is committed, so no run and no cache ever uses it. Before, each of these environments
// was built and used, and the model read the value.
func TestSetupThatLeavesAValueIsNotSealed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		want   []string // in the reason
	}{
		{"RawInEtc", `printf 'token=%s\n' "$MIRROR_TOKEN" > /etc/mirror.conf`,
			[]string{`"/etc/mirror.conf" holds the value of MIRROR_TOKEN, as is`}},
		{"Base64InADotfile", `printf 'export T=%s\n' "$(printf 'x%s' "$MIRROR_TOKEN" | base64 -w0)" > /root/.mirrorrc`,
			[]string{`"/root/.mirrorrc" holds the value of MIRROR_TOKEN, base64-encoded`}},
		{"Hex", `printf '%s' "$MIRROR_TOKEN" | od -An -tx1 -v | tr -d ' \n' > /opt/token.hex`,
			[]string{`"/opt/token.hex" holds the value of MIRROR_TOKEN, hex-encoded`}},
		{"URLEncoded", `mkdir -p /usr/local/etc
python3 -c 'import os, urllib.parse; print("index=https://m.invalid/?t=" + urllib.parse.quote_plus(os.environ["MIRROR_TOKEN"]))' > /usr/local/etc/pip-url.conf`,
			[]string{`"/usr/local/etc/pip-url.conf" holds the value of MIRROR_TOKEN, URL-encoded`}},
		{"NULBytes", `mkdir -p /var/lib/mirror && printf 'a\0b%s\0' "$MIRROR_TOKEN" > /var/lib/mirror/blob.bin`,
			[]string{`"/var/lib/mirror/blob.bin" holds the value of MIRROR_TOKEN, as is`}},
		{"Mode000RootFile", `mkdir -p /srv/locked && printf '%s' "$MIRROR_TOKEN" > /srv/locked/key && chmod 000 /srv/locked/key /srv/locked`,
			[]string{`"/srv/locked/key" holds the value of MIRROR_TOKEN, as is`}},
		{"ExportedToFrognanoEnv", `echo "MIRROR=$MIRROR_TOKEN" >> "$FROGNANO_ENV"`,
			[]string{`$FROGNANO_ENV sets MIRROR to what holds the value of MIRROR_TOKEN, as is`}},
		{"HardLink", `printf '%s' "$MIRROR_TOKEN" > /opt/a.key && mkdir -p /usr/share/mirror && ln /opt/a.key /usr/share/mirror/b.key`,
			[]string{`"/opt/a.key" holds`, `"/usr/share/mirror/b.key" holds`}},
		// A process setup leaves behind keeps the value in the file and puts clean text there
		// whenever it sees a check running, and puts the value back after: it is gone before
		// the check starts (the container is stopped with SIGKILL and nothing of setup runs
		// when it starts again), so the file is read as the image will hold it.
		{"LeftoverProcessRewritesTheFile", `cat > /usr/local/bin/keeper <<'EOS'
#!/bin/bash
trap '' TERM INT HUP
while :; do
  hide=
  for c in /proc/[0-9]*/cmdline; do
    case "$(tr '\0' ' ' < "$c" 2>/dev/null)" in *" -seal"*) hide=1;; esac
  done
  if [ -n "$hide" ]; then printf 'clean\n' > /etc/keeper.tmp; else printf 'token=%s\n' "$MIRROR_TOKEN" > /etc/keeper.tmp; fi
  mv -f /etc/keeper.tmp /etc/keeper.conf
  sleep 0.05
done
EOS
chmod 755 /usr/local/bin/keeper
printf 'token=%s\n' "$MIRROR_TOKEN" > /etc/keeper.conf
setsid /usr/local/bin/keeper > /dev/null 2>&1 < /dev/null &
sleep 1`, []string{`"/etc/keeper.conf" holds the value of MIRROR_TOKEN, as is`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			value := madeUpValue(t)
			dir, head := gittest.Repo(t, map[string]string{env.ScriptFile: "set -eu\n" + tt.script + "\necho setup done\n"})
			m := manager(t, env.Config{Network: env.NoNetwork, Env: []string{"MIRROR_TOKEN=" + value, "CI=true"}}, "")
			var progress strings.Builder
			req := env.Request{RunID: "envtest-seal", RepoDir: dir, Commit: head, Scope: scopeOf(t, dir), Sandbox: sandboxConfig(t),
				Progress: func(l string) { progress.WriteString(l + "\n") }}
			e, err := m.Prepare(ctx, req)
			if err == nil {
				removeEnvImage(t, e.Ref)
				e.Release()
				t.Fatalf("the environment was built and used: %+v", e)
			}
			var se *env.SetupError
			if !errors.As(err, &se) {
				t.Fatalf("Prepare = %v, want a *env.SetupError", err)
			}
			for _, want := range append(tt.want, "the environment is not sealed", "FROGNANO_SETUP_ENV", "credential helper", "docs/environments.md") {
				if !strings.Contains(se.Reason, want) {
					t.Errorf("the reason lacks %q:\n%s\nlog:\n%s", want, se.Reason, se.Env.Setup.Log)
				}
			}
			// A refusal of what setup built, not a failure of the script (which exited 0): the
			// places, each with what it holds, are there to be shown as a list.
			if se.Unsealed == nil || len(se.Unsealed.Found) == 0 || !strings.HasPrefix(err.Error(), "environment refused: ") {
				t.Errorf("Prepare = %v with %+v, want a refusal with what was found", err, se.Unsealed)
			}
			// The value is in nothing frognano wrote, in any form.
			everything := err.Error() + fmt.Sprint(se.Unsealed) + string(se.Env.Setup.Log) + progress.String()
			for _, form := range []string{value, base64.StdEncoding.EncodeToString([]byte(value)), hex.EncodeToString([]byte(value)), url.QueryEscape(value)} {
				if strings.Contains(everything, form) {
					t.Errorf("the refusal, the log or the progress shows the value")
				}
			}
			if !strings.Contains(string(se.Env.Setup.Log), "setup done") || !strings.Contains(string(se.Env.Setup.Log), "not sealed: ") {
				t.Errorf("the setup log lacks setup's output or the findings:\n%s", se.Env.Setup.Log)
			}
			// Nothing was committed: no image of this key exists, so no later run or cache can
			// take it.
			if _, err := docker.ImageInspect(ctx, env.Ref(se.Env.Key)); err == nil {
				removeEnvImage(t, env.Ref(se.Env.Key))
				t.Errorf("an image %s was committed", env.Ref(se.Env.Key))
			}
		})
	}
}

// TestCleanSetupIsSealed: a setup that uses the operator's value without leaving it (a
// credential file the script deletes before it ends, a variable it unsets) builds, carries the
// seal label, is used, and is reused from the cache; an environment image of the same key
// made before the seal check (no label) is not used but built again.
func TestCleanSetupIsSealed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	value := madeUpValue(t)
	script := `set -eu
# A credential helper's file, removed before the script ends: what docs/environments.md shows.
(umask 077; printf 'machine mirror.invalid password %s\n' "$MIRROR_TOKEN" > /root/.netrc)
test -s /root/.netrc
rm -f /root/.netrc
unset MIRROR_TOKEN
mkdir -p /opt/tools && echo "tool installed" > /opt/tools/tool.txt
echo "TOOLS=/opt/tools" >> "$FROGNANO_ENV"
`
	dir, head := gittest.Repo(t, map[string]string{env.ScriptFile: script})
	m := manager(t, env.Config{Network: env.NoNetwork, Env: []string{"MIRROR_TOKEN=" + value}}, "")
	cfg := sandboxConfig(t)
	req := env.Request{RunID: "envtest-sealed", RepoDir: dir, Commit: head, Scope: scopeOf(t, dir), Sandbox: cfg}
	e, err := m.Prepare(ctx, req)
	if err != nil {
		var se *env.SetupError
		if errors.As(err, &se) {
			t.Fatalf("%v\n%s", err, se.Env.Setup.Log)
		}
		t.Fatal(err)
	}
	removeEnvImage(t, e.Ref)
	if e.Cached || e.Setup == nil {
		t.Fatalf("environment %+v, want one this setup built", e)
	}
	if !strings.Contains(string(e.Setup.Log), "seal check: ") {
		t.Errorf("the setup log does not say the environment was checked:\n%s", e.Setup.Log)
	}
	info, err := docker.ImageInspect(ctx, e.Image)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Labels[env.LabelSealed] != "1" {
		t.Errorf("labels %v lack %s", info.Config.Labels, env.LabelSealed)
	}
	out, code := run(t, cfg, e.Image, sandbox.DefaultImage, "", `cat "$TOOLS/tool.txt"; test -e /root/.netrc && echo NETRC LEFT || echo no netrc`)
	if code != 0 || !strings.Contains(out, "tool installed") || !strings.Contains(out, "no netrc") {
		t.Errorf("a sandbox of the environment: exit %d\n%s", code, out)
	}
	if err := e.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := m.Prepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || again.Image != e.Image {
		t.Errorf("second Prepare: %+v, want the cached image %s", again, e.Image)
	}
	if err := again.Release(); err != nil {
		t.Fatal(err)
	}

	// An image of the key without the seal label (made before the check) is built again.
	removeImageID(t, e.Image)
	old := unseal(t, e.Ref)
	removeImageID(t, old)
	rebuilt, err := m.Prepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer rebuilt.Release()
	if rebuilt.Cached || rebuilt.Image == old {
		t.Errorf("an environment image without the seal label was used: %+v", rebuilt)
	}
}

// unseal tags as ref a copy of ref's image whose seal label is empty, as an environment made
// before the seal check had none, and returns the copy's ID.
func unseal(t *testing.T, ref string) string {
	t.Helper()
	ctx := context.Background()
	info, err := docker.ImageInspect(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	labels := maps.Clone(info.Config.Labels)
	labels[env.LabelSealed] = ""
	created, err := docker.ContainerCreate(ctx, &container.Config{Image: info.ID, Cmd: []string{"true"}}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer docker.ContainerRemove(ctx, created.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	// The rest of the configuration comes from the container, which has the image's.
	res, err := docker.ContainerCommit(ctx, created.ID, container.CommitOptions{Reference: ref, Config: &container.Config{Labels: labels}})
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// removeImageID removes an image by its ID when the test ends (after the pins are gone).
func removeImageID(t *testing.T, id string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = docker.ImageRemove(ctx, id, image.RemoveOptions{Force: true, PruneChildren: true})
	})
}
