#!/usr/bin/env bash
# Sets up, then runs the reference service on embedded defaults (SQLite + local files).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec node bin/renderbridge.js service --data-dir "${RENDERBRIDGE_DATA_DIR:-.renderbridge/service}" "$@"
