#!/usr/bin/env bash
# The fast suite on the oldest versions pyproject.toml declares: each core dependency's
# `name>=X.Y` becomes `name==X.Y.*` (a constraints file) on the oldest supported Python,
# with the [test] extra resolved around them. A bound the code does not really support
# (numpy 2's string ufuncs on numpy 1.24, say) fails here, not on a user's machine.
#   bash tests/min-versions.sh            # Python 3.10 (requires-python's lower bound)
#   MIN_PYTHON=3.11 bash tests/min-versions.sh
# The venv (.venv-min) is rebuilt when pyproject.toml changes. No interpreter: skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${MIN_PYTHON:-3.10}
source tests/python-of.sh
interpreter=$(python_of "$version")
if [ -z "$interpreter" ]; then
  echo "min-versions: no Python $version on this machine; skipped" >&2
  exit 0
fi
venv=${MIN_VENV:-.venv-min}
stamp="$venv/.installed-min"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  rm -rf "$venv"
  "$interpreter" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  # pyproject's [project] dependencies, each at its lower bound (a regex: no tomllib on 3.10)
  "$venv/bin/python" - > "$venv/constraints.txt" <<'PY'
import re
text = open("pyproject.toml", encoding="utf-8").read()
block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M).group(1)
for line in block.splitlines():
    found = re.match(r'\s*"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?>=([0-9][0-9.]*)[",;]', line)
    if found:
        print(f"{found.group(1)}=={found.group(2)}.*")
PY
  echo "min-versions: constraints"; sed 's/^/  /' "$venv/constraints.txt"
  "$venv/bin/python" -m pip install -q -c "$venv/constraints.txt" -e '.[test]'
  VENV="$venv" bash tests/fetch-junit-xsd.sh
  touch "$stamp"
fi
echo "== minimum versions on Python $version: $("$venv/bin/python" -c '
import importlib.metadata as m
print(", ".join(f"{n} {m.version(n)}" for n in ("numpy", "pandas", "matplotlib", "ipython", "ipywidgets", "jinja2")))')"
"$venv/bin/python" -m pytest -q -m "not browser and not slow" -p no:cacheprovider "$@"
