# Sourced by scripts/release and scripts/ci-cross: the three board targets, installed, with
# a C compiler for each (board_c_compilers: the bundled SQLite).
#
# BOARD_TARGETS is set to x86_64 and aarch64 musl plus an armv7 target:
# armv7-unknown-linux-musleabihf where rustup can install its standard library, else
# armv7-unknown-linux-gnueabihf linked statically against glibc (crt-static, see
# .cargo/config.toml), which needs Debian's gcc-arm-linux-gnueabihf as its linker.
# Either way the armv7 result is one statically linked file. Set ARMV7_TARGET to force
# one of the two.

board_install_targets() {
  local t
  BOARD_TARGETS=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
  for t in "${BOARD_TARGETS[@]}"; do
    if ! rustup target add "$t" >/dev/null 2>&1; then
      echo "error: rustup cannot install the standard library for $t" >&2
      return 1
    fi
  done
  local armv7="${ARMV7_TARGET:-}"
  if [ -z "$armv7" ]; then
    if rustup target add armv7-unknown-linux-musleabihf >/dev/null 2>&1; then
      armv7=armv7-unknown-linux-musleabihf
    else
      echo "note: rust-std for armv7-unknown-linux-musleabihf cannot be installed here;" \
        "building armv7 as armv7-unknown-linux-gnueabihf, statically linked with glibc" >&2
      armv7=armv7-unknown-linux-gnueabihf
    fi
  fi
  if ! rustup target add "$armv7" >/dev/null 2>&1; then
    echo "error: rustup cannot install the standard library for $armv7" >&2
    return 1
  fi
  if [ "$armv7" = armv7-unknown-linux-gnueabihf ] && ! command -v arm-linux-gnueabihf-gcc >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc-arm-linux-gnueabihf libc6-dev-armhf-cross >/dev/null
    else
      echo "error: armv7-unknown-linux-gnueabihf needs the linker arm-linux-gnueabihf-gcc" \
        "(Debian: apt-get install gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)" >&2
      return 1
    fi
  fi
  BOARD_TARGETS+=("$armv7")
  board_c_compilers
}

# C compilers for the board targets: the bundled SQLite (rusqlite's `bundled` feature, the
# run history) is C. The musl targets compile it with zig (`ziglang` from PyPI: one
# download, a C cross compiler and musl headers for every architecture), through a small
# wrapper per target in $CARGO_TARGET_DIR/board-cc (cc-rs gives its own --target=, which
# zig does not take); armv7 glibc uses Debian's arm-linux-gnueabihf-gcc, its linker.
# Exports CC_<triple> and AR_<triple> for cargo's build scripts (cc-rs).
board_c_compilers() {
  local t zig="" dir
  dir="${CARGO_TARGET_DIR:-target}/board-cc"
  case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
  zig_path() {
    PYTHONPATH="$dir/py${PYTHONPATH:+:$PYTHONPATH}" python3 -c \
      'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))' 2>/dev/null
  }
  for t in "${BOARD_TARGETS[@]}"; do
    case "$t" in *-musl*) ;; *) continue ;; esac
    if [ -z "$zig" ]; then
      zig="$(zig_path || true)"
      if [ -z "$zig" ] || [ ! -x "$zig" ]; then
        echo "note: installing zig (PyPI ziglang $ZIGLANG_VERSION) into $dir/py, the C compiler for SQLite on musl targets" >&2
        mkdir -p "$dir"
        if ! python3 -m pip install -q --target "$dir/py" "ziglang==$ZIGLANG_VERSION" >&2; then
          echo "error: cannot install ziglang with pip (python3 -m pip); the musl targets need zig as C compiler" >&2
          return 1
        fi
        zig="$(zig_path)"
      fi
    fi
    local ztarget
    case "$t" in
      x86_64-unknown-linux-musl) ztarget="x86_64-linux-musl" ;;
      aarch64-unknown-linux-musl) ztarget="aarch64-linux-musl" ;;
      armv7-unknown-linux-musleabihf) ztarget="arm-linux-musleabihf -mcpu=generic+v7a+vfp3d16+thumb2" ;;
      *) echo "error: no zig target for $t" >&2; return 1 ;;
    esac
    mkdir -p "$dir"
    local cc="$dir/cc-$t" ar="$dir/ar-$t"
    cat >"$cc" <<WRAP
#!/bin/sh
# zig as the C compiler for $t (written by scripts/board-targets.sh)
for a do
  shift
  case "\$a" in --target=*) continue ;; esac
  set -- "\$@" "\$a"
done
exec "$zig" cc -target $ztarget -fno-sanitize=undefined "\$@"
WRAP
    printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$zig" >"$ar"
    chmod +x "$cc" "$ar"
    export "CC_${t//-/_}=$cc" "AR_${t//-/_}=$ar"
  done
  # armv7 glibc: Debian's cross gcc (cc-rs would pick it by name too; said explicitly).
  for t in "${BOARD_TARGETS[@]}"; do
    if [ "$t" = armv7-unknown-linux-gnueabihf ]; then
      export CC_armv7_unknown_linux_gnueabihf=arm-linux-gnueabihf-gcc
      export AR_armv7_unknown_linux_gnueabihf=arm-linux-gnueabihf-ar
    fi
  done
}

# The zig release board_c_compilers installs when none is importable.
ZIGLANG_VERSION="${ZIGLANG_VERSION:-0.17.1}"

# Exit status 0 when FILE is a statically linked ELF (no program interpreter, no NEEDED).
board_is_static() {
  local f="$1"
  if ! command -v readelf >/dev/null 2>&1; then
    echo "note: readelf missing, cannot check that $f is static" >&2
    return 0
  fi
  ! readelf -lW "$f" | grep -q 'program interpreter' && ! readelf -dW "$f" 2>/dev/null | grep -q '(NEEDED)'
}

# The Debian architecture of a board target (scripts/deb names its packages with it).
board_deb_arch() {
  case "$1" in
    x86_64-*-linux-*) echo amd64 ;;
    aarch64-*-linux-*) echo arm64 ;;
    armv7-*-linux-*eabihf) echo armhf ;;
    *) echo "error: no Debian architecture for $1" >&2; return 1 ;;
  esac
}
