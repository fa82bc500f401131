#!/usr/bin/env python3
"""Run every sample's emitted CUDA on a GPU: correctness against its naive reference, timings,
cuBLAS/cuDNN baselines through PyTorch, and compute-sanitizer.

Two steps, so that the device machine only runs programs:
  bench/gpu/gpu_check.py build [--tilec build/tools/tilec] [--nvcc PATH] [--out build-gpu]
      here: `tilec compile --emit-harness --target sm_90a` for every sample and every plain
      kernel of tests/emulate/kernels/ (the plain ones once more with --plain-tiles=shared) and
      for the VARIANTS below into build-gpu-src, then nvcc each .cu to a program in build-gpu
      (skipped where the program was built from the same .cu before).
  bench/gpu/gpu_check.py run [--dir build-gpu] [--out DIR] [--stages checks,tc-timings,...] [--deadline S]
      on a machine with an sm_90a GPU: runs the programs, writes DIR/gpu_check.md (tables),
      DIR/gpu_check.json and DIR/gpu_check.log (every program's output).

The correctness shapes are those of the CPU emulation sweep (tests/emulate/sample_sweep.json, which
tests/emulate/samples_emulate_test.cpp reads too), which cover ragged edges, one k-step, pipelines
that never fill and persistent rounds, plus one larger shape per tensor-core sample so that CTAs
take several tiles on 132 SMs.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]



def is_plain(sample):
    return "mma(" not in (ROOT / "samples" / f"{sample}.tile").read_text()


def sweep_shapes():
    """The emulation sweep's shapes, tests/emulate/sample_sweep.json (JSON with whole-line //
    comments): {sample: [(shape name, dims), ...]} in the file's order."""
    text = "".join(line for line in (ROOT / "tests/emulate/sample_sweep.json").read_text().splitlines(True)
                   if not line.lstrip().startswith("//"))
    groups = json.loads(text)["groups"]
    shapes = {}
    for group in groups:
        entries = group.get("shapes")
        if entries is None:  # "like": the shapes of the group holding that sample, less "except"
            entries = next(g["shapes"] for g in groups if "shapes" in g and group["like"] in g["samples"])
            entries = [e for e in entries if e["name"] not in group.get("except", [])]
        for sample in group["samples"]:
            shapes.setdefault(sample, []).extend((e["name"], e["dims"]) for e in entries)
    return shapes


SWEEP = sweep_shapes()
# One larger shape per tensor-core sample, so that CTAs take several tiles on 132 SMs.
GPU_ROUNDS = {
    "gemm": "M=2000,N=4000,K=1000", "gemm_f16": "M=2000,N=4000,K=1000", "gemm_bias_relu": "M=2000,N=4000,K=1000",
    "linear": "M=2000,N=4000,K=1000", "gate_up": "M=2000,N=4000,K=1000", "fp8_linear": "M=2000,N=4000,K=1008",
    "int8_linear": "M=2000,N=4000,K=1008", "w8a16_linear": "M=2000,N=4000,K=1008",
    "w4a16_linear": "M=2000,N=4000,K=1024,KP=512,G=8", "w4a8_linear": "M=2000,N=4000,K=1024,KP=512",
    "tf32_linear": "M=2000,N=4000,K=1000", "weight_grad": "IN=2000,OUT=4000,T=1000",
    "batched_gemm": "R=4096,N=4000,K=200,Q=2048", "bmm": "BATCH=8,M=1000,N=1000,K=1000",
    "attention": "S=2000,T=1000,HD=1024", "conv1d": "T=8000,CI=1000,CO=1000,TAPS=3",
    "mha": "H=16,S=2000,T=1000", "fp8_attention": "S=2000,T=1000,HD=1024",
    "moe_grouped_gemm": "M=2000,N=4000,K=1000,E=8", "gqa_attention": "BATCH=2,H=16,G=4,S=2000,T=1000",
    # causal_attention's reference runs one GPU thread per 128-row query block, over all the keys
    # before it: at 16896 rows and more it runs past 20 s (run 17), so its rounds are checked by the
    # BQ = 64 variant below (313 blocks on 132 SMs) and the sample at 63 blocks.
    "causal_attention": "S=8000", "attention_backward": "S=3000,T=20000",
    "splitk_gemm": "M=1000,N=1000,K=8000", "syrk": "N=4000,K=1000",
}
# (sample, shape name, dims) — every dims string is NAME=VALUE,...; the harness reads NAME=VALUE.
CHECKS = []
for s, shapes in SWEEP.items():
    if not is_plain(s):  # a tensor-core sample without a GPU_ROUNDS shape is a KeyError here
        CHECKS += [(s, name, dims) for name, dims in shapes] + [(s, "gpu_rounds", GPU_ROUNDS[s])]
