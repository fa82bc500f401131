#!/usr/bin/env python3
"""bench/runtime/run_times.py — wall time of `tilec run` on every sample, for one or more tilec
binaries side by side (e.g. a build of main against a build of a change to runtime/).

Usage: bench/runtime/run_times.py [--repeat N] [--target T] [--args '...'] TILEC [TILEC ...]
Prints the load average, then per sample the median of N runs of each binary (in seconds) and
the ratio of each binary to the first. The runs alternate between binaries, so drift in the
machine's load spreads over all of them.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", help="tilec executables to compare (the first is the baseline)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per sample and binary (default 5)")
    parser.add_argument("--target", default="sm_90a")
    parser.add_argument("--args", default="", help="extra arguments for `tilec run`")
    options = parser.parse_args()

    samples = sorted((ROOT / "samples").glob("*.tile"))
    print("load average at start: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    header = f"{'sample':<18}" + "".join(f"{pathlib.Path(b).name + ' #' + str(i):>14}" for i, b in enumerate(options.binaries))
    print(header + "   ratio to #0")
    for sample in samples:
        times = [[] for _ in options.binaries]
        failed = False
        for _ in range(options.repeat):
            for index, binary in enumerate(options.binaries):
                command = [binary, "run", str(sample), "--target", options.target] + options.args.split()
                start = time.perf_counter()
                result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                times[index].append(time.perf_counter() - start)
                if result.returncode != 0:
                    print(f"{sample.name}: {binary} failed: {result.stderr.strip()[:200]}", file=sys.stderr)
                    failed = True
        if failed:
            continue
        medians = [statistics.median(t) for t in times]
        ratios = " ".join(f"{m / medians[0]:.2f}" for m in medians[1:])
        print(f"{sample.stem:<18}" + "".join(f"{m:>13.3f}s" for m in medians) + f"   {ratios}")
    print("load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
