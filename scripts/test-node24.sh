#!/usr/bin/env bash
# The suite's Node 24 leg: users run renderbridge on Node 20.19+, 22 and 24, the machine has 20.
# Node 24 comes from the npm registry's `node` package (nodejs.org is out of reach), and the native
# modules (better-sqlite3, keytar) are built against its headers in a copy of the tree, so the
# machine's own node_modules stay built for its Node.
#
# What runs: the fast loop (npm run test:unit), the API suite on the bundled stack, and one real
# render end to end. The whole suite once more would double a 45-minute run on two cores; these
# cover what differs between Node versions (native modules, fetch/undici, streams, the test runner).
# Extra arguments go to vitest in place of that selection.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[node24]\033[0m %s\n' "$*" >&2; }

cache="${XDG_CACHE_HOME:-$HOME/.cache}/renderbridge/node24"
node_pkg="$cache/node/node_modules/node"
if [ ! -x "$node_pkg/bin/node" ]; then
  say "installing Node 24 from the npm registry into $cache/node"
  mkdir -p "$cache/node"
  npm install --no-audit --no-fund --loglevel=error --prefix "$cache/node" node@24 >/dev/null
fi
node_bin="$node_pkg/bin/node"
# The package's preinstall fetches the build for this machine as a dependency; it holds the headers.
nodedir=$(dirname "$(dirname "$(readlink -f "$node_pkg/node_modules/node-linux-"*/bin/node)")")
say "Node $("$node_bin" --version) ($nodedir)"

# A copy of the working tree (tracked and untracked files, not what git ignores).
tree="$cache/tree"
mkdir -p "$tree"
find "$tree" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$tree"
cd "$tree"

export PATH="$(dirname "$node_bin"):$PATH"
export npm_config_nodedir="$nodedir" ELECTRON_SKIP_BINARY_DOWNLOAD=1
stamp=node_modules/.renderbridge-node24.sha256
want=$( (sha256sum package-lock.json; node --version) | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "installing npm dependencies for Node 24 (better-sqlite3 and keytar build from source: about 3 minutes)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
else
  npm run --silent build
fi

if [ $# -gt 0 ]; then
  exec npx vitest run "$@"
fi
say "the fast loop"
npm run --silent test:unit
say "the API suite and one real render"
npx vitest run --project main test/service/api test/e2e/render-basic.test.ts
