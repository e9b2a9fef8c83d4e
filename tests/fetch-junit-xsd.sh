#!/usr/bin/env bash
# Fetch Jenkins' junit-10.xsd (the schema Jenkins' xUnit plugin validates JUnit XML with) for
# tests/gate/test_junit_consumers.py, without committing it: pytest's sdist on PyPI ships it as
# pytest-<version>/testing/example_scripts/junit-10.xsd. Downloads the sdist of the installed
# pytest with pip and extracts only that file into $VENV/share/heta-nb-test/junit-10.xsd.
# Re-runnable: does nothing when the file exists.
set -euo pipefail
VENV="${VENV:-.venv}"
PYTHON="$VENV/bin/python"
TARGET="$VENV/share/heta-nb-test/junit-10.xsd"
if [ -s "$TARGET" ]; then
  exit 0
fi
VERSION="$("$PYTHON" -c 'import importlib.metadata as m; print(m.version("pytest"))')"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
echo "fetching junit-10.xsd from the pytest $VERSION sdist..."
"$PYTHON" -m pip download -q --no-binary :all: --no-deps "pytest==$VERSION" -d "$TMP"
"$PYTHON" - "$TMP" "$TARGET" <<'EOF'
import pathlib
import sys
import tarfile

folder, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
archives = sorted(folder.glob("pytest-*.tar.gz"))
if len(archives) != 1:
    sys.exit(f"fetch-junit-xsd: expected one pytest sdist in {folder}, found {[a.name for a in archives]}")
with tarfile.open(archives[0]) as archive:
    members = [
        m for m in archive.getmembers()
        if m.isfile() and m.name.split("/", 1)[-1] == "testing/example_scripts/junit-10.xsd"
    ]
    if len(members) != 1:
        sys.exit(f"fetch-junit-xsd: {archives[0].name} has no testing/example_scripts/junit-10.xsd")
    data = archive.extractfile(members[0]).read()
if b"<xs:schema" not in data:
    sys.exit(f"fetch-junit-xsd: {members[0].name} in {archives[0].name} is not an XML schema")
target.parent.mkdir(parents=True, exist_ok=True)
partial = target.with_name(target.name + ".part")
partial.write_bytes(data)
partial.replace(target)
print(f"wrote {target} ({len(data):,} bytes, from {archives[0].name})")
EOF
