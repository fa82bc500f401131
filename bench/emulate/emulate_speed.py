#!/usr/bin/env python3
"""bench/emulate/emulate_speed.py — how fast `tilec emulate` runs the emitted CUDA on the CPU.

For each case (gemm 512³ and 1024³, attention S = T = 1024, on sm_90a and sm_100a) it
  1. builds the emulated program once through `tilec emulate --keep DIR` (the build is cached, so
     no compile time is measured),
  2. times the kept program itself (the emulation alone: fibers, TMA, tensor-core arithmetic)
     with the hazard checker and with --no-hazards, eager schedule, one CTA worker,
  3. times the IR interpreter on the same kernel and shape as the baseline beside it
     (`tilec run --stop-after parse --workers 1`: the kernel as parsed, which is what emulate
     compares against),
and prints medians of --repeat runs with the load average before and after, so a figure taken on
a busy machine is visible as such. Nothing here asserts a time.

A second table times the host compile of one emulated program (the runtime archive already
built): the command `tilec emulate --verbose` prints, rerun as it is (-including the precompiled
headers, linked by gold where it is installed), without the -include (the headers parsed from
text), and without -fuse-ld=gold (GNU ld's link).

Run: ninja -C build emulate-speed
 or: bench/emulate/emulate_speed.py --tilec build/tools/tilec --samples samples [--repeat 3] [--part compile]
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

CASES = [
    ("gemm", "M=512,N=512,K=512", "gemm 512³"),
    ("gemm", "M=1024,N=1024,K=1024", "gemm 1024³"),
    ("attention", "S=1024,T=1024,HD=64", "attention S=T=1024, one head of D=64"),
]
TARGETS = ["sm_90a", "sm_100a"]


def timed(command, env):
    start = time.perf_counter()
    result = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"emulate_speed: {' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return elapsed


def median_of(command, env, repeat):
    return statistics.median(timed(command, env) for _ in range(repeat))


def load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilec", required=True)
    parser.add_argument("--samples", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sms", type=int, default=4)
    parser.add_argument("--part", choices=["all", "run", "compile"], default="all",
                        help="time the emulated runs, the host compile, or both")
    args = parser.parse_args()
    env = dict(os.environ)
    work = tempfile.mkdtemp(prefix="tilec_emulate_speed_")
    env.setdefault("TILEC_CACHE_DIR", os.path.join(work, "cache"))

    print(f"load average before: {load()}")
    if args.part != "compile":
        print(f"emulate-speed: medians of {args.repeat} runs, --sms {args.sms}, one CTA worker, eager schedule")
        print(f"{'case':40} {'target':8} {'emulated':>10} {'no hazards':>11} {'interpreter':>12}")
    for sample, dims, title in CASES if args.part != "compile" else []:
        tile = os.path.join(args.samples, sample + ".tile")
        for target in TARGETS:
            keep = os.path.join(work, f"{sample}_{target}_{dims.replace(',', '_').replace('=', '')}")
            build = [args.tilec, "emulate", tile, "--target", target, "--dims", dims, "--sms", str(args.sms),
                     "--schedules", "1", "--keep", keep]
            timed(build, env)  # builds (cached) and checks the result once
            script = [os.path.join(keep, f"run_{sample}.sh")]
            emulated = median_of(script, env, args.repeat)
            unchecked = median_of(script + ["--no-hazards"], env, args.repeat)
            interpreter = median_of([args.tilec, "run", tile, "--target", target, "--dims", dims, "--sms",
                                     str(args.sms), "--stop-after", "parse", "--workers", "1"], env, args.repeat)
            print(f"{title:40} {target:8} {emulated:9.2f}s {unchecked:10.2f}s {interpreter:11.2f}s", flush=True)
    if args.part != "run":
        compile_times(args, env, work)
    print(f"load average after: {load()}")


COMPILE_CASES = [("gemm", "sm_90a"), ("gemm", "sm_100a"), ("softmax", "sm_90a")]


def compile_times(args, env, work):
    print(f"\nhost compile of one emulated program, medians of {args.repeat}")
    print(f"{'sample':12} {'target':8} {'as tilec builds':>16} {'headers as text':>16} {'GNU ld':>8}")
    for sample, target in COMPILE_CASES:
        cu = os.path.join(work, f"{sample}_{target}.cu")
        subprocess.run([args.tilec, "compile", os.path.join(args.samples, sample + ".tile"), "--target", target,
                        "-o", cu], env=env, check=True)
        with open(cu, "a") as out:  # a .cu no earlier run built, so that the program is compiled
            out.write(f"// emulate_speed {time.time()}\n")
        result = subprocess.run([args.tilec, "emulate", os.path.join(args.samples, sample + ".tile"), "--target",
                                 target, "--cu", cu, "--dims", "M=128,N=128,K=64,R=64", "--schedules", "1",
                                 "--keep", os.path.join(work, f"{sample}_{target}_kept"), "--verbose"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = result.stderr.splitlines()
        command = next((shlex.split(lines[i + 1].removeprefix("tilec:   ")) for i, line in enumerate(lines[:-1])
                        if line == f"tilec: compiling {cu}"), None)
        if result.returncode != 0 or command is None:
            sys.exit(f"emulate_speed: emulating {cu} printed no compile command ({result.returncode}):\n{result.stderr}")
        command[command.index("-o") + 1] = os.path.join(work, "program")
        plain = list(command)
        if "-include" in plain:
            at = plain.index("-include")
            del plain[at - 1:at + 2]  # -Winvalid-pch -include HEADER
        gnu_ld = [word for word in command if word != "-fuse-ld=gold"]
        gnu_ld_time = f"{median_of(gnu_ld, env, args.repeat):7.2f}s" if gnu_ld != command else f"{'(same)':>8}"
        print(f"{sample:12} {target:8} {median_of(command, env, args.repeat):15.2f}s "
              f"{median_of(plain, env, args.repeat):15.2f}s {gnu_ld_time}", flush=True)


if __name__ == "__main__":
    main()