# Variants of samples that the emulation tests also run (tests/emulate/emulate_cli_test.cpp):
# name -> (sample, [(text, replacement)], [-D NAME=VALUE]).
VARIANTS = {
    "gemm_bm64": ("gemm", [], ["BM=64"]),
    "gate_up_bm64": ("gate_up", [], ["BM=64"]),
    "bmm_bm64": ("bmm", [], ["BM=64"]),
    "gemm_cluster2": ("gemm", [("cluster = 1", "cluster = 2")], []),
    "gemm_tiles": ("gemm", [("grid persistent(cdiv(M, BM), cdiv(N, BN), swizzle = 8, cluster = 1)",
                             "grid tiles(cdiv(M, BM), cdiv(N, BN))")], []),
    "attention_keys_as_rows": ("attention", [("Kt: tensor<HD, T, bf16>", "K: tensor<T, HD, bf16>"),
                                             ("kt = load Kt[h, j] : <D, BKV>;", "kt = transpose(load K[j, h] : <BKV, D>);")], []),
    # Other tile constants, to compare with the samples' own.
    "tf32_linear_bn128": ("tf32_linear", [], ["BN=128"]),  # the sample's width before it took 256
    "attention_bkv128": ("attention", [], ["BKV=128"]),
    # pipeline(3): the row max crosses three stages in a register pipe the key loop carries (it
    # compiles since 2026-11-26; emulate_cli_test runs it with K as rows).
    "attention_stages3": ("attention", [], ["STAGES=3"]),
    # BK = 32: A in the 64-byte swizzle (emulated since 2026-11-26, never run on a GPU).
    "gemm_bk32": ("gemm", [], ["BK=32"]),
    # N = 32 and 16: B in one 64- or 32-byte panel, sm_100a's tcgen05.ld .x16 / .x8; attention
    # with BKV = 32 (P staged in the 64-byte swizzle on sm_100a). Emulated since 2026-11-26.
    "gemm_bn32": ("gemm", [], ["BN=32"]),
    "gemm_bn16": ("gemm", [], ["BN=16"]),
    "attention_bkv32": ("attention", [], ["BKV=32"]),
    # Query blocks smaller than key blocks (emulate_kernels_test runs it).
    "causal_attention_bq64": ("causal_attention", [], ["BQ=64", "BKV=128"]),
}
CHECKS += [
    ("gemm", "unaligned_k", "M=136,N=300,K=100"), ("gemm", "unaligned_n", "M=64,N=131,K=72"),
    ("gemm_bm64", "ragged", "M=200,N=296,K=136"), ("gemm_bm64", "gpu_rounds", "M=2000,N=4000,K=1000"),
    ("gate_up_bm64", "ragged", "M=136,N=200,K=200"), ("gate_up_bm64", "gpu_rounds", "M=2000,N=4000,K=1000"),
    ("bmm_bm64", "ragged", "BATCH=3,M=70,N=136,K=72"), ("bmm_bm64", "gpu_rounds", "BATCH=8,M=1000,N=1000,K=1000"),
    ("gemm_cluster2", "ragged", "M=520,N=264,K=136"), ("gemm_cluster2", "gpu_rounds", "M=2000,N=4000,K=1000"),
    ("gemm_tiles", "ragged", "M=200,N=296,K=136"), ("gemm_tiles", "gpu_rounds", "M=2000,N=4000,K=1000"),
    ("attention_keys_as_rows", "ragged", "S=200,HD=128,T=136"),
    ("attention_keys_as_rows", "gpu_rounds", "S=2000,HD=1024,T=1000"),
    ("tf32_linear_bn128", "ragged", "M=200,N=296,K=200"), ("tf32_linear_bn128", "gpu_rounds", "M=2000,N=4000,K=1000"),
    ("attention_bkv128", "ragged_t", "S=200,T=200,HD=64"), ("attention_bkv128", "gpu_rounds", "S=2000,T=1000,HD=1024"),
    ("attention_stages3", "ragged_t", "S=200,T=200,HD=128"), ("attention_stages3", "gpu_rounds", "S=2000,T=1000,HD=1024"),
    ("gemm_bk32", "ragged", "M=200,N=296,K=200"), ("gemm_bk32", "gpu_rounds", "M=2000,N=4000,K=1000"),
    ("gemm_bn32", "ragged", "M=200,N=72,K=200"), ("gemm_bn32", "gpu_rounds", "M=2000,N=1000,K=1000"),
    ("gemm_bn16", "ragged", "M=200,N=40,K=200"), ("gemm_bn16", "gpu_rounds", "M=2000,N=1000,K=1000"),
    ("attention_bkv32", "ragged_t", "S=200,T=200,HD=128"), ("attention_bkv32", "gpu_rounds", "S=2000,T=1000,HD=1024"),
    ("causal_attention_bq64", "ragged", "S=200"), ("causal_attention_bq64", "gpu_rounds", "S=20000"),
]
# The plain samples, in both forms (the register form, and .shared: --plain-tiles=shared).
for s, shapes in SWEEP.items():
    if is_plain(s):
        for name, dims in shapes:
            CHECKS += [(s, name, dims), (s + ".shared", name, dims)]


