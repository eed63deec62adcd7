#!/usr/bin/env bash
# flake8 over the repository's Python; .flake8 holds the settings (120 columns, per-file ignores).
# Debian's flake8 package (`scripts/setup.sh test` installs it); a pip-installed one works too.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v flake8 >/dev/null 2>&1; then
  exec flake8 "$@"
fi
exec python3 -m flake8 "$@"
