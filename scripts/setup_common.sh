# Sourced by scripts/setup.sh and scripts/setup_wasm.sh: one-line step and failure messages
# prefixed with SETUP_NAME, and SUDO for package installs (empty when root).
fail() { echo "$SETUP_NAME: step '$1' failed: $2" >&2; exit 1; }
step() { echo "$SETUP_NAME: $1" >&2; }

SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || fail "privileges" "not root and no sudo to install packages"
  SUDO="sudo"
fi
