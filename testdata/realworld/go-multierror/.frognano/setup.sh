#!/bin/sh
# Runs once per environment, with network, before the model: download the modules the tests
# need into a module cache that is part of the environment image. The agent's phase is offline
# (the image sets GOPROXY=off) and reads them from there. GOPROXY for this download is the
# operator's (FROGNANO_SETUP_ENV); go.sum checks what arrives.
set -eu
export GOMODCACHE=/opt/gomodcache GOFLAGS=-mod=mod
go mod download
echo "GOMODCACHE=$GOMODCACHE" >> "$FROGNANO_ENV"
echo "GOFLAGS=$GOFLAGS" >> "$FROGNANO_ENV"
