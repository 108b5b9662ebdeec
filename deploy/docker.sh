# docker_ensure makes sure a Docker engine answers, starting this machine's own when it can.
# Sourced by deploy/testenv/setup.sh, deploy/serve.sh and deploy/sandbox/build-offline.sh, after
# they define log and die.
#
# When no engine answers and DOCKER_HOST is unset or names the local default socket, and this
# runs as root with dockerd installed (Debian's docker.io), it starts the engine: through
# systemd when systemd runs this machine, else as a background dockerd logging to
# FROGNANO_DOCKERD_LOG (default /var/log/dockerd.log; a container or CI machine with no init
# system), after removing the pid file (FROGNANO_DOCKERD_PIDFILE, default /var/run/docker.pid)
# of an engine that died. A docker context other than the default is never started. It then waits up to
# FROGNANO_DOCKER_WAIT seconds (default 90) for the engine to answer. A remote DOCKER_HOST, a
# user who is not root, or a machine without dockerd gets an error that says what to do: nothing
# is installed and no remote engine is touched.
docker_answers() { docker version >/dev/null 2>&1; }

docker_ensure() {
  docker_answers && return 0
  local how="start it ('systemctl start docker', or 'dockerd >/var/log/dockerd.log 2>&1 &' where there is no systemd), or point DOCKER_HOST at one"
  case ${DOCKER_HOST:-} in
    "" | unix:///var/run/docker.sock | unix:///run/docker.sock) ;;
    *) die "no Docker engine answers at $DOCKER_HOST; $how" ;;
  esac
  command -v docker >/dev/null 2>&1 || die "the docker command is missing; install Docker (Debian: apt-get install docker.io)"
  # A docker context other than the default names another engine: not this machine's to start.
  local context
  context=${DOCKER_CONTEXT:-$(docker context show 2>/dev/null || true)}
  case $context in
    "" | default) ;;
    *) die "no Docker engine answers through the docker context '$context'; start that engine, or use the default context" ;;
  esac
  [ "$(id -u)" = 0 ] || die "no Docker engine answers at unix:///var/run/docker.sock; $how"
  local dockerd dlog=${FROGNANO_DOCKERD_LOG:-/var/log/dockerd.log}
  dockerd=$(command -v dockerd 2>/dev/null || true)
  [ -n "$dockerd" ] || die "no Docker engine answers and dockerd is not installed; install Docker (Debian: apt-get install docker.io) and $how"

  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    log "no Docker engine answers; starting it (systemctl start docker)"
    systemctl start docker >/dev/null 2>&1 || log "systemctl start docker failed; starting dockerd by hand"
  fi
  if ! docker_answers; then
    # A pid file left by an engine that died keeps a new one from starting.
    local pidfile=${FROGNANO_DOCKERD_PIDFILE:-/var/run/docker.pid} pid
    if [ -f "$pidfile" ]; then
      pid=$(cat "$pidfile" 2>/dev/null || true)
      if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
        rm -f "$pidfile"
      fi
    fi
    if ! pgrep -x dockerd >/dev/null 2>&1; then
      log "no Docker engine answers; starting $dockerd in the background (log: $dlog)"
      # setsid: the engine outlives this script and the make that ran it, as a service would.
      setsid "$dockerd" >>"$dlog" 2>&1 </dev/null &
    else
      log "dockerd is running but does not answer yet; waiting for it"
    fi
  fi
  local waited=0 limit=${FROGNANO_DOCKER_WAIT:-90}
  until docker_answers; do
    if [ "$waited" -ge "$limit" ]; then
      tail -n 20 "$dlog" >&2 2>/dev/null || true
      die "the Docker engine did not answer within ${limit}s of being started (log: $dlog)"
    fi
    sleep 1
    waited=$((waited + 1))
  done
  log "Docker engine answers (after ${waited}s)"
}
