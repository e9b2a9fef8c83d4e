#!/usr/bin/env bash
# The fast suite on the other Python versions heta_nb supports (pyproject's classifiers):
#   bash tests/other-pythons.sh 3.10 3.12 3.13
# Each gets its own venv (.venv-pyX.Y) with the [heta,test] extras; on 3.10 and 3.13 the
# [heta] extra installs nothing (heta-framework needs 3.11 or 3.12), so those runs cover
# the core alone. Dask, MLflow and pyarrow are left out here (their tests skip): these runs
# are the core install, where pandas stores text without Arrow.
# A version with no interpreter on this machine (on PATH or under pyenv) is reported and
# skipped; a failing suite fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/python-of.sh
status=0
for version in "$@"; do
  interpreter=$(python_of "$version")
  if [ -z "$interpreter" ]; then
    echo "other-pythons: no Python $version on this machine; skipped" >&2
    continue
  fi
  venv=".venv-py$version"
  stamp="$venv/.installed-test"
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    "$interpreter" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
    "$venv/bin/python" -m pip install -q -e '.[heta,test]'
    VENV="$venv" bash tests/fetch-junit-xsd.sh
    touch "$stamp"
  fi
  echo "== Python $version ($("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])'))"
  "$venv/bin/python" -m pytest -q -m "not browser and not slow" -p no:cacheprovider || status=1
done
exit $status
