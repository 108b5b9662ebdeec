# The frognano service image: the frognano binary and the static tool executor on Debian,
# with git (the service clones and pushes on the host side of the trust boundary).
# It talks to the Docker engine through /var/run/docker.sock to create sandboxes; the
# sandboxes themselves never see that socket.
#
# Build: docker build -t frognano:latest .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/frognano ./cmd/frognano \
 && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/frognano-executor ./cmd/frognano-executor

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /var/lib/frognano --create-home frognano
COPY --from=build /out/frognano /out/frognano-executor /usr/local/bin/
USER frognano
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/frognano"]
CMD ["serve"]
