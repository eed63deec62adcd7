#!/usr/bin/env bash
# Prepares the newer Blender builds the test matrix runs on, once per machine: a minimal Debian root
# per suite (trixie: Blender 4.3, sid: Blender 5.2), holding Blender and the GL/EGL libraries it
# loads. The roots live outside the repository, in a cache shared by every clone on the machine, and
# are built only when missing (or when a build was cut short). Each root is a "build folder" the
# service and worker accept with `--blender ROOT` (blender/build-kinds.ts starts it in bubblewrap).
#
#   bash scripts/blender-roots.sh            # every root the matrix needs
#   bash scripts/blender-roots.sh sid        # one of them
#   bash scripts/blender-roots.sh --print    # print the root folders (one per line), build nothing
#
# RENDERBRIDGE_BLENDER_ROOTS overrides the cache folder
# (default ${XDG_CACHE_HOME:-~/.cache}/renderbridge/blender-roots).
set -euo pipefail

say() { printf '\033[1m[blender-roots]\033[0m %s\n' "$*" >&2; }

cache=${RENDERBRIDGE_BLENDER_ROOTS:-${XDG_CACHE_HOME:-$HOME/.cache}/renderbridge/blender-roots}
mirror=${RENDERBRIDGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
all=(trixie sid)

if [ "${1:-}" = "--print" ]; then
  for s in "${all[@]}"; do echo "$cache/$s"; done
  exit 0
fi
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=("${all[@]}")

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
lock=(-o DPkg::Lock::Timeout=600)
need=()
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]} (builds and runs the Blender roots)"
  $sudo apt-get "${lock[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get "${lock[@]}" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Blender plus what it loads at run time: without the GL/EGL libraries 5.2 aborts even a Cycles
# render that uses the compositor; without python3-cattr its extensions add-on fails to register.
pkgs=(blender libegl1 libegl-mesa0 libgl1 libopengl0 libgl1-mesa-dri python3-cattr ca-certificates)

mkdir -p "$cache"
for suite in "${suites[@]}"; do
  root="$cache/$suite"
  if [ -f "$root/.renderbridge-root" ]; then
    say "$suite: ready ($(cat "$root/.renderbridge-root")) in $root"
    continue
  fi
  t0=$(date +%s)
  tmp="$cache/.$suite.partial"
  $sudo rm -rf "$tmp"
  say "$suite: creating a minimal Debian root (debootstrap, about 40 s)"
  $sudo debootstrap --variant=minbase "$suite" "$tmp" "$mirror" >"$cache/.$suite.log" 2>&1 || {
    say "$suite: debootstrap failed; last lines of $cache/.$suite.log:"
    tail -n 20 "$cache/.$suite.log" >&2
    exit 1
  }
  # sid's release file on the mirror these machines reach may be past its validity date.
  apt_opts=(-o Acquire::Check-Valid-Until=false -o DPkg::Lock::Timeout=600)
  say "$suite: installing Blender into it (about 80 s)"
  $sudo mount -t proc proc "$tmp/proc"
  trap '$sudo umount "$tmp/proc" 2>/dev/null || true' EXIT
  if ! { $sudo chroot "$tmp" apt-get "${apt_opts[@]}" update -qq &&
    $sudo chroot "$tmp" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y -qq \
      --no-install-recommends "${pkgs[@]}"; } >>"$cache/.$suite.log" 2>&1; then
    say "$suite: installing Blender failed; last lines of $cache/.$suite.log:"
    tail -n 20 "$cache/.$suite.log" >&2
    exit 1
  fi
  $sudo chroot "$tmp" apt-get clean
  $sudo umount "$tmp/proc"
  trap - EXIT
  version=$($sudo chroot "$tmp" dpkg-query -W -f '${Version}' blender)
  echo "blender $version" | $sudo tee "$tmp/.renderbridge-root" >/dev/null
  $sudo rm -rf "$root"
  $sudo mv "$tmp" "$root"
  say "$suite: Blender $version ready in $root ($(($(date +%s) - t0)) s, $(du -sh "$root" | cut -f1))"
done
