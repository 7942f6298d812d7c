#!/bin/sh
# Harness overhead of `flashscope align` on a loop device over a temporary file (issue 3,
# point 9): compares the run's wall time (elapsed_ns) with the time spent inside reads
# (parameters.io_time_ns). Needs root and losetup; detaches its own loop device.
# Usage: scripts/align-overhead.sh [SIZE_MiB] [extra align args...]
set -eu
size_mib=${1:-1024}
[ $# -gt 0 ] && shift
bin=${FLASHSCOPE:-target/release/flashscope}
dir=$(mktemp -d)
img="$dir/card.img"
dd if=/dev/zero of="$img" bs=1M count=0 seek="$size_mib" status=none
dd if=/dev/urandom of="$img" bs=1M count="$size_mib" conv=notrunc status=none
loop=$(losetup --find --show --direct-io=on "$img")
cleanup() { losetup -d "$loop"; rm -rf "$dir"; }
trap cleanup EXIT
"$bin" align "$loop" --json "$@" > "$dir/out.json"
python3 - "$dir/out.json" "$loop" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["parameters"]
io, wall = p["io_time_ns"], d["elapsed_ns"]
print(f"{sys.argv[2]}: {p['reads']} reads (flashbench -a: {p['flashbench_reads']}), {p['rounds']} rounds, stop: {p['stop_reason']}")
print(f"time in reads {io/1e6:.1f} ms, wall {wall/1e6:.1f} ms, harness overhead {(wall-io)/1e6:.1f} ms = {100*(wall-io)/io:.1f}% of read time")
e = d["inferences"]["erase_block_bytes"]; pg = d["inferences"]["page_bytes"]
print("direct_io:", d["target"].get("direct_io"), "| erase:", e["status"], e["value"], "| page:", pg["status"], pg["value"])
print("evidence:", e["evidence"][:160])
PY
