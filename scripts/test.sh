#!/usr/bin/env bash
# The whole test suite: setup, typecheck, lint, then vitest. Any failure fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
# Blender 4.3 and 5.2 (Debian roots, built once per machine, cached outside the repository): the
# Blender-facing suites run on every build artists use.
bash scripts/blender-roots.sh
# PostgreSQL and Redis for the scale-out suites (started here when a fresh machine has none).
bash scripts/test-servers.sh
echo "== typecheck"; npx tsc -p tsconfig.json --noEmit
echo "== lint"; npm run --silent lint
echo "== tests"; npx vitest run "$@"
# Users run Node 20.19+, 22 and 24: the Node 24 leg runs the fast loop, the API suite and a real
# render on Node 24 from the npm registry (scripts/test-node24.sh says why not the whole suite twice).
# Skipped when arguments pick files: those are for the machine's Node.
if [ $# -eq 0 ]; then
  echo "== Node 24"; bash scripts/test-node24.sh
fi
