# apt_install installs Debian packages on this machine (root only), waiting for another apt
# run's lock (CI images, parallel setups) instead of failing, and refreshing the package lists
# only when the install fails without them. Sourced by deploy/sandbox/build-offline.sh and
# deploy/testenv/setup.sh and pg.sh.
apt_install() {
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >/dev/null 2>&1 || {
    apt-get -o DPkg::Lock::Timeout=300 update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >/dev/null
  }
}
