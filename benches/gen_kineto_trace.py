#!/usr/bin/env python3
"""Deterministic generator of a PyTorch-Kineto-shaped Chrome trace of a given size.

    python3 benches/gen_kineto_trace.py OUT.json --mib 250 [--seed 1] [--steps 8]

Modelled on the real capture tests/fixtures/gpu/torch_kineto.json (torch 2.11,
one H200): the same top-level keys and their order (schemaVersion,
deviceProperties, ..., displayTimeUnit, baseTimeNanoseconds, traceEvents,
traceName), the same pretty-printed event layout, timestamps in microseconds
with three decimals, and Kineto's order of the event list:

1. CPU-side events thread by thread (the autograd thread, then the main
   thread, then a pin-memory thread), each in start-time order, parents before
   children: `python_function`, `user_annotation` (`ProfilerStep#N`,
   `## forward ##`, per-block ranges, optimizer ranges) and `cpu_op` X events
   with record_shapes args, properly nested, and `fwdbwd` flows (`s` on the
   forward op, `f`/`bp:"e"` on its backward node);
2. GPU activities in correlation order: each `kernel` / `gpu_memcpy` /
   `gpu_memset` X on pid 0, tid = stream (streams 7, 13, 20), followed by its
   `ac2g` flow end (`f`, `bp:"e"`), its launching `cuda_runtime` X on the CPU
   thread and that one's `ac2g` flow start (`s`, same id = correlation);
   `gpu_user_annotation` ranges on stream 7; a few `overhead` events on pid -1;
   and, as in the real capture, `cudaDeviceGetAttribute` runtime events with a
   dangling `ac2g` `f` on the CPU thread;
3. `M` metadata (process_name/labels/sort_index for the CPU pid and GPUs
   0-15, thread_name/thread_sort_index), the `Spans` X event and two `i`
   events.

A top-level `distributedInfo` (`{"rank": R, ...}`) is written near the top, as
Kineto does for distributed jobs: Holistic Trace Analysis finds a file's rank
by that key (`hta/common/trace_file.py`, regex `"rank":\\s+(\\d+)` read line by
line).

The output is streamed: every section is written to a temporary file beside
OUT as it is generated and the sections are concatenated at the end (memory
stays flat at any size). Durations of events that enclose others are not known
when the event must be written (parents come first), so the schedule is
simulated twice with the same seed: a first pass records those durations
(one integer per enclosing span), the second writes. The file is written as
OUT.tmp and renamed, so an interrupted run leaves no partial OUT.

At the end the number of events by phase (and X events by category) is printed
to stderr, in lines `ph X 123` / `cat kernel 45` / `total 678`, and as one JSON
line starting with `counts ` for scripts.

Standard library only; Python 3.8+.
"""

import argparse
import array
import json
import os
import random
import shutil
import sys
import tempfile

# --- shapes of the simulated model: a stack of Linear -> GELU -> LayerNorm blocks,
# bf16, 4096 tokens x 2048 hidden, trained with SGD (foreach) and DDP all-reduce.
TOK = 4096
HID = 2048
PID_DEFAULT = 2817

# Stream ids (tid of GPU events): compute, copy side stream, NCCL.
S_COMPUTE, S_COPY, S_NCCL = 7, 13, 20


def q(s):
    """JSON string literal."""
    return json.dumps(s)


def shape_args(concrete, types, strides, dims):
    """The record_shapes part of a cpu_op's args, as Kineto writes it."""
    return ('"Concrete Inputs": %s, "Input type": %s, "Input Strides": %s, "Input Dims": %s, '
            % (json.dumps(concrete), json.dumps(types), json.dumps(strides), json.dumps(dims)))


BF = "c10::BFloat16"
A_LINEAR = shape_args(["", "", ""], [BF, BF, BF], [[HID, 1], [HID, 1], [1]], [[TOK, HID], [HID, HID], [HID]])
A_T = shape_args([""], [BF], [[HID, 1]], [[HID, HID]])
A_TRANSPOSE = shape_args(["", "0", "1"], [BF, "Scalar", "Scalar"], [[HID, 1], [], []], [[HID, HID], [], []])
A_AS_STRIDED = shape_args(["", "[%d, %d]" % (HID, HID), "[1, %d]" % HID, ""], [BF, "ScalarList", "ScalarList", ""],
                          [[HID, 1], [], [], []], [[HID, HID], [], [], []])
A_ADDMM = shape_args(["", "", "", "1", "1"], [BF, BF, BF, "Scalar", "Scalar"],
                     [[1], [HID, 1], [1, HID], [], []], [[HID], [TOK, HID], [HID, HID], [], []])
A_GELU = shape_args(["", "'none'"], [BF, "String"], [[HID, 1], []], [[TOK, HID], []])
A_LAYER_NORM = shape_args(["", "[%d]" % HID, "", "", "1e-05", "True"], [BF, "ScalarList", BF, BF, "Scalar", "Scalar"],
                          [[HID, 1], [], [1], [1], [], []], [[TOK, HID], [], [HID], [HID], [], []])
A_NATIVE_LN = shape_args(["", "[%d]" % HID, "", "", "1e-05"], [BF, "ScalarList", BF, BF, "Scalar"],
                         [[HID, 1], [], [1], [1], []], [[TOK, HID], [], [HID], [HID], []])
A_EMPTY = shape_args(["[%d, %d]" % (TOK, HID), "15", "0", "", "False", "1"], ["ScalarList", "Scalar", "Scalar", "Device", "Scalar", "Scalar"],
                     [[], [], [], [], [], []], [[], [], [], [], [], []])