def emulate_kernels():
    """The plain kernels of tests/emulate/kernels/ (the emulation tests' own, each NAME.tile with
    its shape on its first line, "// dims: ..."): {name: (path, dims)}."""
    kernels = {}
    for tile in sorted((ROOT / "tests/emulate/kernels").glob("*.tile")):
        first = tile.read_text().split("\n", 1)[0]
        if not first.startswith("// dims: "):
            sys.exit(f"{tile}: the first line is not '// dims: ...'")
        kernels[tile.stem] = (tile, first[len("// dims: "):].strip())
    return kernels


EMULATE_KERNELS = emulate_kernels()
for s, (_, dims) in EMULATE_KERNELS.items():
    CHECKS += [(s, "emulate_test", dims), (s + ".shared", "emulate_test", dims)]

# The tensor-core kernels of tests/emulate/tensor_core/ at the shapes tests/emulate/
# emulate_kernels_test.cpp emulates them (name -> dims), and one larger shape where the kernel
# takes any: {name: [dims, ...]}. Their programs are named tc_NAME (kernels/ has names of its own
# that are the same: column_vectors, emitter_names).
TENSOR_CORE_KERNELS = {
    "linear_bias": ["M=200,N=296,K=72", "M=2000,N=4000,K=1000"],
    "int8_mixed": ["M=200,N=296,K=200", "M=2000,N=4000,K=1008"],
    "both_ways": ["S=200,T=136", "S=2000,T=1000"],
    "roles": ["S=200,T=136", "S=2000,T=1000"],
    "tf32_mlp": ["M=200,N=136,K=72,HID=56"],
    "attention_lse": ["S=200,T=136,HD=128,H=2", "S=2000,T=1000,HD=1024,H=16"],
    "expert_linear": ["E=2,M=200,N=136,K=72", "E=8,M=1000,N=1000,K=1000"],
    "negative_coordinates": ["M=200,N=136,K=72", "M=2000,N=4000,K=1000"],
    "key_padding_attention": ["B=2,H=2,S=136,T=72", "B=4,H=8,S=1000,T=1000"],
    "device_scalars": ["B=3,G=2,M=100,N=72,K=40"],
    "minus_one_store": ["M=200,N=136,K=72"],
    "row_argmax": ["M=200,K=72,V=200,NB=4"],
    "accumulate_epilogue": ["M=200,N=136,K=200", "M=2000,N=4000,K=1000"],
    "extrema_epilogue": ["M=200,N=136,K=200", "M=2000,N=4000,K=1000"],
    "column_extrema": ["M=400,N=300,K=72", "M=2000,N=4000,K=1000"],
    "column_reductions": ["M=200,N=300,K=72"],
    "transposed_register_a": ["S=200,T=136", "S=2000,T=1000"],
    "attention_backward_dq": ["S=200,T=136", "S=3000,T=20000"],
    "if_tile": ["M=300,N=136,K=100,S=200,T=296,HD=128", "M=2000,N=4000,K=1000,S=2000,T=1000,HD=1024"],
    "block_sparse": ["M=200,N=72,K=256,NNZ=3,E=2"],
    "empty_k_loop": ["B=2,M=200,N=72,K=64"],
    "sdpa_bhsd": ["B=2,H=3,S=136,T=72", "B=2,H=16,S=1000,T=1000"],
    "emitter_names": ["M=130,N=200,K=64"],
    "dual_gemm": ["M=200,N=72,K=136", "M=2000,N=1000,K=1000"],
    "column_vectors": ["M=200,N=128,K=72,B=2,H=2,S=130,T=100"],
    # One column of a tile broadcast along the columns; MXFP4-style weights in a computed B.
    "broadcast_columns": ["M=200,K=136,KP=68,N=200,G=5,F=4", "M=2000,K=1024,KP=512,N=4000,G=32,F=4"],
    # interleave(): 4-bit weights packed in order (two a byte along K, AWQ's and GPTQ's eight a
    # word) in computed Bs, interleaved loads in an epilogue and as a register A.
    "interleave": ["M=200,K=136,KP=68,NP=25,K8=17,N=200,NH=100,KH=68",
                   "M=2000,K=1024,KP=512,NP=500,K8=128,N=4000,NH=2000,KH=512"],
    # Rows and steps of loaded tiles: weights packed planar along K (a concat along axis 0).
    "row_moves": ["M=200,K=136,KH=68,N=200,MH=100,M2=400,N2=400"],
    # Stores of a tensor the kernel then reads (direct) or stores again (TMA, waiting between).
    "stores_then_reads": ["M=200,N=101,K=300", "M=2000,N=1000,K=1000"],
    # An 8-bit float register A, fed as registers on sm_90a. With whole inputs (integers=1): the
    # hidden layer cast to 8 bits is exact then. With inputs in [-1, 1), the tensor cores' FP8 sums
    # round h differently from the reference's f32 ones, and the cast flips some of h's 8-bit
    # values: 1120 of 27200 outputs off by up to 0.25 on an H200 (run 18), exact with integers=1.
    "fp8_mlp": ["M=200,N=136,K=200,HID=100,integers=1", "M=2000,N=1000,K=1024,HID=128,integers=1"],
}
# First in the checks stage: a run that reaches its deadline (run 21) should not cut off these,
# the kernels that test the tensor-core backend's newest paths.
CHECKS = [("tc_" + s, "emulate_test" if i == 0 else "gpu_rounds", dims)
          for s, shapes in TENSOR_CORE_KERNELS.items() for i, dims in enumerate(shapes)] + CHECKS

