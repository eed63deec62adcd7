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
echo "== lint"; npx eslint .
echo "== tests"; npx vitest run "$@"
# The Node 24 leg (users run 20.19+, 22 and 24); skipped when only some tests were asked for.
if [ $# -eq 0 ]; then echo "== Node 24"; bash scripts/test-node24.sh; fi
