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

# For a test with a scratch folder $work and, once it calls start_local_slurm, a local Slurm:
# both go when the test exits, however it exits. Needs $jobs (the repository's jobs/ folder).
#   work=$(mktemp -d ...); remove_on_exit
slurm_dir=
remove_on_exit() {
  trap '[ -z "$slurm_dir" ] || "$jobs/local/slurm.sh" stop "$slurm_dir" || true; rm -rf "$work"' EXIT
}

# Starts a local Slurm (jobs/local/slurm.sh start ARGS...) and points SLURM_CONF at it.
start_local_slurm() {
  slurm_dir=$("$jobs/local/slurm.sh" start "$@")
  export SLURM_CONF=$slurm_dir/slurm.conf
}

# What SQL answers on the database $db, a row a line, columns joined by |.
query() { sqlite3 -batch -noheader "$db" "$1"; }

# Fails unless SQL answers EXPECTED on $db; says what it checked.
#   expect DESCRIPTION EXPECTED SQL
expect() {
  local got
  got=$(query "$3")
  [ "$got" = "$2" ] || fail "$1: expected '$2', got '$got'"
  echo "ok: $1 ($got)"
}

# A sweep submitted again once every point has completed: `$sweep ARGS...` (ARGS a submit of the
# sweep whose output folder is $out) says so, plans no array and queues no job.
expect_nothing_to_submit() {
  local arrays_before again
  arrays_before=$(ls "$out/arrays" | wc -l)
  again=$("$sweep" "$@")
  echo "$again"
  grep -q "nothing to submit" <<<"$again" || fail "submitting again did not say 'nothing to submit'"
  ! grep -q "submitted" <<<"$again" || fail "submitting again submitted a job"
  [ "$(ls "$out/arrays" | wc -l)" = "$arrays_before" ] || fail "submitting again planned an array"
  [ -z "$(squeue -h)" ] || fail "jobs are queued after the second submission: $(squeue -h)"
  echo "ok: submitting again submits nothing"
}