# Timings: tensor-core samples at 8192 (check=0: the reference only counts the work), plain
# samples at a few hundred MB in both forms (their reference always runs).
TC_TIMINGS = [("gemm", "M=8192,N=8192,K=8192"), ("gemm_f16", "M=8192,N=8192,K=8192"),
              ("linear", "M=8192,N=8192,K=8192"), ("gemm_bias_relu", "M=8192,N=8192,K=8192"),
              ("gate_up", "M=8192,N=8192,K=8192"), ("fp8_linear", "M=8192,N=8192,K=8192"),
              ("int8_linear", "M=8192,N=8192,K=8192"), ("w8a16_linear", "M=8192,N=8192,K=8192"),
              ("w4a16_linear", "M=8192,N=8192,K=8192,KP=4096,G=64"), ("w4a8_linear", "M=8192,N=8192,K=8192,KP=4096"),
              ("moe_grouped_gemm", "M=8192,N=8192,K=8192,E=8"),
              ("tf32_linear", "M=8192,N=8192,K=8192"), ("weight_grad", "IN=8192,OUT=8192,T=8192"),
              ("conv1d", "T=65536,CI=1024,CO=1024,TAPS=3"),
              ("bmm", "BATCH=8,M=4096,N=4096,K=4096"), ("attention", "S=4096,T=4096,HD=1024"),
              ("fp8_attention", "S=4096,T=4096,HD=1024"),
              ("mha", "H=16,S=4096,T=4096"),  # the sdpa baseline's shape: 16 heads of 64
              ("gqa_attention", "BATCH=1,H=16,G=16,S=4096,T=4096"),  # mha's work in [B, S, H, D]: 4-D boxes
              ("gemm_bm64", "M=8192,N=8192,K=8192"), ("gemm_cluster2", "M=8192,N=8192,K=8192"),
              ("gemm_tiles", "M=8192,N=8192,K=8192"), ("attention_keys_as_rows", "S=4096,T=4096,HD=1024"),
              ("tf32_linear_bn128", "M=8192,N=8192,K=8192"), ("attention_bkv128", "S=4096,T=4096,HD=1024"),
              ("attention_stages3", "S=4096,T=4096,HD=1024"), ("gemm_bk32", "M=8192,N=8192,K=8192"),
              ("gemm_bn32", "M=8192,N=8192,K=8192"), ("attention_bkv32", "S=4096,T=4096,HD=1024"),
              # One head over 16384 rows: 128 CTAs (the grids walk query or key blocks of 128).
              ("causal_attention", "S=16384"), ("attention_backward", "S=16384,T=16384"),
              # Split-K's shape: 16 x 16 output tiles x 4 splits = 1024 CTAs, each a quarter of K.
              ("splitk_gemm", "M=2048,N=2048,K=16384")]
