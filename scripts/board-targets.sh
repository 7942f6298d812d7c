# Sourced by scripts/release and scripts/ci-cross: the three board targets, installed.
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
}

# Exit status 0 when FILE is a statically linked ELF (no program interpreter, no NEEDED).
board_is_static() {
  local f="$1"
  if ! command -v readelf >/dev/null 2>&1; then
    echo "note: readelf missing, cannot check that $f is static" >&2
    return 0
  fi
  ! readelf -lW "$f" | grep -q 'program interpreter' && ! readelf -dW "$f" 2>/dev/null | grep -q '(NEEDED)'
}
