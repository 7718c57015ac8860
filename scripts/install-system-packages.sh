#!/usr/bin/env bash
# Debian packages the test suite uses: chromium (browser tests, driven by playwright-core, which
# downloads no browser), tmux (a person at a terminal, for local mode) and postgresql (the Postgres
# store's tests start a throwaway cluster of their own from its binaries). Installs only what is missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
