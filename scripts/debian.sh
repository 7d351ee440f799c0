# Sourced by scripts/book.sh and scripts/test.sh: install Debian packages that are missing, when we can.
# debian_packages WHO COMMAND=PACKAGE...: installs each PACKAGE whose COMMAND is not on PATH, as root with apt-get;
# otherwise says that WHO ("the tests") needs it and what to run, and returns 1. An apt-get that fails returns its own
# code.

# apt-get with patience: DPkg::Lock::Timeout makes it wait for dpkg's own lock, but not for the locks of
# /var/lib/apt/lists (apt-get update) or /var/cache/apt/archives (the download), which fail at once while another
# apt holds them (apt 2.6): so wait for those here, up to 10 minutes.
apt_patiently() {
  local err waited=0 rc last
  err=$(mktemp)
  while true; do
    rc=0
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@" 2>"$err" || rc=$?
    if [ "$rc" != 0 ] && grep -q "Could not get lock" "$err" && [ "$waited" -lt 600 ]; then
      echo "apt-get $1: its lock is $(grep -o 'held by process.*' "$err" | head -1 || echo 'held by another program');" \
        "waiting for it ($waited s so far)..." >&2
      sleep 10
      waited=$((waited + 10))
      continue
    fi
    # apt-get says "Waiting for cache lock: ... held by process N" once a second while it waits for dpkg's lock:
    # one line says it waited, the rest of what it said as it said it
    grep -v "Waiting for cache lock" "$err" >&2 || true
    last=$(grep "Waiting for cache lock" "$err" | tail -1 | sed -E 's/^.*Waiting for cache lock: *//; s/\.\.\. *[0-9]+ *s *$//')
    [ -z "$last" ] || echo "apt-get $1 waited for its lock ($last) before going on." >&2
    rm -f "$err"
    return "$rc"
  done
}

debian_packages() {
  local who=$1 pair missing=()
  shift
  for pair in "$@"; do
    command -v "${pair%%=*}" >/dev/null 2>&1 || missing+=("${pair#*=}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's ${missing[*]} for $who (a large download; apt lists each package it fetches)..."
    apt_patiently update -qq
    apt_patiently install -y "${missing[@]}"   # not -q: apt lists each package as it downloads it
  else
    echo "${who^} need Debian's ${missing[*]}: run 'sudo apt-get install ${missing[*]}'." >&2
    return 1
  fi
}
