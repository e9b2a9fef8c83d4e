# Sourced by tests/other-pythons.sh and tests/min-versions.sh:
#   python_of 3.10   # prints the path of a Python 3.10 on this machine, or nothing
# pyenv's own builds first: its shim on PATH fails for a version that is not active.
python_of() {
  local version=$1 candidate
  for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/python "$(command -v "python$version" || true)"; do
    if [ -x "$candidate" ] &&
      "$candidate" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$version'.split('.'))))" 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
}
