#!/usr/bin/env python3
"""bench/plain_kernels/ptx_figures.py — what the plain kernels (no tensor cores) become in PTX.

For every plain sample (a samples/*.tile whose code has no `mma(`), each target (sm_90a,
sm_100a) and each codegen of kernels without tensor cores (`--plain-tiles=shared`, "before":
every tile op a loop through shared memory and a barrier; `--plain-tiles=registers`, "after":
tiles in registers, vector accesses, shuffle reductions) it
  1. compiles the sample: `tilec compile SAMPLE --target T --plain-tiles=P -o S.cu`,
  2. lowers the .cu to PTX (`nvcc -std=c++17 -gencode arch=compute_X,code=sm_X -ptx`) and
     assembles the PTX with `ptxas -v` (nvcc -cubin -Xptxas -v where no ptxas sits beside nvcc),
  3. reads, per PTX entry (a kernel instantiated for 32- and 64-bit indices has two):
     vector global accesses (`ld/st.global...v2/v4/v8`, and how many move 16 bytes or more),
     warp shuffles (`shfl.sync`), barriers (`bar.sync`, `barrier.sync`, `bar.red`), 64-bit
     division and remainder (`div/rem.s64/u64`), registers and shared memory (ptxas's static
     bytes plus the launcher's dynamic `shared_bytes`, which ptxas cannot see).
Counts are static (an instruction in a loop counts once). A binary that rejects --plain-tiles
is the first backend: its plain output is "before", and "after" reads n/a.

The goal (issue 17), per sample and target, judged on each codegen:
  - 16-byte accesses: at least one global load, and one global store where the kernel stores,
    moves 16 bytes (a ragged-edge scalar fallback beside it is allowed);
  - no 64-bit div/rem;
  - barriers ≤ 2 × the reductions (`sum(`/`max(` with an axis) in the .tile;
  - no shared memory for elementwise chains: a sample without reductions uses none (with
    reductions, the barrier bound already limits the trips through shared memory).

Run (from the repository root): ninja -C build plain-ptx-figures
 or: bench/plain_kernels/ptx_figures.py [--tilec build/tools/tilec] [--nvcc PATH]
     [--samples softmax,rmsnorm] [--targets sm_90a,sm_100a] [--keep DIR]
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
TARGETS = ["sm_90a", "sm_100a"]
CODEGENS = [("before", "shared"), ("after", "registers")]
METRICS = ["vec", "shfl", "bar", "div64", "smem", "regs"]  # the table's columns, explained under it


# --- the .tile side: which samples are plain, how many reductions they have ---------------------

def strip_comments(text):
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def count_axis_reductions(code):
    """The `sum(...)`/`max(...)` calls with an `axis` among their own arguments."""
    count = 0
    for match in re.finditer(r"\b(sum|max)\s*\(", code):
        depth, position, has_axis = 1, match.end(), False
        while position < len(code) and depth > 0:
            if code[position] == "(":
                depth += 1
            elif code[position] == ")":
                depth -= 1
            elif depth == 1 and re.match(r"axis\b", code[position:]):
                has_axis = True
            position += 1
        count += has_axis
    return count


def plain_samples(samples_dir, wanted):
    """(name, reductions) of the plain samples, all of them or those named in `wanted`."""
    found = []
    for path in sorted(pathlib.Path(samples_dir).glob("*.tile")):
        code = strip_comments(path.read_text())
        if "mma(" not in code:
            found.append((path.stem, count_axis_reductions(code)))
    if wanted:
        names = [name for name, _ in found]
        for name in wanted:
            if name not in names:
                sys.exit(f"ptx_figures: no plain sample named {name!r} in {samples_dir} (plain: {', '.join(names)})")
        found = [entry for entry in found if entry[0] in wanted]
    return found


# --- the PTX side ---------------------------------------------------------------------------------

TEMPLATE_ARGUMENTS = {"i": "int32", "l": "int64", "x": "int64", "j": "uint32", "m": "uint64", "y": "uint64"}


def demangle(name):
    """_Z14rmsnorm_kernelIiEv... -> rmsnorm_kernel<int32>; loose: the name and simple template args."""
    match = re.match(r"_Z(\d+)", name)
    if not match:
        return name
    length = int(match.group(1))
    start = match.end()
    base = name[start:start + length]
    rest = name[start + length:]
    arguments = re.match(r"I([a-z]+)E", rest)
    if arguments:
        spelled = [TEMPLATE_ARGUMENTS.get(code, code) for code in arguments.group(1)]
        return f"{base}<{','.join(spelled)}>"
    return base


FUNCTION_HEADER = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*(\.entry|\.func)\s+(?:\([^)]*\)\s*)?(\w+)", re.M)
CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?(\w+)")
GLOBAL_ACCESS = re.compile(r"\b(ld|st)\.global((?:\.[\w:]+)*?)\.(v[248]\.)?([bfsu])(8|16|32|64|128)\b")
SHUFFLE = re.compile(r"\bshfl\.sync\b")
BARRIER = re.compile(r"\b(?:bar|barrier)(?:\.cta)?\.(?:sync|red)\b")
DIVISION64 = re.compile(r"\b(?:div|rem)\.[su]64\b")


def split_functions(ptx):
    """{name: (kind, text)} for every .entry and .func in the PTX."""
    headers = list(FUNCTION_HEADER.finditer(ptx))
    functions = {}
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(ptx)
        functions[header.group(2)] = (header.group(1), ptx[header.start():end])
    return functions


def count_in(text):
    counts = {"vec": 0, "vec16": 0, "ld16": 0, "st16": 0, "stores": 0, "shfl": 0, "bar": 0, "div64": 0}
    for match in GLOBAL_ACCESS.finditer(text):
        operation, vector, bits = match.group(1), match.group(3), int(match.group(5))
        lanes = int(vector[1]) if vector else 1
        if operation == "st":
            counts["stores"] += 1
        if vector:
            counts["vec"] += 1
        if lanes * bits >= 128:
            counts["vec16"] += 1
            counts["ld16" if operation == "ld" else "st16"] += 1
    counts["shfl"] = len(SHUFFLE.findall(text))
    counts["bar"] = len(BARRIER.findall(text))
    counts["div64"] = len(DIVISION64.findall(text))
    return counts


def entry_counts(ptx):
    """{entry name: counts}, a called .func's instructions added to each entry that calls it."""
    functions = split_functions(ptx)

    def total(name, seen):
        counts = count_in(functions[name][1])
        for callee in CALL.findall(functions[name][1]):
            if callee in functions and callee not in seen:
                for key, value in total(callee, seen | {callee}).items():
                    counts[key] += value
        return counts

    return {name: total(name, {name}) for name, (kind, _) in functions.items() if kind == ".entry"}


