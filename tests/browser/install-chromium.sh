#!/usr/bin/env bash
# Install Debian's Chromium for the real-browser tests, if it is not there yet.
# Playwright drives /usr/bin/chromium through executable_path; `playwright install`
# (a browser download) is never used. Re-runnable: does nothing when chromium exists.
set -euo pipefail
CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$CHROMIUM_PATH" ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "chromium is missing and this user cannot install it (no root, no sudo);" >&2
    echo "browser tests will be skipped locally (and fail under CI=true)." >&2
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is missing and apt-get is not available; install Chromium yourself" >&2
  exit 0
fi
echo "installing Debian chromium for the browser tests..."
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
  chromium chromium-driver fonts-liberation fonts-dejavu-core >/dev/null
"$CHROMIUM_PATH" --version 2>/dev/null || true