PLAIN_TIMINGS = [("vector_add", "N=67108864"), ("scale_relu", "M=8192,N=8192"), ("broadcast", "R=8192,C=8192"),
                 ("reduction_tree", "R=32768"), ("silu", "M=8192,N=8192"), ("rope", "T=131072"),
                 ("softmax", "R=131072"),
                 ("layernorm", "R=262144"), ("rmsnorm", "R=131072"), ("add_layernorm", "R=65536"),
                 ("column_sum", "M=16384,N=16384"), ("gemv", "M=65536,K=2048"), ("transpose", "R=8192,C=8192")]

SANITIZER_RUNS = [("gemm", "M=200,N=296,K=200"), ("attention", "S=200,T=200,HD=64"),
                  ("gate_up", "M=300,N=520,K=72"), ("softmax", "R=7"), ("gemv", "M=37,K=1000"),
                  ("mha", "H=2,S=200,T=136"), ("gemm_bn16", "M=200,N=40,K=200"),
                  ("attention_bkv32", "S=200,T=200,HD=128"), ("int8", EMULATE_KERNELS["int8"][1]),
                  ("cumsum", EMULATE_KERNELS["cumsum"][1]), ("attention_backward", "S=200,T=136"),
                  ("causal_attention", "S=200"), ("int8_linear", "M=200,N=296,K=256"),
                  ("fp8_attention", "S=200,T=136,HD=64"), ("gqa_attention", "BATCH=1,H=2,G=1,S=136,T=200"),
                  ("rope", "T=300"), ("rope.shared", "T=300"), ("tc_roles", "S=200,T=136"),
                  ("tc_both_ways", "S=200,T=136"), ("tc_key_padding_attention", "B=2,H=2,S=136,T=72"),
                  ("tc_row_argmax", "M=200,K=72,V=200,NB=4"), ("tc_device_scalars", "B=3,G=2,M=100,N=72,K=40"),
                  ("batched_gemm", "R=1024,N=136,K=104,Q=256"), ("moe_grouped_gemm", "M=200,N=296,K=200,E=2"),
                  ("conv1d", "T=300,CI=200,CO=136,TAPS=3"), ("tc_attention_lse", "S=200,T=136,HD=128,H=2"),
                  ("tc_fp8_mlp", "M=200,N=136,K=200,HID=100,integers=1"), ("splitk_gemm", "M=200,N=136,K=680")]