def ptxas_resources(log):
    """{entry name: (registers, static shared bytes)} from ptxas -v."""
    resources, current = {}, None
    for line in log.splitlines():
        header = re.search(r"(?:Compiling entry function|Function properties for) '?([\w$]+)'?", line)
        if header:
            current = header.group(1)
        used = re.search(r"Used (\d+) registers", line)
        if used and current:
            shared = re.search(r"(\d+) bytes smem", line)
            resources[current] = (int(used.group(1)), int(shared.group(1)) if shared else 0)
    return resources


def launcher_shared_bytes(cu):
    """{kernel base name: dynamic shared bytes its launcher passes} from the emitted .cu."""
    shared = {}
    for launcher in re.finditer(r'extern "C" cudaError_t launch_\w+\(.*?\n}\n', cu, re.S):
        body = launcher.group(0)
        value = re.search(r"shared_bytes = (\d+)\s*;", body)
        for kernel in set(re.findall(r"TILEC_LAUNCH\(\s*(\w+)", body)):
            shared[kernel] = int(value.group(1)) if value else None
    return shared


# --- running the tools ----------------------------------------------------------------------------

def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return result.returncode, result.stdout + result.stderr


def first_error(output):
    for line in output.splitlines():
        if "error" in line:
            return line.strip()
    return (output.strip().splitlines() or ["(no output)"])[0]


