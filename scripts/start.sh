#!/usr/bin/env bash
# Sets up, then runs the reference service on embedded defaults (SQLite + local files).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# No --data-dir: the service resolves it as `renderbridge admin` does (RENDERBRIDGE_DATA_DIR, else
# ~/.local/share/renderbridge/service), so admin commands in any folder find its database.
exec node bin/renderbridge.js service "$@"
