# What the shell tests share; they source it.

# The test fails, saying why.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Skips the test (ctest's SKIP_RETURN_CODE 77) unless it runs as root and COMMAND exists.
#   require_root_and COMMAND WHAT_PROVIDES_IT
require_root_and() {
  if [ "$(id -u)" -ne 0 ] || ! command -v "$1" >/dev/null; then
    echo "skipped: needs root and $2"
    exit 77
  fi
}