A_EMPTY_LIKE = shape_args(["", "", "", "", "False", "1"], [BF, "", "", "", "Scalar", "Scalar"],
                          [[HID, 1], [], [], [], [], []], [[TOK, HID], [], [], [], [], []])
A_BWD_NODE = shape_args([""], [BF], [[HID, 1]], [[TOK, HID]])
A_MM = shape_args(["", ""], [BF, BF], [[HID, 1], [HID, 1]], [[TOK, HID], [HID, HID]])
A_SUM = shape_args(["", "[0]", "True", ""], [BF, "ScalarList", "Scalar", ""], [[HID, 1], [], [], []], [[TOK, HID], [], [], []])
A_ADD_ = shape_args(["", "", "1"], [BF, BF, "Scalar"], [[HID, 1], [HID, 1], []], [[HID, HID], [HID, HID], []])
A_GELU_BWD = shape_args(["", "", "'none'"], [BF, BF, "String"], [[HID, 1], [HID, 1], []], [[TOK, HID], [TOK, HID], []])
A_LN_BWD = shape_args(["", "", "[%d]" % HID, "", "", "", "", "[True, True, True]"],
                      [BF, BF, "ScalarList", "float", "float", BF, BF, "ScalarList"],
                      [[HID, 1], [HID, 1], [], [1], [1], [1], [1], []], [[TOK, HID], [TOK, HID], [], [TOK, 1], [TOK, 1], [HID], [HID], []])
A_FOREACH = shape_args(["", "", "-0.001"], ["TensorList", "TensorList", "Scalar"], [[], [], []], [[], [], []])
A_ZERO = shape_args([""], [BF], [[HID, 1]], [[HID, HID]])
A_TO = shape_args(["", "15", "0", "", "", "True", "False", ""], [BF, "Scalar", "Scalar", "Device", "Scalar", "Scalar", "Scalar", ""],
                  [[HID, 1], [], [], [], [], [], [], []], [[TOK, HID], [], [], [], [], [], [], []])
A_COPY = shape_args(["", "", "True"], [BF, BF, "Scalar"], [[HID, 1], [HID, 1], []], [[TOK, HID], [TOK, HID], []])
A_ITEM = shape_args([""], ["float"], [[]], [[]])
A_ONES_LIKE = shape_args(["", "", "", "", "False", "1"], ["float", "", "", "", "Scalar", "Scalar"], [[], [], [], [], [], []], [[], [], [], [], [], []])
A_FILL = shape_args(["", "1."], ["float", "Scalar"], [[], []], [[], []])
A_PIN = shape_args(["", ""], [BF, ""], [[HID, 1], []], [[TOK, HID], []])
A_COMMS = shape_args(["", "", "", "0", "0"], ["TensorList", "TensorList", "Int", "Int", "Int"], [[], [], [], [], []], [[], [], [], [], []])


def kernel(name, grid, block, regs, smem, bps, wps, occ):
    """(quoted name, the static tail of the kernel's args)."""
    return (q(name),
            '"registers per thread": %d,      "shared memory": %d,      "blocks per SM": %s,      '
            '"warps per SM": %s,      "grid": %s,      "block": %s,      "est. achieved occupancy %%": %d'
            % (regs, smem, bps, wps, json.dumps(grid), json.dumps(block), occ))


K_GEMM = kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                [16, 32, 1], [384, 1, 1], 168, 213248, "3.878788", "46.545456", 22)
K_GEMM_NN = kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
                   [8, 32, 1], [384, 1, 1], 168, 213248, "1.939394", "23.272728", 18)
K_GEMM_NT = kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                   [16, 16, 1], [384, 1, 1], 168, 213248, "1.939394", "23.272728", 21)
K_GELU = kernel("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
                [8192, 1, 1], [128, 1, 1], 30, 0, "62.060608", "248.242432", 89)
K_LN = kernel("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
              [4096, 1, 1], [256, 1, 1], 38, 0, "31.030304", "248.242432", 84)
K_GELU_BWD = kernel("void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul>)",
                    [8192, 1, 1], [128, 1, 1], 32, 0, "62.060608", "248.242432", 88)
K_LN_BWD_IN = kernel("void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)",
                     [4096, 1, 1], [128, 1, 1], 40, 0, "31.030304", "124.121216", 77)
K_LN_BWD_GB = kernel("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)",
                     [64, 1, 1], [32, 32, 1], 56, 8448, "0.484848", "15.515152", 12)
K_REDUCE = kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<c10::BFloat16, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<c10::BFloat16, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4>)",
                  [16, 32, 1], [32, 16, 1], 32, 16, "3.878788", "15.515152", 24)
K_ADD = kernel("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
               [2048, 1, 1], [128, 1, 1], 26, 0, "15.515152", "62.060608", 58)
K_FILL = kernel("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
                [1, 1, 1], [64, 1, 1], 16, 0, "0.007576", "0.015152", 3)
K_FOREACH = kernel("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<c10::BFloat16, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<c10::BFloat16, 2, 2, 0>, std::plus<float>, float)",
                   [320, 1, 1], [512, 1, 1], 32, 0, "2.424242", "38.787878", 61)
K_NCCL = kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                [2, 1, 1], [640, 1, 1], 96, 4480, "0.015152", "0.303030", 1)

MEMCPY_H2D = q("Memcpy HtoD (Pinned -> Device)")
MEMCPY_D2H = q("Memcpy DtoH (Device -> Pageable)")
MEMSET = q("Memset (Device)")

