#!/usr/bin/env bash
# Installs what renderbridge needs on a Debian/Ubuntu machine that has Node and npm:
# Debian packages (only those missing) and the npm dependencies (only when the lock file changed).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

node_major=$(node -p 'process.versions.node.split(".")[0]')
node_minor=$(node -p 'process.versions.node.split(".")[1]')
if [ "$node_major" -lt 20 ] || { [ "$node_major" -eq 20 ] && [ "$node_minor" -lt 19 ]; }; then
  say "Node $(node --version) is too old: renderbridge needs Node >= 20.19."
  exit 1
fi

# `setup.sh` installs what running renderbridge needs; `setup.sh test` adds what only the tests
# use (npm start runs the first, npm test the second), so a studio's service machine gets no
# browser, keyring or shells it never runs.
#
# command -> Debian package. Running: Blender renders, ffmpeg/ffprobe encode and read videos,
# bubblewrap starts the Blender builds that are system roots.
declare -A need=([blender]=blender [ffmpeg]=ffmpeg [ffprobe]=ffmpeg [bwrap]=bubblewrap)
if [ "${1:-}" = "test" ]; then
  # Tests and benchmarks: curl and zip/unzip drive and check uploads; the keychain (gnome-keyring
  # over a D-Bus session, read back with secret-tool) holds the API key; Chromium (driven by
  # playwright-core) tests the tray app's job window; zsh and fish check the completion scripts;
  # nginx sits in front of the service in the reverse-proxy test; systemd-analyze verifies the
  # units under deploy/; flake8 checks the Python (npm run lint); Xvfb gives Blender a screen for the
  # add-on's tests in a real window.
  need+=([curl]=curl [zip]=zip [unzip]=unzip [secret-tool]=libsecret-tools [gnome-keyring-daemon]=gnome-keyring
    [dbus-launch]=dbus-x11 [dbus-run-session]=dbus [chromium]=chromium [zsh]=zsh [fish]=fish [nginx]=nginx
    [systemd-analyze]=systemd [flake8]=flake8 [Xvfb]=xvfb)
fi
missing=()
for cmd in "${!need[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
# EEVEE renders headless through EGL, which Debian's blender does not pull in by itself.
[ -e /usr/lib/x86_64-linux-gnu/libEGL.so.1 ] || [ -e /usr/lib/aarch64-linux-gnu/libEGL.so.1 ] || missing+=(libegl1)
# Blender's window under Xvfb draws with Mesa's software OpenGL (a test machine has no GPU to draw with).
if [ "${1:-}" = "test" ]; then
  [ -e /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so ] || [ -e /usr/lib/aarch64-linux-gnu/dri/swrast_dri.so ] ||
    missing+=(libgl1-mesa-dri)
fi
# keytar (the daemon's keychain) builds from source against libsecret's headers.
[ -d /usr/include/libsecret-1 ] || missing+=(libsecret-1-dev)
if [ ${#missing[@]} -gt 0 ]; then
  pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing Debian packages: $pkgs"
  # Wait for another apt run (unattended upgrades, a parallel setup) instead of failing.
  lock=(-o DPkg::Lock::Timeout=600)
  $sudo apt-get "${lock[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get "${lock[@]}" install -y -qq --no-install-recommends $pkgs >/dev/null
fi

# Electron's install script downloads its binary from GitHub, which these machines cannot reach;
# the package's types are all the build and tests use (the app itself is packaged by electron-builder).
export ELECTRON_SKIP_BINARY_DOWNLOAD=1

stamp=node_modules/.renderbridge-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "installing npm dependencies (better-sqlite3 may build from source: about 2 minutes)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
# `npm ci` builds through `prepare`; rebuild when sources are newer than the build.
if [ ! -f dist/cli/index.js ] || [ -n "$(find shared service daemon cli host-addon \( -name '*.ts' -o -name '*.py' \) -newer dist/cli/index.js -print -quit)" ]; then
  say "building"
  npm run --silent build
fi
