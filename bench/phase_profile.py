#!/usr/bin/env python3
"""Where a process's CPU goes in one phase of the checkout driver (issue 51's
target 2), from `perf script -F comm,pid,tid,time,ip,sym` of a profile
recorded with `perf record -a -g -k CLOCK_MONOTONIC` and the driver's
`PHASE <slot> <start> <end>` lines (slot 0 open, 1 payment, 2 confirm).

    bench/phase_profile.py SCRIPT_OUT DRIVER_STDERR PID [slot, 2]

Prints the share of PID's samples inside the phase's windows by kind: the
allocator and memory copies by themselves, the rest with what they call (a
sample counts for each kind its stack passes through), then the functions
with the most samples by themselves.
"""
import collections
import re
import sys

KINDS = [
    ("allocation (by itself)", r"^(_?mi_|__rustc::__rust_(alloc|dealloc|realloc))", True),
    ("memmove and memcpy (by themselves)", r"^__mem(move|cpy)", True),
    ("the kernel's TCP", r"^(tcp_|__tcp_|ip_|__ip_|__dev_queue|net_rx|sock_|__netif)", False),
    ("spans, logs, trace propagation", r"tracing_opentelemetry|opentelemetry|json_subscriber|"
     r"tracing_subscriber|tracing_core|sharded_slab|tracing::span", False),
    ("the Redis client", r"^<?redis::", False),
    ("protobuf decoding", r"prost::encoding::.*merge|merge_field|merge_loop", False),
    ("protobuf encoding", r"prost::encoding::.*encode|encoded_len|encode_raw", False),
    ("HPACK", r"hpack", False),
]


def windows(path, slot):
    found = []
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) == 4 and f[0] == "PHASE" and f[1] == slot:
            found.append((float(f[2]), float(f[3])))
    return found


def samples(path, pid, within):
    block = []
    for line in open(path, errors="replace"):
        if line.strip():
            block.append(line)
            continue
        if block:
            head = block[0].split()
            if len(head) >= 3 and head[1].split("/")[0] == pid:
                t = float(head[-1].rstrip(":"))
                if any(a <= t <= b for a, b in within):
                    yield [re.sub(r"^\s*\S+ ", "", f.strip()) for f in block[1:]]
        block = []


def main():
    script, driver, pid = sys.argv[1:4]
    slot = sys.argv[4] if len(sys.argv) > 4 else "2"
    within = windows(driver, slot)
    kinds = collections.Counter()
    leaves = collections.Counter()
    total = 0
    for stack in samples(script, pid, within):
        total += 1
        if stack:
            leaves[stack[0][:110]] += 1
        for name, pattern, leaf in KINDS:
            frames = stack[:1] if leaf else stack
            if any(re.search(pattern, f) for f in frames):
                kinds[name] += 1
    if not total:
        sys.exit(f"no samples of process {pid} in phase {slot}'s {len(within)} windows")
    print(f"{total} samples of process {pid} in {len(within)} windows of phase {slot}")
    for name, _, _ in KINDS:
        print(f"{100 * kinds[name] / total:5.1f}%  {name}")
    print("by itself:")
    for name, n in leaves.most_common(15):
        print(f"{100 * n / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
