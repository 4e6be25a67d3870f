"""Run the benchmarks and print their tables; `--record` appends them to bench/RESULTS.md.

    python bench/run.py --quick            # a minute or two
    python bench/run.py --record           # the full figures, recorded with date and machine
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import config_bench
import replay_bench
import scale_bench
import tracking_bench


def machine() -> str:
    cpu = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}),"
            f" Python {platform.python_version()}")


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    sections = [
        ("Decisions: actors vs the one-lock baseline (1k users, 100 groups, depth 4)",
         tracking_bench.table(tracking_bench.run(quick))),
        ("Batch API", tracking_bench.batch_table(tracking_bench.run_batches(quick))),
        ("Scale: users with live usage", scale_bench.table(scale_bench.run(quick))),
        ("Config apply: 10k limit entries under load", config_bench.table(config_bench.run())),
        ("Replay: the main job against the demo's replay",
         replay_bench.table(replay_bench.run(quick))),
    ]
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    out = [f"## {stamp}{' (quick)' if quick else ''}", "", f"Machine: {machine()}", ""]
    for title, body in sections:
        out += [f"### {title}", "", body, ""]
    text = "\n".join(out)
    print(text)
    if "--record" in argv:
        results = Path(__file__).resolve().parent / "RESULTS.md"
        with results.open("a") as fh:
            fh.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