def measure(options, sample, target, plain_tiles, folder):
    """{entry: figures} for one sample, target and codegen, a string saying what failed, or None
    where tilec rejects --plain-tiles."""
    stem = os.path.join(folder, f"{sample}.{target}.{plain_tiles or 'default'}")
    command = [options.tilec, "compile", os.path.join(options.samples_dir, sample + ".tile"),
               "--target", target, "-o", stem + ".cu"]
    if plain_tiles:
        command.append(f"--plain-tiles={plain_tiles}")
    status, output = run(command)
    if status != 0 and plain_tiles and "plain-tiles" in output:
        return None  # the option itself was rejected: n/a
    if status != 0:
        return "tilec failed: " + first_error(output)
    arch = target[len("sm_"):]
    status, output = run([options.nvcc, "-std=c++17", "-gencode", f"arch=compute_{arch},code=sm_{arch}",
                          "-ptx", stem + ".cu", "-o", stem + ".ptx"])
    if status != 0:
        return "nvcc -ptx failed: " + first_error(output)
    if options.ptxas:
        status, log = run([options.ptxas, f"-arch=sm_{arch}", "-v", stem + ".ptx", "-o", stem + ".cubin"])
    else:
        status, log = run([options.nvcc, "-std=c++17", "-gencode", f"arch=compute_{arch},code=sm_{arch}",
                           "-cubin", "-Xptxas", "-v", stem + ".cu", "-o", stem + ".cubin"])
    if status != 0:
        return "ptxas failed: " + first_error(log)
    with open(stem + ".ptxas.log", "w") as file:
        file.write(log)
    ptx = pathlib.Path(stem + ".ptx").read_text()
    dynamic = launcher_shared_bytes(pathlib.Path(stem + ".cu").read_text())
    resources = ptxas_resources(log)
    figures = {}
    for entry, counts in entry_counts(ptx).items():
        name = demangle(entry)
        registers, static_shared = resources.get(entry, (None, None))
        dynamic_shared = dynamic.get(name.split("<")[0], 0)
        counts["regs"] = registers
        counts["smem"] = None if static_shared is None or dynamic_shared is None else static_shared + dynamic_shared
        figures[name] = counts
    return figures


# --- the report -----------------------------------------------------------------------------------

def cell(figures, metric):
    if figures is None:
        return "—"
    if metric == "vec":
        if not figures["vec"]:
            return "no"
        return f"yes {figures['vec']} (16B: {figures['ld16']} ld, {figures['st16']} st)"
    if metric == "shfl":
        return f"yes {figures['shfl']}" if figures["shfl"] else "no"
    value = figures[metric]
    return "?" if value is None else str(value)


def goal_failures(figures, reductions):
    """What one kernel misses of the goal; [] when it meets it."""
    missing = []
    if figures["ld16"] == 0 or (figures["stores"] and figures["st16"] == 0):
        missing.append("16B accesses")
    if figures["div64"]:
        missing.append(f"{figures['div64']} div/rem.64")
    if figures["bar"] > 2 * reductions:
        missing.append(f"{figures['bar']} barriers > {2 * reductions}")
    if reductions == 0 and figures["smem"]:
        missing.append(f"{figures['smem']} B smem")
    return missing


def judge(result, reductions):
    """'yes', 'n/a', or what the entries miss (every entry must meet the goal); a reason that only
    some entries have names them by their template arguments, as <int64>."""
    if result is None:
        return "n/a"
    if isinstance(result, str):
        return "does not compile"
    missing = {}  # reason -> the entries that miss it
    for entry, figures in result.items():
        for reason in goal_failures(figures, reductions):
            missing.setdefault(reason, []).append(entry)
    if not missing:
        return "yes"
    reasons = []
    for reason, entries in missing.items():
        if len(entries) < len(result):
            reason += " in " + ", ".join(entry[entry.find("<"):] if "<" in entry else entry for entry in entries)
        reasons.append(reason)
    return "no: " + ", ".join(reasons)


