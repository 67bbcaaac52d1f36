"""Run a command and print the CPU-seconds it cost the whole machine, by kind of process: the command, the app's
servers, Chromium's renderers and browser, and what they start. ``time`` counts only the children it waits for, and
Chromium's renderers are not among them; this reads every process's CPU time from ``/proc`` every 0.3 s instead
(Linux only), keeping each process's last reading after it ends.

    python scripts/cpu_by_process.py python -m pytest -q -n 0 tests/test_browser.py

Run it on a quiet machine: every process counts, not only the command's. docs/contributing.md records what the
test modules cost, measured with it.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import time


def snapshot() -> dict[str, tuple[str, float]]:
    """Every process: (its kind, CPU-seconds so far)."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as stat, open(f"/proc/{pid}/cmdline") as cmdline:
                fields, command = stat.read().rsplit(")", 1)[1].split(), cmdline.read().replace("\0", " ")
        except OSError:
            continue
        kind = re.search(r"--type=([\w-]+)", command)
        name = ("chromium:" + kind.group(1)) if kind else ("chromium:browser" if "chromium" in command
                                                            else "streamlit server" if "streamlit" in command
                                                            else command[:70])
        out[pid] = (name, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    return out


def main(command: list[str]) -> int:
    before = snapshot()
    proc = subprocess.Popen(command)
    seen: dict[str, tuple[str, float]] = {}
    while proc.poll() is None:
        for pid, (name, cpu) in snapshot().items():
            if not name and pid in seen:   # an ended process reads as no command: keep its kind
                name = seen[pid][0]
            seen[pid] = (name, cpu - before.get(pid, (name, 0.0))[1])
        time.sleep(0.3)
    by_kind: dict[str, float] = collections.defaultdict(float)
    for name, cpu in seen.values():
        by_kind[name] += cpu
    print(f"total {sum(by_kind.values()):.1f} CPU-seconds")
    for name, cpu in sorted(by_kind.items(), key=lambda item: -item[1])[:12]:
        print(f"{cpu:8.1f} {name}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