CAT = {c: q(c) for c in ("cpu_op", "user_annotation", "python_function", "cuda_runtime", "kernel",
                         "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "overhead")}
CPU_OP, USER_ANN, PY = "cpu_op", "user_annotation", "python_function"

# cuda runtime APIs: (quoted name, cbid)
RT_LAUNCH = (q("cudaLaunchKernel"), 211)
RT_LAUNCH_EX = (q("cudaLaunchKernelExC"), 430)
RT_MEMCPY = (q("cudaMemcpyAsync"), 41)
RT_MEMSET = (q("cudaMemsetAsync"), 51)
RT_SYNC = (q("cudaStreamSynchronize"), 131)
RT_ATTR = (q("cudaDeviceGetAttribute"), 200)
RT_WAIT = (q("cudaStreamWaitEvent"), 147)
RT_RECORD = (q("cudaEventRecord"), 135)

N = {}  # name -> quoted name, filled lazily


def nq(name):
    s = N.get(name)
    if s is None:
        s = N[name] = q(name)
    return s


def us(ns):
    """Integer nanoseconds -> Kineto's microseconds with three decimals."""
    return "%d.%03d" % divmod(ns, 1000)


class Thread:
    __slots__ = ("tid", "clock", "stack", "py", "nev", "evbase", "out", "name")

    def __init__(self, tid, clock, name):
        self.tid = tid
        self.clock = clock
        self.stack = []   # (span index, start ns, cat, external id or None)
        self.py = []      # python ids of the open python_function frames
        self.nev = 0      # CPU-section events so far (Ev Idx)
        self.evbase = 0
        self.out = None
        self.name = name


class Sim:
    """One run of the schedule. emit=False: records enclosing spans' durations
    (self.durs); emit=True: writes, reading them."""

    def __init__(self, seed, steps, layers, rank, world, emit, durs=None, evbases=None, outs=None):
        self.rng = random.Random(seed)
        self.u = self.rng.random
        self.steps = steps
        self.layers = layers
        self.rank = rank
        self.world = world
        self.emit = emit
        self.durs = durs if emit else array.array("q")
        self.nspan = 0
        self.ext = 0
        self.corr = 0
        self.pyid = 0
        self.fwdbwd = 0
        self.seq = 0
        self.ngpu = 0
        self.pid = PID_DEFAULT + 97 * rank
        # ~ 59 days of uptime, like the fixture's clock; deterministic from the seed.
        self.t0 = 5_100_000_000_000_000 + int(self.u() * 100_000_000_000_000)
        self.base_time_ns = (1_790_000_000 + int(self.u() * 30_000_000)) * 1_000_000_000  # whole seconds, 2026
        self.main = Thread(self.pid, self.t0, "python3")
        self.bwd = Thread(self.pid + 116, self.t0, "pt_autograd_0")
        self.pin = Thread(self.pid + 143, self.t0, "pt_pin_memory")
        self.threads = [self.bwd, self.main, self.pin]   # Kineto's order in the fixture
        self.stream_free = {S_COMPUTE: self.t0, S_COPY: self.t0, S_NCCL: self.t0}
        self.gpu_ranges = []  # open gpu_user_annotation ranges: [ext, name, stream, first, last]
        self.counts = {}
        self.cats = {}
        self.bytes = 0
        if emit:
            for th in self.threads:
                th.evbase = evbases[th.tid]
                th.out = outs[th.tid]
            self.gout = outs["gpu"]

    # ---- time helpers (ns) ----
    def r(self, lo, hi):
        return lo + int((hi - lo) * self.u())

    # ---- writing ----
    def w(self, out, text, ph, cat=None):
        out(text)
        self.bytes += len(text)
        self.counts[ph] = self.counts.get(ph, 0) + 1
        if cat is not None:
            self.cats[cat] = self.cats.get(cat, 0) + 1

    def cpu_args(self, th, cat, ext, tail, seq):
        ev = th.evbase + th.nev
        if cat == PY:
            parent = th.py[-2] if len(th.py) > 1 else None
            return '"Python parent id": %s, "Python id": %d, "Ev Idx": %d' % (
                "null" if parent is None else parent, th.py[-1], ev)
        if seq is not None:
            return '"External id": %d,"Sequence number": %d, "Fwd thread id": %d, "Record function id": 0, %s"Ev Idx": %d' % (
                ext, seq, 1 if th is self.bwd else 0, tail, ev)
        return '"External id": %d,"Record function id": 0, %s"Ev Idx": %d' % (ext, tail, ev)

    def write_cpu(self, th, cat, name, ts, dur, args):
        self.w(th.out,
               '  {\n    "ph": "X", "cat": %s, "name": %s, "pid": %d, "tid": %d,\n'
               '    "ts": %s, "dur": %s,\n    "args": {\n      %s\n    }\n  },\n'
               % (CAT[cat], nq(name), self.pid, th.tid, us(ts), us(dur), args), "X", cat)

    def flow(self, out, ph, fid, pid, tid, ts, cat):
        if ph == "s":
            text = ('  {\n    "ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n'
                    '    "cat": "%s", "name": "%s"\n  },\n' % (fid, pid, tid, us(ts), cat, cat))
        else:
            text = ('  {\n    "ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n'
                    '    "cat": "%s", "name": "%s", "bp": "e"\n  },\n' % (fid, pid, tid, us(ts), cat, cat))
        self.w(out, text, ph)

    # ---- CPU spans ----
    def open(self, th, cat, name, tail="", gap=None, seq=None, gpu_range=False):
        th.clock += self.r(800, 6000) if gap is None else gap
        idx = self.nspan
        self.nspan += 1
        ext = None
        if cat == PY:
            self.pyid += 1
            th.py.append(self.pyid)
        else:
            self.ext += 1
            ext = self.ext
        if self.emit:
            self.write_cpu(th, cat, name, th.clock, self.durs[idx], self.cpu_args(th, cat, ext, tail, seq))
        else:
            self.durs.append(0)
        th.nev += 1
        th.stack.append((idx, th.clock, cat, ext))
        if gpu_range:
            self.gpu_ranges.append([ext, name, S_COMPUTE, None, None])
        return ext

    def close(self, th, tail=None, gpu_range=False):
        th.clock += self.r(500, 4000) if tail is None else tail
        idx, start, cat, ext = th.stack.pop()
        if cat == PY:
            th.py.pop()
        if not self.emit:
            self.durs[idx] = th.clock - start
        if gpu_range:
            rext, name, stream, first, last = self.gpu_ranges.pop()
            if first is not None and self.emit:
                self.w(self.gout,
                       '  {\n    "ph": "X", "cat": "gpu_user_annotation", "name": %s, "pid": 0, "tid": %d,\n'
                       '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d\n    }\n  },\n'
                       % (nq(name), stream, us(first), us(last - first), rext), "X", "gpu_user_annotation")

    def leaf(self, th, cat, name, tail="", lo=1500, hi=9000, seq=None):
        th.clock += self.r(600, 4000)
        dur = self.r(lo, hi)
        ext = None
        if cat == PY:
            self.pyid += 1
            th.py.append(self.pyid)
        else:
            self.ext += 1
            ext = self.ext
        if self.emit:
            self.write_cpu(th, cat, name, th.clock, dur, self.cpu_args(th, cat, ext, tail, seq))
        if cat == PY:
            th.py.pop()
        th.nev += 1
        th.clock += dur
        return ext

    def fwdbwd_flow(self, th, ph, fid):
        # on the op just opened: same ts as that op (the top of the stack)
        if self.emit:
            self.flow(th.out, ph, fid, self.pid, th.tid, th.stack[-1][1], "fwdbwd")

    # ---- GPU work ----
    def cur_ext(self, th):
        for e in reversed(th.stack):
            if e[3] is not None:
                return e[3]
        return 0

    def launch(self, th, rt, stream, gcat, gname, gdur, gtail, bytes_=None):
        th.clock += self.r(1000, 3500)
        rt_ts = th.clock
        rt_dur = self.r(3000, 11000)
        self.corr += 1 if self.u() < 0.7 else self.r(2, 7)
        corr = self.corr
        ext = self.cur_ext(th)
        k_ts = max(rt_ts + self.r(4000, 9000), self.stream_free[stream] + self.r(900, 2600))
        self.stream_free[stream] = k_ts + gdur
        for rg in self.gpu_ranges:
            if rg[2] == stream:
                if rg[3] is None:
                    rg[3] = k_ts
                rg[4] = k_ts + gdur
        th.clock = rt_ts + rt_dur
        self.ngpu += 1
        if not self.emit:
            return
        out = self.gout
        if self.ngpu % 4096 == 0:  # no RNG here: both passes must draw the same numbers
            self.w(out, '  {\n    "ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0,\n'
                        '    "ts": %s, "dur": %s\n  },\n' % (us(rt_ts - 300_000), us(1_500_000 + (self.ngpu * 7919) % 1_100_000)), "X", "overhead")
        if gcat == "kernel":
            gargs = ('"External id": %d,      "queued": 0, "device": 0, "context": 1,      "stream": %d, "correlation": %d,      %s'
                     % (ext, stream, corr, gtail))
        else:
            gargs = ('"External id": %d,      "device": 0, "context": 1,      "stream": %d, "correlation": %d,      "bytes": %d, "memory bandwidth (GB/s)": %.3f'
                     % (ext, stream, corr, bytes_, bytes_ / max(gdur, 1)))
        self.w(out, '  {\n    "ph": "X", "cat": %s, "name": %s, "pid": 0, "tid": %d,\n'
                    '    "ts": %s, "dur": %s,\n    "args": {\n      %s\n    }\n  },\n'
                    % (CAT[gcat], gname, stream, us(k_ts), us(gdur), gargs), "X", gcat)
        self.flow(out, "f", corr, 0, stream, k_ts, "ac2g")
        self.runtime_event(th, rt, rt_ts, rt_dur, ext, corr)
        self.flow(out, "s", corr, self.pid, th.tid, rt_ts, "ac2g")

    def runtime_event(self, th, rt, ts, dur, ext, corr):
        self.w(self.gout, '  {\n    "ph": "X", "cat": "cuda_runtime", "name": %s, "pid": %d, "tid": %d,\n'
                          '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "cbid": %d, "correlation": %d\n    }\n  },\n'
                          % (rt[0], self.pid, th.tid, us(ts), us(dur), ext, rt[1], corr), "X", "cuda_runtime")

    def runtime_only(self, th, rt, lo, hi, until=None, dangling_f=False):
        """A runtime call with no GPU activity (sync, attribute query)."""
        th.clock += self.r(800, 3000)
        ts = th.clock
        dur = self.r(lo, hi)
        if until is not None:
            dur = max(dur, until - ts + self.r(2000, 6000))
        self.corr += 1
        th.clock = ts + dur
        if self.emit:
            ext = self.cur_ext(th)
            self.runtime_event(th, rt, ts, dur, ext, self.corr)
            if dangling_f:  # as in the real capture: an ac2g end on the CPU thread, no start
                self.flow(self.gout, "f", self.corr, self.pid, th.tid, ts, "ac2g")

    def kernel(self, th, rt, stream, k, lo, hi):
        self.launch(th, rt, stream, "kernel", k[0], self.r(lo, hi), k[1])

    # ---- the model ----
    def transpose_chain(self, th):
        self.open(th, CPU_OP, "aten::t", A_T)
        self.open(th, CPU_OP, "aten::transpose", A_TRANSPOSE)
        self.leaf(th, CPU_OP, "aten::as_strided", A_AS_STRIDED, 800, 3000)
        self.close(th)
        self.close(th)

    def forward_block(self, th, layer, fwd_ids):
        self.open(th, USER_ANN, "block_%d" % layer, gpu_range=True)
        self.open(th, PY, "nn.Module: Block_%d" % layer)
        self.open(th, PY, "nn.Module: Linear_%d" % layer)
        self.open(th, PY, "torch/nn/modules/linear.py(125): forward")
        self.seq += 1
        self.open(th, CPU_OP, "aten::linear", A_LINEAR, seq=self.seq)
        self.fwdbwd += 1
        fwd_ids.append((self.fwdbwd, self.seq))
        self.fwdbwd_flow(th, "s", self.fwdbwd)
        self.transpose_chain(th)
        self.open(th, CPU_OP, "aten::addmm", A_ADDMM)
        self.kernel(th, RT_LAUNCH_EX, S_COMPUTE, K_GEMM, 70_000, 110_000)
        self.close(th)
        self.close(th)  # aten::linear
        self.close(th)
        self.close(th)  # Linear
        self.open(th, PY, "torch/nn/functional.py(1748): gelu")
        self.seq += 1
        self.open(th, CPU_OP, "aten::gelu", A_GELU, seq=self.seq)
        self.fwdbwd += 1
        fwd_ids.append((self.fwdbwd, self.seq))
        self.fwdbwd_flow(th, "s", self.fwdbwd)
        self.kernel(th, RT_LAUNCH, S_COMPUTE, K_GELU, 9_000, 16_000)
        self.close(th)
        self.close(th)
        self.open(th, PY, "nn.Module: LayerNorm_%d" % layer)
        self.open(th, PY, "torch/nn/functional.py(2910): layer_norm")
        self.seq += 1
        self.open(th, CPU_OP, "aten::layer_norm", A_LAYER_NORM, seq=self.seq)
        self.fwdbwd += 1
        fwd_ids.append((self.fwdbwd, self.seq))
        self.fwdbwd_flow(th, "s", self.fwdbwd)
        self.open(th, CPU_OP, "aten::native_layer_norm", A_NATIVE_LN)
        self.leaf(th, CPU_OP, "aten::empty", A_EMPTY, 1500, 5000)
        self.leaf(th, CPU_OP, "aten::empty", A_EMPTY, 1200, 4000)
        self.leaf(th, CPU_OP, "aten::empty", A_EMPTY, 1200, 4000)
        self.kernel(th, RT_LAUNCH, S_COMPUTE, K_LN, 8_000, 14_000)
        self.close(th)
        self.close(th)
        self.close(th)
        self.close(th)  # LayerNorm
        self.close(th)  # Block
        self.close(th, gpu_range=True)

    def backward_block(self, th, layer, ids):
        (lin_id, lin_seq), (gelu_id, gelu_seq), (ln_id, ln_seq) = ids
        # LayerNorm
        self.open(th, CPU_OP, "autograd::engine::evaluate_function: NativeLayerNormBackward0", seq=ln_seq)
        self.open(th, CPU_OP, "NativeLayerNormBackward0", A_BWD_NODE, seq=ln_seq)
        self.fwdbwd_flow(th, "f", ln_id)
        self.open(th, CPU_OP, "aten::native_layer_norm_backward", A_LN_BWD)
        self.leaf(th, CPU_OP, "aten::empty_like", A_EMPTY_LIKE, 2000, 6000)
        self.kernel(th, RT_LAUNCH, S_COMPUTE, K_LN_BWD_IN, 12_000, 20_000)
        self.kernel(th, RT_LAUNCH, S_COMPUTE, K_LN_BWD_GB, 6_000, 11_000)
        self.close(th)
        self.close(th)
        self.close(th)
        # GELU
        self.open(th, CPU_OP, "autograd::engine::evaluate_function: GeluBackward0", seq=gelu_seq)
        self.open(th, CPU_OP, "GeluBackward0", A_BWD_NODE, seq=gelu_seq)
        self.fwdbwd_flow(th, "f", gelu_id)
        self.open(th, CPU_OP, "aten::gelu_backward", A_GELU_BWD)
        self.kernel(th, RT_LAUNCH, S_COMPUTE, K_GELU_BWD, 12_000, 19_000)
        self.close(th)
        self.close(th)
        self.close(th)
        # Linear
        self.open(th, CPU_OP, "autograd::engine::evaluate_function: AddmmBackward0", seq=lin_seq)
        self.open(th, CPU_OP, "AddmmBackward0", A_BWD_NODE, seq=lin_seq)
        self.fwdbwd_flow(th, "f", lin_id)
        self.transpose_chain(th)
        self.open(th, CPU_OP, "aten::mm", A_MM)
        self.kernel(th, RT_LAUNCH_EX, S_COMPUTE, K_GEMM_NN, 70_000, 110_000)
        self.close(th)
        self.transpose_chain(th)
        self.open(th, CPU_OP, "aten::mm", A_MM)
        self.kernel(th, RT_LAUNCH_EX, S_COMPUTE, K_GEMM_NT, 70_000, 110_000)
        self.close(th)
        self.open(th, CPU_OP, "aten::sum", A_SUM)
        self.kernel(th, RT_LAUNCH, S_COMPUTE, K_REDUCE, 7_000, 12_000)
        self.close(th)
        if layer % 8 == 0:
            self.runtime_only(th, RT_ATTR, 1200, 2500, dangling_f=True)
        self.close(th)
        self.close(th)
        # AccumulateGrad
        self.open(th, CPU_OP, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad")
        self.open(th, CPU_OP, "torch::autograd::AccumulateGrad")
        self.open(th, CPU_OP, "aten::add_", A_ADD_)
        self.kernel(th, RT_LAUNCH, S_COMPUTE, K_ADD, 3_000, 6_000)
        self.close(th)
        self.close(th)
        self.close(th)
        # DDP bucket all-reduce every 4 blocks
        if layer % 4 == 0:
            self.open(th, CPU_OP, "record_param_comms", A_COMMS)
            self.open(th, CPU_OP, "nccl:all_reduce")
            self.runtime_only(th, RT_RECORD, 1500, 3500)
            self.runtime_only(th, RT_WAIT, 1500, 3000)
            self.kernel(th, RT_LAUNCH_EX, S_NCCL, K_NCCL, 40_000, 160_000)
            self.close(th)
            self.close(th)

    def copy_in(self, th, stream):
        self.open(th, CPU_OP, "aten::to", A_TO)
        self.open(th, CPU_OP, "aten::_to_copy", A_TO)
        self.leaf(th, CPU_OP, "aten::empty_strided", A_EMPTY, 2000, 6000)
        self.open(th, CPU_OP, "aten::copy_", A_COPY)
        nbytes = TOK * HID * 2
        self.launch(th, RT_MEMCPY, stream, "gpu_memcpy", MEMCPY_H2D, self.r(330_000, 420_000), "", nbytes)
        self.close(th)
        self.close(th)
        self.close(th)

    def pin_work(self, step):
        th = self.pin
        th.clock = max(th.clock, self.main.clock) + self.r(5_000, 20_000)
        self.open(th, PY, "torch/utils/data/_utils/pin_memory.py(56): do_one_step")
        self.open(th, PY, "torch/utils/data/_utils/pin_memory.py(76): pin_memory")
        for _ in range(2):
            self.open(th, CPU_OP, "aten::pin_memory", A_PIN)
            self.open(th, CPU_OP, "aten::_pin_memory", A_PIN)
            self.leaf(th, CPU_OP, "aten::empty", A_EMPTY, 8_000, 30_000)
            self.leaf(th, CPU_OP, "aten::copy_", A_COPY, 900_000, 1_400_000)
            self.close(th)
            self.close(th)
        self.close(th)
        self.close(th)

    def step(self, n, layers):
        m = self.main
        self.open(m, USER_ANN, "ProfilerStep#%d" % n, gpu_range=True)
        self.open(m, PY, "train.py(212): train_step")
        self.open(m, PY, "torch/utils/data/dataloader.py(733): __next__")
        self.leaf(m, PY, "torch/utils/data/dataloader.py(1465): _next_data", "", 20_000, 60_000)
        self.close(m)
        self.pin_work(n)
        self.copy_in(m, S_COPY)
        self.copy_in(m, S_COMPUTE)
        self.runtime_only(m, RT_WAIT, 1500, 3000)
        self.open(m, USER_ANN, "## forward ##", gpu_range=True)
        fwd_ids = []
        for layer in range(layers):
            self.forward_block(m, layer, fwd_ids)
        self.close(m, gpu_range=True)
        self.open(m, CPU_OP, "aten::sum", A_SUM)
        self.kernel(m, RT_LAUNCH, S_COMPUTE, K_REDUCE, 7_000, 12_000)
        self.close(m)
        self.open(m, USER_ANN, "## backward ##", gpu_range=True)
        self.open(m, PY, "torch/_tensor.py(648): backward")
        self.open(m, PY, "torch/autograd/__init__.py(353): backward")
        self.open(m, PY, "torch/autograd/graph.py(824): _engine_run_backward")
        self.open(m, PY, "<built-in method run_backward of torch._C._EngineBase object at 0x7f3c2a1b9e40>")
        self.open(m, CPU_OP, "aten::ones_like", A_ONES_LIKE)
        self.leaf(m, CPU_OP, "aten::empty_like", A_EMPTY_LIKE, 2000, 6000)
        self.open(m, CPU_OP, "aten::fill_", A_FILL)
        self.kernel(m, RT_LAUNCH, S_COMPUTE, K_FILL, 1_000, 2_000)
        self.close(m)
        self.close(m)
        # the autograd thread runs the backward graph while the main thread waits in run_backward
        b = self.bwd
        b.clock = max(b.clock, m.clock) + self.r(8_000, 20_000)
        self.open(b, CPU_OP, "autograd::engine::evaluate_function: SumBackward0", seq=self.seq + 1)
        self.open(b, CPU_OP, "SumBackward0", A_BWD_NODE, seq=self.seq + 1)
        self.open(b, CPU_OP, "aten::expand", A_T)
        self.leaf(b, CPU_OP, "aten::as_strided", A_AS_STRIDED, 800, 3000)
        self.close(b)
        self.close(b)
        self.close(b)
        for layer in range(layers - 1, -1, -1):
            self.backward_block(b, layer, fwd_ids[3 * layer:3 * layer + 3])
        m.clock = b.clock + self.r(5_000, 15_000)
        self.close(m)
        self.close(m)
        self.close(m)
        self.close(m)
        self.close(m, gpu_range=True)
        self.open(m, USER_ANN, "Optimizer.step#SGD.step", gpu_range=True)
        self.open(m, PY, "torch/optim/optimizer.py(485): wrapper")
        self.open(m, PY, "torch/optim/sgd.py(105): step")
        self.open(m, PY, "torch/optim/sgd.py(282): _multi_tensor_sgd")
        for _ in range((layers + 7) // 8):
            self.open(m, CPU_OP, "aten::_foreach_add_", A_FOREACH)
            self.kernel(m, RT_LAUNCH, S_COMPUTE, K_FOREACH, 25_000, 60_000)
            self.close(m)
        self.close(m)
        self.close(m)
        self.close(m)
        self.close(m, gpu_range=True)
        self.open(m, USER_ANN, "Optimizer.zero_grad#SGD.zero_grad", gpu_range=True)
        self.open(m, PY, "torch/optim/optimizer.py(955): zero_grad")
        for _ in range((layers + 15) // 16):
            self.open(m, CPU_OP, "aten::zero_", A_ZERO)
            self.launch(m, RT_MEMSET, S_COMPUTE, "gpu_memset", MEMSET, self.r(2_000, 5_000), "", HID * HID * 2)
            self.close(m)
        self.close(m)
        self.close(m, gpu_range=True)
        # loss.item(): a device-to-host copy and a sync: the CPU waits for the GPU
        self.open(m, CPU_OP, "aten::item", A_ITEM)
        self.open(m, CPU_OP, "aten::_local_scalar_dense", A_ITEM)
        self.launch(m, RT_MEMCPY, S_COMPUTE, "gpu_memcpy", MEMCPY_D2H, self.r(1_000, 2_000), "", 4)
        self.runtime_only(m, RT_SYNC, 2000, 5000, until=max(self.stream_free.values()))
        self.close(m)
        self.close(m)
        self.close(m)  # train_step
        self.close(m, gpu_range=True)  # ProfilerStep

    def run(self, first_step=10):
        m = self.main
        # thread-long python roots (known length thanks to the first pass)
        m.clock = self.t0 + 150_000
        self.open(m, PY, "train.py(301): <module>", gap=0)
        self.open(m, PY, "train.py(280): main")
        p = self.pin
        p.clock = self.t0 + 400_000
        self.open(p, PY, "threading.py(1032): _bootstrap", gap=0)
        self.open(p, PY, "threading.py(1075): _bootstrap_inner")
        self.open(p, PY, "threading.py(1012): run")
        self.open(p, PY, "torch/utils/data/_utils/pin_memory.py(52): _pin_memory_loop")
        for i in range(self.steps):
            self.step(first_step + i, self.layers)
        end = max(m.clock, p.clock, self.bwd.clock) + 20_000
        p.clock = end
        for _ in range(4):
            self.close(p, tail=1000)
        self.close(m, tail=30_000)
        self.close(m, tail=10_000)
        self.end = max(m.clock, p.clock, max(self.stream_free.values())) + 50_000
        assert not m.stack and not p.stack and not self.bwd.stack and not self.gpu_ranges

    # ---- header / footer ----
    def header(self, trace_name):
        return ('\n  {\n    "schemaVersion": 1,\n    "deviceProperties": [\n    {\n'
                '      "id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320,\n'
                '      "computeMajor": 9, "computeMinor": 0,\n'
                '      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,\n'
                '      "regsPerBlock": 65536, "warpSize": 32,\n'
                '      "sharedMemPerBlock": 49152, "numSms": 132\n'
                '    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472\n'
                '    }\n    ],\n'
                '  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d, "pg_count": 1, '
                '"pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": %d, "ranks": %s}], '
                '"nccl_version": "2.27.5"},\n'
                '      "trace_id": "%032X",\n'
                '      "record_shapes": 1,\n'
                '      "cuda_driver_version": 13000,\n'
                '      "cuda_runtime_version": 13000,\n'
                '      "cupti_version": 130001,\n'
                '  "displayTimeUnit": "ms",\n'
                '  "baseTimeNanoseconds": %d,\n'
                '  "traceEvents": [\n'
                % (self.rank, self.world, self.world, json.dumps(list(range(self.world))),
                   random.Random(self.t0).getrandbits(128), self.base_time_ns))

    def footer(self, trace_name):
        out = []
        cnt = {"M": 0}
        mts = us(self.t0 + 89_127)

        def meta(name, pid, tid, key, value):
            cnt["M"] += 1
            out.append('  {\n    "name": "%s", "ph": "M", "ts": %s, "pid": %d, "tid": %d,\n'
                       '    "args": {\n      "%s": %s\n    }\n  },\n' % (name, mts, pid, tid, key, json.dumps(value)))

        meta("process_name", self.pid, 0, "name", "python3")
        meta("process_labels", self.pid, 0, "labels", "CPU")
        meta("process_sort_index", self.pid, 0, "sort_index", self.pid)
        for d in range(16):
            meta("process_name", d, 0, "name", "python3")
            meta("process_labels", d, 0, "labels", "GPU %d" % d)
            meta("process_sort_index", d, 0, "sort_index", 5000000 + d)
        for s in (S_COMPUTE, S_COPY, S_NCCL):
            meta("thread_name", 0, s, "name", "stream %d " % s)
            meta("thread_sort_index", 0, s, "sort_index", s)
        for th in (self.bwd, self.main, self.pin):
            meta("thread_name", self.pid, th.tid, "name", "thread %d (%s)" % (th.tid, th.name))
            meta("thread_sort_index", self.pid, th.tid, "sort_index", th.tid)
        # the fixture names the autograd thread twice, the second time "python3"
        meta("thread_name", self.pid, self.bwd.tid, "name", "thread %d (python3)" % self.bwd.tid)
        meta("thread_sort_index", self.pid, self.bwd.tid, "sort_index", self.bwd.tid)
        t0 = us(self.t0)
        out.append('  {\n    "ph": "X", "cat": "Trace", "ts": %s, "dur": %s,\n'
                   '    "pid": "Spans", "tid": "PyTorch Profiler",\n    "name": "PyTorch Profiler (0)",\n'
                   '    "args": {\n      "Op count": 0\n    }\n  },\n' % (t0, us(self.end - self.t0)))
        out.append('  {\n    "name": "process_sort_index", "ph": "M", "ts": %s,\n'
                   '    "pid": "Spans", "tid": 0,\n    "args": {\n      "sort_index": 536870912\n    }\n  },\n' % t0)
        cnt["M"] += 1
        out.append('  {\n    "name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g",\n'
                   '    "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": %s\n  },\n' % t0)
        out.append('  {\n    "name": "Record Window End", "ph": "i", "s": "g",\n'
                   '    "pid": "", "tid": "", "ts": %s\n  }\n  ],\n' % us(self.end))
        out.append('  "traceName": %s\n}' % q(trace_name))
        self.counts["M"] = self.counts.get("M", 0) + cnt["M"]
        self.counts["X"] = self.counts.get("X", 0) + 1
        self.cats["Trace"] = self.cats.get("Trace", 0) + 1
        self.counts["i"] = self.counts.get("i", 0) + 2
        return "".join(out)


def simulate(seed, steps, layers, rank, world, dirpath, trace_name):
    """Both passes; returns (Sim of the written pass, section paths in output order, header, footer)."""
    dry = Sim(seed, steps, layers, rank, world, emit=False)
    dry.run()
    evbases = {}
    base = 0
    for th in dry.threads:  # Ev Idx counts in output order
        evbases[th.tid] = base
        base += th.nev
    paths = [os.path.join(dirpath, "thread_%d" % th.tid) for th in dry.threads] + [os.path.join(dirpath, "gpu")]
    files = [open(p, "w", encoding="ascii", newline="", buffering=1 << 20) for p in paths]
    try:
        outs = {th.tid: f.write for th, f in zip(dry.threads, files)}
        outs["gpu"] = files[-1].write
        sim = Sim(seed, steps, layers, rank, world, emit=True, durs=dry.durs, evbases=evbases, outs=outs)
        sim.run()
        assert sim.nspan == dry.nspan and sim.end == dry.end
    finally:
        for f in files:
            f.close()
    return sim, paths, sim.header(trace_name), sim.footer(trace_name)


def calibrate(seed, rank, world):
    """Bytes of a trace as a + b * (steps * layers), measured on two small traces."""
    def size(steps, layers):
        with tempfile.TemporaryDirectory() as d:
            sim, _, h, f = simulate(seed, steps, layers, rank, world, d, "x")
            return sim.bytes + len(h) + len(f)
    s1, s2 = size(2, 2), size(2, 10)
    per_layer_step = (s2 - s1) / 16.0
    per_step = (s1 - 4 * per_layer_step) / 2.0
    return per_step, per_layer_step


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="output file (e.g. /tmp/kineto/rank0.pt.trace.json)")
    ap.add_argument("--mib", type=float, default=250.0, help="approximate size in MiB (default 250)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=8, help="ProfilerStep#N ranges (default 8)")
    ap.add_argument("--layers", type=int, default=None, help="blocks per step (default: from --mib)")
    ap.add_argument("--rank", type=int, default=0, help="distributedInfo.rank (default 0)")
    ap.add_argument("--world-size", type=int, default=1)
    a = ap.parse_args(argv)
    if a.steps < 1:
        ap.error("--steps must be >= 1")

    if a.layers is None:
        per_step, per_layer_step = calibrate(a.seed, a.rank, a.world_size)
        target = a.mib * 1048576
        layers = max(1, int(round((target / a.steps - per_step) / per_layer_step)))
    else:
        layers = max(1, a.layers)

    out = os.path.abspath(a.out)
    outdir = os.path.dirname(out)
    os.makedirs(outdir, exist_ok=True)
    tmp = out + ".tmp"
    with tempfile.TemporaryDirectory(dir=outdir, prefix=".gen_kineto_") as d:
        sim, paths, header, footer = simulate(a.seed, a.steps, layers, a.rank, a.world_size, d, out)
        with open(tmp, "wb") as f:
            f.write(header.encode("ascii"))
            for p in paths:
                with open(p, "rb") as src:
                    shutil.copyfileobj(src, f, 1 << 22)
                os.remove(p)
            f.write(footer.encode("utf-8"))
    os.replace(tmp, out)

    size = os.path.getsize(out)
    total = sum(sim.counts.values())
    err = sys.stderr
    print("gen_kineto_trace: wrote %s: %d bytes (%.1f MiB), %d steps x %d blocks, seed %d, rank %d"
          % (out, size, size / 1048576, a.steps, layers, a.seed, a.rank), file=err)
    for ph in sorted(sim.counts):
        print("ph %s %d" % (ph, sim.counts[ph]), file=err)
    for cat in sorted(sim.cats):
        print("cat %s %d" % (cat, sim.cats[cat]), file=err)
    print("total %d" % total, file=err)
    print("counts " + json.dumps({"bytes": size, "total": total, "ph": dict(sorted(sim.counts.items())),
                                  "cat": dict(sorted(sim.cats.items())), "steps": a.steps, "blocks": layers}), file=err)


if __name__ == "__main__":
    main()
