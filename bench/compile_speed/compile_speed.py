#!/usr/bin/env python3
# bench/compile_speed/compile_speed.py — how long tilec takes next to the nvcc compile it feeds.
#
# For every samples/*.tile: the median wall time of the whole `tilec compile` process (--runs,
# default 11), writing to /dev/null; a kernel the CUDA backend cannot emit yet (tensor cores)
# is timed with --emit ir instead, and the row says so. For each emitted .cu, the median of
# --nvcc-runs (default 3) `nvcc -std=c++17 -gencode ... -c` compiles, and the ratio
# tilec / nvcc. A first row times `tilec --help`, the process start-up every compile pays.
# Then a scaling table (generated kernels of 1,000 to 16,000 statements: is compile time linear?)
# and gemm's --time-passes report, showing where tilec's time goes.
# Usage: compile_speed.py --tilec build/tools/tilec [--samples samples] [--nvcc PATH]
#        [--target sm_90a|sm_100a] [--runs 11] [--nvcc-runs 3]
import argparse
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed_run(command):
    """Runs command, returns (seconds, completed process)."""
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return time.perf_counter() - start, done


def median_time(command, runs):
    times = []
    for _ in range(runs):
        seconds, done = timed_run(command)
        if done.returncode != 0:
            sys.exit(f"compile_speed: {' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
        times.append(seconds)
    return statistics.median(times)


def cpu_name():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def find_nvcc(given):
    if given:
        return given
    found = shutil.which("nvcc")
    if found:
        return found
    return "/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None


# Generated kernels of n statements: `rebind` reassigns one name n times (every CUDA and IR name
# then needs a fresh suffix), `lets` gives each of n values its own name. Linear time is the
# goal: the last column, ms per 1,000 statements, should stay flat as n grows.
SCALING_SIZES = (1000, 4000, 16000)


def scaling_kernel(family, n):
    lines = ["kernel k(X: tensor<N, f32>, Y: tensor<N, f32>) grid tiles(cdiv(N, 128)) as (i) {",
             "  v0 = load X[i] : <128>;"]
    if family == "rebind":
        lines += ["  v0 = v0 * 1.0001;"] * n
        lines.append("  store Y[i] = v0;")
    else:
        lines += [f"  v{j} = v{j - 1} * 1.0001 + 0.5;" for j in range(1, n + 1)]
        lines.append(f"  store Y[i] = v{n};")
    return "\n".join(lines + ["}", ""])


def scaling(options):
    print()
    print(f"scaling: tilec compile of generated kernels, median of 3 (-o /dev/null, target {options.target})")
    print(f"{'family':<8} {'statements':>10} {'ms':>9} {'ms/1000':>9}")
    with tempfile.TemporaryDirectory(prefix="tilec_compile_scaling_") as scratch:
        for family in ("rebind", "lets"):
            for n in SCALING_SIZES:
                tile = pathlib.Path(scratch) / f"{family}{n}.tile"
                tile.write_text(scaling_kernel(family, n))
                seconds = median_time([options.tilec, "compile", str(tile), "--target", options.target,
                                       "-o", os.devnull], 3)
                print(f"{family:<8} {n:>10} {seconds * 1e3:9.0f} {seconds * 1e6 / n:9.1f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description="tilec compile time against nvcc's")
    parser.add_argument("--tilec", required=True)
    parser.add_argument("--samples", default=str(pathlib.Path(__file__).resolve().parents[2] / "samples"))
    parser.add_argument("--nvcc")
    parser.add_argument("--target", default="sm_90a", choices=["sm_90a", "sm_100a"])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--nvcc-runs", type=int, default=3)
    options = parser.parse_args()

    nvcc = find_nvcc(options.nvcc)
    compute = options.target.replace("sm_", "compute_")
    tiles = sorted(pathlib.Path(options.samples).glob("*.tile"))
    if not tiles:
        sys.exit(f"compile_speed: no .tile files in {options.samples}")
    load = os.getloadavg()
    print(f"compile-speed: target {options.target}; tilec median of {options.runs} runs, "
          f"nvcc median of {options.nvcc_runs}")
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"nvcc: {nvcc or 'not found (nvcc columns left empty)'}")
    print()
    print(f"{'sample':<12} {'emits':<5} {'tilec ms':>9} {'nvcc ms':>9} {'tilec/nvcc':>10}")

    startup_seconds = median_time([options.tilec, "--help"], options.runs)
    print(f"{'(start-up)':<12} {'-':<5} {startup_seconds * 1e3:9.1f} {'-':>9} {'-':>10}   tilec --help: process start alone")
    notes = []
    with tempfile.TemporaryDirectory(prefix="tilec_compile_speed_") as scratch:
        for tile in tiles:
            cu = pathlib.Path(scratch) / (tile.stem + ".cu")
            base = [options.tilec, "compile", str(tile), "--target", options.target]
            _, first = timed_run(base + ["-o", str(cu)])
            emits = "cu" if first.returncode == 0 else "ir"
            if emits == "ir":
                reason = first.stderr.strip().splitlines()[0] if first.stderr.strip() else "no reason printed"
                notes.append(f"{tile.stem}: the CUDA backend cannot emit it yet, timed with --emit ir ({reason})")
            timed = base + ["-o", os.devnull] + (["--emit", "ir"] if emits == "ir" else [])
            tilec_seconds = median_time(timed, options.runs)
            nvcc_cell, ratio_cell = "-", "-"
            if emits == "cu" and nvcc:
                nvcc_command = [nvcc, "-std=c++17", "-gencode", f"arch={compute},code={options.target}",
                                "-c", str(cu), "-o", str(cu.with_suffix(".o"))]
                nvcc_seconds = median_time(nvcc_command, options.nvcc_runs)
                nvcc_cell = f"{nvcc_seconds * 1e3:9.0f}"
                ratio_cell = f"{100 * tilec_seconds / nvcc_seconds:9.2f}%"
            print(f"{tile.stem:<12} {emits:<5} {tilec_seconds * 1e3:9.1f} {nvcc_cell:>9} {ratio_cell:>10}", flush=True)

    for note in notes:
        print(f"note: {note}")
    scaling(options)
    gemm = pathlib.Path(options.samples) / "gemm.tile"
    if gemm.exists():
        print()
        print(f"tilec compile {gemm} --emit ir -o /dev/null --time-passes --target {options.target}:")
        _, done = timed_run([options.tilec, "compile", str(gemm), "--emit", "ir", "-o", os.devnull,
                             "--time-passes", "--target", options.target])
        print(done.stderr.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
