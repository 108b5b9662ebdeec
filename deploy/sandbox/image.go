// Package sandbox carries the sandbox image's build files inside the frognano binary, so that
// `frognano sandbox build` works from an installed binary with no checkout of this repository.
// It holds data only: what runs in the sandbox is defined by the Dockerfile, and the image is
// built by deploy/sandbox/build-offline.sh.
package sandbox

import "embed"

// Files holds Dockerfile, Dockerfile.go-example and build-offline.sh.
//
//go:embed Dockerfile Dockerfile.go-example build-offline.sh
var Files embed.FS
