# Shared by the .ci/provision-* scripts (sourced, not run): a Debian package and its library closure from a
# newer suite than the system's, unpacked beside the system into a private prefix, its binary pointed at that
# prefix's loader and libraries with patchelf. --force-rpath writes an RPATH, which (unlike a RUNPATH) also
# applies to the libraries' own dependencies, so the binary runs directly.

debian_prefix_say() { echo "${DEBIAN_PREFIX_TOOL:-provision}: $*" >&2; }

# Sets apt_options: a private apt for SUITE in STATE (its own sources, lists, cache and empty status), so the
# system's apt state is untouched. Reads the suite's package lists.
debian_prefix_apt() {
  local suite=$1 state=$2
  mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
  touch "$state/status"
  {
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main"
    # experimental holds only what differs from sid: the libraries come from sid.
    [ "$suite" != experimental ] || echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main"
  } >"$state/sources.list"
  apt_options=(
    -o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
    -o "Dir::State::Status=$state/status" -o Dir::Etc::Preferences=/dev/null
    -o Dir::Etc::PreferencesParts=/dev/null -o Acquire::Check-Valid-Until=false -o Debug::NoLocking=1 -o APT::Sandbox::User=root
  )
  debian_prefix_say "reading Debian $suite's package lists"
  apt-get -q "${apt_options[@]}" update >&2
}

# Prints PACKAGE (name=version) and its library closure: the Depends that are libraries, and theirs in turn
# (not adduser, debconf, ...).
debian_prefix_closure() {
  local package dependency
  local -a queue=("$1")
  local -A seen=()
  echo "$1"
  while [ ${#queue[@]} -gt 0 ]; do
    package=${queue[0]}
    queue=("${queue[@]:1}")
    while read -r dependency; do
      [ -z "${seen[$dependency]:-}" ] || continue
      seen[$dependency]=1
      echo "$dependency"
      queue+=("$dependency")
    done < <(apt-cache "${apt_options[@]}" depends --important "$package" |
      awk '/^ *[|]?(Pre)?Depends: / { print $2 }' | grep -E '^(lib|zlib)[^<>]*$' | sort -u)
  done
}

# Downloads PACKAGES... into STAGED, unpacks them into STAGED/root and patches STAGED/root/BINARY (a path such
# as usr/bin/curl) to load from FINAL/root, where STAGED is moved afterwards by the caller.
debian_prefix_unpack() {
  local staged=$1 binary=$2 final=$3
  shift 3
  if ! command -v patchelf >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || { debian_prefix_say "patchelf is missing: sudo apt-get install patchelf"; return 1; }
    debian_prefix_say "installing Debian's patchelf"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patchelf >&2
  fi
  debian_prefix_say "downloading $*"
  (cd "$staged" && apt-get -q "${apt_options[@]}" download "$@" >&2)
  local prefix="$staged/root" deb
  for deb in "$staged"/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
  rm -f "$staged"/*.deb
  local multiarch interpreter
  multiarch=$(find "$prefix/usr/lib" -maxdepth 1 -type d -name '*-linux-gnu*' -printf '%f\n' | head -1)
  interpreter=$(patchelf --print-interpreter "$prefix/$binary")
  [ -e "$prefix$interpreter" ] || [ -L "$prefix$interpreter" ] || interpreter="/usr$interpreter"
  patchelf --set-interpreter "$final/root$interpreter" --force-rpath \
    --set-rpath "$final/root/usr/lib/$multiarch:$final/root/lib/$multiarch" "$prefix/$binary"
}