def find_tool(given, name, beside=None):
    if given:
        return given if os.access(given, os.X_OK) else None
    if beside:
        candidate = os.path.join(os.path.dirname(beside), name)
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found:
        return found
    fallback = f"/usr/local/cuda/bin/{name}"
    return fallback if os.access(fallback, os.X_OK) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0].split(" — ")[1])
    parser.add_argument("--tilec", default="build/tools/tilec")
    parser.add_argument("--nvcc", help="default: nvcc on PATH, else /usr/local/cuda/bin/nvcc")
    parser.add_argument("--samples", default="", help="comma-separated sample names (default: every plain sample)")
    parser.add_argument("--samples-dir", default=str(REPOSITORY / "samples"))
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--keep", help="keep the .cu, .ptx and ptxas logs in this folder")
    options = parser.parse_args()

    if not os.access(options.tilec, os.X_OK):
        sys.exit(f"ptx_figures: no tilec at {options.tilec} (build it: ninja -C build tools/tilec)")
    options.nvcc = find_tool(options.nvcc, "nvcc")
    if not options.nvcc:
        sys.exit("ptx_figures: nvcc not found (give --nvcc PATH)")
    options.ptxas = find_tool(None, "ptxas", beside=options.nvcc)
    targets = [target for target in options.targets.split(",") if target]
    for target in targets:
        if target not in TARGETS:
            sys.exit(f"ptx_figures: unknown target {target!r} (known: {', '.join(TARGETS)})")
    samples = plain_samples(options.samples_dir, [name for name in options.samples.split(",") if name])

    _, help_text = run([options.tilec, "compile", "--help"])
    knows_plain_tiles = "--plain-tiles" in help_text
    codegens = [(column, value if knows_plain_tiles else (None if value == "shared" else "n/a"))
                for column, value in CODEGENS]

    folder = options.keep or tempfile.mkdtemp(prefix="tilec_ptx_figures_")
    os.makedirs(folder, exist_ok=True)
    results = {}  # (sample, target, column) -> {entry: figures} | error text | None (n/a)
    for sample, _ in samples:
        for target in targets:
            for column, plain_tiles in codegens:
                print(f"ptx_figures: {sample} {target} {column}", file=sys.stderr, flush=True)
                results[sample, target, column] = (None if plain_tiles == "n/a" else
                                                   measure(options, sample, target, plain_tiles, folder))

    print("# Plain kernels in PTX: before = --plain-tiles=shared, after = --plain-tiles=registers")
    print()
    print(f"tilec: {options.tilec}" + ("" if knows_plain_tiles else " (no --plain-tiles: its output is 'before', 'after' is n/a)"))
    print(f"nvcc: {options.nvcc}; ptxas: {options.ptxas or 'nvcc -cubin -Xptxas -v'}")
    print()
    header = ["sample", "target", "entry"]
    for metric in METRICS:
        header += [f"{metric} before", f"{metric} after"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    failures = []
    for sample, _ in samples:
        for target in targets:
            before, after = results[sample, target, "before"], results[sample, target, "after"]
            for column, result in (("before", before), ("after", after)):
                if isinstance(result, str):
                    failures.append(f"{sample} {target} {column}: {result}")
            entries = []
            for result in (before, after):
                if isinstance(result, dict):
                    entries += [entry for entry in result if entry not in entries]
            if not entries:
                entries = ["(none)"]
            for entry in entries:
                row = [sample, target, entry]
                for metric in METRICS:
                    for result in (before, after):
                        if result is None:
                            row.append("n/a")
                        elif isinstance(result, str):
                            row.append("fails")
                        else:
                            row.append(cell(result.get(entry), metric))
                print("| " + " | ".join(row) + " |")
    print()
    print("vec: vector global loads/stores (ld/st.global.v2/v4/v8), with how many move 16 bytes; "
          "shfl: shfl.sync; bar: bar.sync/barrier.sync/bar.red; div64: div/rem.s64/u64 "
          "(static PTX counts); smem: ptxas's static bytes + the launcher's dynamic shared_bytes; "
          "regs: ptxas -v; —: no such entry in that codegen.")
    for failure in failures:
        print(f"- {failure}")

    print()
    print("## Goal: 16-byte accesses, no 64-bit div/rem, at most 2 barriers per reduction, "
          "no shared memory for elementwise chains")
    print()
    print("| sample | reductions | target | before | after |")
    print("|---|---|---|---|---|")
    verdicts = {}
    for sample, reductions in samples:
        for target in targets:
            before = judge(results[sample, target, "before"], reductions)
            after = judge(results[sample, target, "after"], reductions)
            verdicts[sample, target] = (before, after)
            print(f"| {sample} | {reductions} | {target} | {before} | {after} |")
    print()
    for column, index in (("before", 0), ("after", 1)):
        meeting = [sample for sample, _ in samples
                   if all(verdicts[sample, target][index] == "yes" for target in targets)]
        if all(verdicts[sample, target][index] == "n/a" for sample, _ in samples for target in targets):
            print(f"Goal met {column}: n/a (no such codegen in this tilec)")
        else:
            print(f"Goal met {column} ({', '.join(targets)}): {', '.join(meeting) if meeting else 'none'}"
                  f" ({len(meeting)} of {len(samples)} plain samples)")
    if options.keep:
        print(f"\nkept: {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
