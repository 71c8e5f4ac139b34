"""Run a command and report the peak resident memory of it and all its child processes together.

    python3 .ci/peak_memory.py --limit-gb 12 -- /usr/bin/time -v python3 -m pytest -q -n 2

Samples /proc every 0.5 s (the sum of VmRSS over the process tree: both xdist workers and the controller;
``/usr/bin/time -v`` alone reports only the largest single process). Exits with the command's status, or 3 when
the command passed but the peak exceeded the limit.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def tree_rss_kib(root: int) -> int:
    """Sum of VmRSS (KiB) over ``root`` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
        except OSError:
            continue
    return total


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit-gb", type=float, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    start = time.monotonic()
    proc = subprocess.Popen(command)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_kib(proc.pid))
        time.sleep(0.5)
    gb = peak / 2**20
    print(f"peak memory of the test processes together: {gb:.2f} GiB (limit {args.limit_gb:g}); "
          f"wall time {time.monotonic() - start:.0f} s", file=sys.stderr)
    if proc.returncode != 0:
        return proc.returncode
    return 3 if gb > args.limit_gb else 0


if __name__ == "__main__":
    sys.exit(main())