def emit(args, tile, src, program, extra):
    """tilec compile TILE --emit-harness to SRC/PROGRAM.cu; returns the (.cu, program) job for nvcc."""
    cu = src / f"{program.name}.cu"
    r = subprocess.run([args.tilec, "compile", str(tile), "--target", "sm_90a", "--emit-harness", *extra,
                        "-o", str(cu)], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{program.name}: tilec compile FAILED\n{r.stderr}", flush=True)
        return None
    return cu, program


def build(args):
    out = Path(args.out)  # the programs alone, so that out travels to the GPU; sources in out-src
    src = out.with_name(out.name + "-src")
    out.mkdir(parents=True, exist_ok=True)
    src.mkdir(parents=True, exist_ok=True)
    jobs = []
    tiles = [(tile.stem, tile, is_plain(tile.stem)) for tile in sorted((ROOT / "samples").glob("*.tile"))]
    tiles += [(name, tile, True) for name, (tile, _) in EMULATE_KERNELS.items()]
    tiles += [("tc_" + name, ROOT / "tests/emulate/tensor_core" / f"{name}.tile", False) for name in TENSOR_CORE_KERNELS]
    for name, tile, plain in tiles:
        forms = [("", [])]
        if plain:
            forms.append((".shared", ["--plain-tiles=shared"]))
        for suffix, extra in forms:
            jobs.append(emit(args, tile, src, out / f"{name}{suffix}", extra))
    for name, (sample, edits, defines) in VARIANTS.items():
        text = (ROOT / "samples" / f"{sample}.tile").read_text()
        for before, after in edits:
            if before not in text:
                sys.exit(f"variant {name}: samples/{sample}.tile no longer contains {before!r}")
            text = text.replace(before, after, 1)
        tile = src / f"{name}.tile"
        tile.write_text(text)
        jobs.append(emit(args, tile, src, out / name, [f"-D{d}" for d in defines]))

    def nvcc(job):
        cu, program = job
        built = src / f"{cu.name}.built"
        if program.exists() and built.exists() and built.read_bytes() == cu.read_bytes():
            return cu.name, 0, ""  # built from this very .cu before
        r = subprocess.run([args.nvcc, "-std=c++17", "-O3", "-gencode", "arch=compute_90a,code=sm_90a",
                            str(cu), "-o", str(program)], capture_output=True, text=True)
        if r.returncode == 0 and shutil.which("strip"):  # host symbols only: keeps the carried folder small
            subprocess.run(["strip", str(program)], check=False)
        if r.returncode == 0:
            shutil.copyfile(cu, built)
        return cu.name, r.returncode, r.stderr

    failed = sum(job is None for job in jobs)
    jobs = [job for job in jobs if job is not None]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, rc, err in pool.map(nvcc, jobs):
            print(f"{name}: {'ok' if rc == 0 else 'FAILED'}", flush=True)
            if rc:
                failed += 1
                print(err)
    return 1 if failed else 0


class Runner:
    def __init__(self, directory, out, deadline):
        self.deadline = time.time() + deadline
        self.dir = Path(directory)
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.log = open(self.out / "gpu_check.log", "a")
        self.results = {"checks": [], "timings": [], "baselines": {}, "sanitizer": [], "device": ""}

    def run(self, argv, timeout):
        start = time.time()
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
            text, rc = r.stdout + r.stderr, r.returncode
        except OSError as e:
            text, rc = f"could not run: {e}", 127
        except subprocess.TimeoutExpired as e:
            text = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            text += f"\nTIMEOUT after {timeout} s"
            rc = 124
        seconds = time.time() - start
        self.log.write(f"$ {' '.join(argv)}  (rc {rc}, {seconds:.1f} s)\n{text}\n")
        self.log.flush()
        return rc, text

    def past_deadline(self):
        return time.time() > self.deadline

    def save(self):
        (self.out / "gpu_check.json").write_text(json.dumps(self.results, indent=1))


def harness_args(dims):
    return dims.split(",") if dims else []


def stage_device(r):
    _, text = r.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,memory.total", "--format=csv,noheader"], 30)
    r.results["device"] = text.strip()
    print("device:", text.strip(), flush=True)


def stage_checks(r, jobs):
    # `jobs` programs share the GPU at once: the times they print are not figures (the timing
    # stages run one program at a time).
    def one(case):
        sample, shape, dims = case
        program = r.dir / sample
        if not program.exists():
            return {"sample": sample, "shape": shape, "dims": dims, "result": "missing"}
        rc, text = r.run([str(program), *harness_args(dims)], 90)  # the largest references take 40 s
        errors = re.findall(r"(\S+): max abs error ([\d.e+-]+|nan|inf).*?(\d+) of (\d+) elements outside", text)
        result = "PASS" if rc == 0 and text.rstrip().endswith("PASS") else ("TIMEOUT" if rc == 124 else f"FAIL rc={rc}")
        return {"sample": sample, "shape": shape, "dims": dims, "result": result,
                "errors": [{"tensor": t, "max_abs": a, "outside": int(o), "of": int(n)} for t, a, o, n in errors],
                "tail": "" if result == "PASS" else text[-600:]}

    cases = [c for c in CHECKS if not r.samples or c[0].split(".")[0] in r.samples]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for row in pool.map(one, cases):
            r.results["checks"].append(row)
            print(f"check {row['sample']} {row['shape']} {row['dims']}: {row['result']}", flush=True)
    r.save()


def parse_timing(text):
    us = re.search(r"time: ([\d.]+) us per launch, ([\d.]+) GB/s", text)
    tf = re.search(r"([\d.]+) TFLOP/s", text)
    return (float(us.group(1)) if us else None, float(us.group(2)) if us else None, float(tf.group(1)) if tf else None)


def stage_tc_timings(r):
    for sample, dims in [t for t in TC_TIMINGS for _ in range(r.repeat)]:
        if r.past_deadline():
            break
        if r.timing_samples and sample not in r.timing_samples:
            continue
        rc, text = r.run([str(r.dir / sample), *harness_args(dims), "check=0"], 60)
        us, gbs, tflops = parse_timing(text)
        row = {"sample": sample, "dims": dims, "rc": rc, "us": us, "tflops": tflops}
        r.results["timings"].append(row)
        print(f"time {sample} {dims}: rc={rc} {us} us {tflops} TFLOP/s", flush=True)
        r.save()


def stage_plain_timings(r):
    for sample, dims in PLAIN_TIMINGS:
        if r.past_deadline():
            break
        for form in ["", ".shared"]:
            rc, text = r.run([str(r.dir / (sample + form)), *harness_args(dims)], 60)
            us, gbs, tflops = parse_timing(text)
            ok = rc == 0 and text.rstrip().endswith("PASS")
            row = {"sample": sample + form, "dims": dims, "rc": rc, "pass": ok, "us": us, "gbs": gbs}
            r.results["timings"].append(row)
            print(f"time {sample}{form} {dims}: rc={rc} pass={ok} {us} us {gbs} GB/s", flush=True)
            r.save()


BASELINE_SCRIPT = r"""
import json, torch, torch.nn.functional as F
def timed(f, warm=3, reps=20):
    for _ in range(warm): f()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps): f()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / reps * 1e3  # us
out = {}
n = 8192
for name, dt in [("bf16", torch.bfloat16), ("f16", torch.float16)]:
    a = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
    b = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
    us = timed(lambda: torch.mm(a, b)); out[f"mm_{name}_out_{name}"] = {"us": us, "tflops": 2 * n**3 / us / 1e6}
    try:
        us = timed(lambda: torch.mm(a, b, out_dtype=torch.float32)); out[f"mm_{name}_out_f32"] = {"us": us, "tflops": 2 * n**3 / us / 1e6}
    except Exception as ex:
        out[f"mm_{name}_out_f32"] = {"error": str(ex)[:200]}
torch.backends.cuda.matmul.allow_tf32 = True
a = torch.rand(n, n, device="cuda") * 2 - 1; b = torch.rand(n, n, device="cuda") * 2 - 1
us = timed(lambda: torch.mm(a, b)); out["mm_tf32_out_f32"] = {"us": us, "tflops": 2 * n**3 / us / 1e6}
try:
    a8 = a.to(torch.float8_e4m3fn); b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    us = timed(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
    out["scaled_mm_e4m3_out_bf16"] = {"us": us, "tflops": 2 * n**3 / us / 1e6}
except Exception as ex:
    out["scaled_mm_e4m3_out_bf16"] = {"error": str(ex)[:200]}
try:  # int8 x int8 into int32, B given K-major as torch._int_mm reads it fastest
    i8a = torch.randint(-128, 128, (n, n), device="cuda", dtype=torch.int8)
    i8b = torch.randint(-128, 128, (n, n), device="cuda", dtype=torch.int8).t().contiguous().t()
    us = timed(lambda: torch._int_mm(i8a, i8b)); out["int_mm_i8_out_i32"] = {"us": us, "tflops": 2 * n**3 / us / 1e6}
except Exception as ex:
    out["int_mm_i8_out_i32"] = {"error": str(ex)[:200]}
del a, b
S = T = 4096; H = 16; D = 64
q = torch.rand(1, H, S, D, device="cuda", dtype=torch.bfloat16); k = torch.rand(1, H, T, D, device="cuda", dtype=torch.bfloat16)
v = torch.rand(1, H, T, D, device="cuda", dtype=torch.bfloat16)
us = timed(lambda: F.scaled_dot_product_attention(q, k, v)); out["sdpa_bf16_S4096_T4096_H16_D64"] = {"us": us, "tflops": 4 * S * T * D * H / us / 1e6}
# One head over 16384 rows, as causal_attention and attention_backward are timed: the causal
# forward, and the backward alone (dQ, dK and dV; tilec's sample computes dK and dV).
S = 16384
q1 = torch.rand(1, 1, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k1 = torch.rand(1, 1, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
v1 = torch.rand(1, 1, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
with torch.no_grad():
    us = timed(lambda: F.scaled_dot_product_attention(q1, k1, v1, is_causal=True))
out["sdpa_causal_bf16_S16384_H1_D64"] = {"us": us, "tflops": 2 * S * S * D / us / 1e6}
o1 = F.scaled_dot_product_attention(q1, k1, v1); g1 = torch.rand_like(o1)
us = timed(lambda: torch.autograd.grad(o1, (q1, k1, v1), g1, retain_graph=True))
out["sdpa_backward_bf16_S16384_H1_D64"] = {"us": us, "tflops_dk_dv_only": 8 * S * S * D / us / 1e6,
                                           "tflops_all": 10 * S * S * D / us / 1e6}
x = torch.empty(256 * 2**20 // 4, device="cuda"); y = torch.empty_like(x)
us = timed(lambda: y.copy_(x)); out["copy_256MiB"] = {"us": us, "gbs": 2 * x.numel() * 4 / us / 1e3}
print("BASELINES " + json.dumps(out))
"""


def stage_baselines(r):
    runs = []
    for _ in range(r.repeat):
        rc, text = r.run([sys.executable, "-c", BASELINE_SCRIPT], 120)
        m = re.search(r"BASELINES (.*)", text)
        runs.append(json.loads(m.group(1)) if m else {"error": text[-800:]})
        print("baselines:", json.dumps(runs[-1]), flush=True)
    r.results["baselines"] = runs[0] if len(runs) == 1 else runs
    r.save()


def stage_sanitizer(r, jobs):
    # `jobs` runs at once (the sanitizers are mostly host work); --samples picks programs here too.
    tool_path = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"

    def one(case):
        sample, dims, tool = case
        if r.past_deadline():
            return None
        rc, text = r.run([tool_path, "--tool", tool, "--error-exitcode", "99", str(r.dir / sample),
                          *harness_args(dims), "check=1"], 90)
        summary = re.findall(r"ERROR SUMMARY: .*|RACECHECK SUMMARY: .*", text)
        return {"sample": sample, "dims": dims, "tool": tool, "rc": rc, "summary": summary[-1] if summary else text[-300:]}

    cases = [(sample, dims, tool) for sample, dims in SANITIZER_RUNS
             if not r.samples or sample.split(".")[0] in r.samples
             for tool in ["memcheck", "racecheck", "synccheck"]]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for row in pool.map(one, cases):
            if row is None:
                continue
            r.results["sanitizer"].append(row)
            print(f"sanitizer {row['tool']} {row['sample']} {row['dims']}: rc={row['rc']} {row['summary']}", flush=True)
            r.save()


def write_markdown(r):
    res = r.results
    lines = [f"device: {res['device']}", "", "| sample | shape | dims | result | max abs error |", "|---|---|---|---|---|"]
    for c in res["checks"]:
        err = ", ".join(f"{e['tensor']} {e['max_abs']}" for e in c.get("errors", []))
        lines.append(f"| {c['sample']} | {c['shape']} | {c['dims']} | {c['result']} | {err} |")
    lines += ["", "| timing | dims | us | TFLOP/s or GB/s |", "|---|---|---|---|"]
    for t in res["timings"]:
        rate = f"{t['tflops']} TFLOP/s" if "tflops" in t else f"{t.get('gbs')} GB/s (pass={t.get('pass')})"
        lines.append(f"| {t['sample']} | {t['dims']} | {t['us']} | {rate} |")
    lines += ["", "baselines: " + json.dumps(res["baselines"]), ""]
    for s in res["sanitizer"]:
        lines.append(f"- {s['tool']} {s['sample']} {s['dims']}: rc {s['rc']}, {s['summary']}")
    (r.out / "gpu_check.md").write_text("\n".join(lines) + "\n")


def run(args):
    r = Runner(args.dir, args.out, args.deadline)
    r.samples = set(args.samples.split(",")) if args.samples else set()
    r.timing_samples = set(args.timing_samples.split(",")) if args.timing_samples else set()
    r.repeat = args.repeat
    stage_device(r)
    stages = {"checks": lambda: stage_checks(r, args.jobs), "tc-timings": lambda: stage_tc_timings(r),
              "baselines": lambda: stage_baselines(r), "plain-timings": lambda: stage_plain_timings(r),
              "sanitizer": lambda: stage_sanitizer(r, args.jobs)}
    for name in args.stages.split(","):
        if r.past_deadline():
            print(f"deadline passed: stage {name} and those after it skipped", flush=True)
            break
        stages[name]()
    r.save()
    write_markdown(r)
    failed = [c for c in r.results["checks"] if c["result"] != "PASS"]
    print(f"{len(r.results['checks']) - len(failed)} of {len(r.results['checks'])} checks passed")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile every sample's harness for sm_90a (no GPU needed)")
    b.add_argument("--tilec", default=str(ROOT / "build/tools/tilec"))
    b.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    b.add_argument("--out", default=str(ROOT / "build-gpu"))
    b.add_argument("--jobs", type=int, default=2)
    u = sub.add_parser("run", help="run the programs on an sm_90a GPU")
    u.add_argument("--dir", default=str(ROOT / "build-gpu"))
    u.add_argument("--out", default=os.environ.get("OUT", "gpu-results"))
    u.add_argument("--stages", default="checks,tc-timings,baselines,plain-timings,sanitizer",
                   help="comma-separated, run in this order")
    u.add_argument("--deadline", type=float, default=1e9,
                   help="seconds after which no further program or stage starts")
    u.add_argument("--jobs", type=int, default=4)
    u.add_argument("--samples", default="", help="comma-separated: check only these samples (default: all)")
    u.add_argument("--timing-samples", default="", help="comma-separated: time only these tensor-core samples")
    u.add_argument("--repeat", type=int, default=1, help="runs of each tensor-core timing and of the baselines")
    args = parser.parse_args()
    return build(args) if args.command == "build" else run(args)


if __name__ == "__main__":
    sys.exit(main())
