#!/usr/bin/python3
"""compare-torch.py: `rpe` against straightforward PyTorch, ratios from one run (issue 12).

Optional: runs when Debian's python3-torch is installed (else it says so and exits 0).
The PyTorch versions are written from docs/math.md the way a user would write them:
  - SPE forward (sections 1-4), as the SPE authors' reference forward computes it: the (N, H, D, R)
    codes are formed (sine: cos/sin of the positions times the noise; conv: a depthwise conv1d over
    the (R, H*D, N+4L) noise), gated, then contracted with the queries/keys;
  - attention maps: softmax(qhat khat^T / sqrt(R)) per head;
  - linear attention with the elu+1 feature map (section 5), non-causal (phi(K)^T V) and causal
    (chunks of 256 rows: the masked block plus the running sums);
  - exact relative logits with Huang's skewing (section 6): (Q K^T + skew(Q E^T)) / sqrt(D).
Each comparison interleaves the two sides (rpe, torch, rpe, torch, ...) and reports medians, so a
machine shared with other jobs slows both alike.  `rpe` is timed by its own `rpe bench` rows (the
fused core paths) and, for the SPE forward, also as the whole `rpe compute encode` process.

Usage: tools/compare-torch.py [--rpe build/app/rpe] [--rounds 3] [--quick] [--markdown] [--only TEXT]
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("compare-torch.py: python3-torch is not installed; nothing to compare (apt install python3-torch)")
    sys.exit(0)


def median_time(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# ---- PyTorch versions (docs/math.md) -------------------------------------------------------------

def spe_inputs(method, n, H, D, R, size, seed=0):
    g = torch.Generator().manual_seed(seed)
    p = {}
    if method == "sine":
        p["freqs"] = torch.randn(H, D, size, generator=g) - 4
        p["offsets"] = torch.randn(H, D, size, generator=g)
        p["gains"] = torch.randn(H, D, size, generator=g)
        p["z"] = torch.randn(H, D, 2 * size, R, generator=g)
    else:
        p["wq"] = torch.randn(H * D, 1, size, generator=g) / math.sqrt(size)
        p["wk"] = torch.randn(H * D, 1, size, generator=g) / math.sqrt(size)
        p["z"] = torch.randn(R, H * D, n + 4 * size, generator=g)
    p["gate"] = torch.randn(H, D, generator=g) - 2
    p["eps"] = torch.randn(H, D, R, generator=g)
    p["q"] = torch.randn(n, H, D, generator=g)
    p["k"] = torch.randn(n, H, D, generator=g)
    return p


def spe_forward(method, p, n, H, D, R, size):
    """Codes (N, H, D, R), gating, encoding: qhat, khat (N, H, R)."""
    s = 1.0 / (R * D) ** 0.25
    if method == "sine":
        K = size
        f = torch.sigmoid(p["freqs"]) / 2                           # (H, D, K)
        theta = p["offsets"]
        lam = F.softplus(p["gains"]) / math.sqrt(2 * K)
        pos = torch.arange(n, dtype=torch.float32)
        omega = 2 * math.pi * f[None] * pos[:, None, None, None]    # (N, H, D, K)
        zc, zs = p["z"][:, :, 0::2, :], p["z"][:, :, 1::2, :]       # (H, D, K, R)
        qbar = (torch.einsum("nhdk,hdkr->nhdr", lam * torch.cos(omega + theta), zc)
                + torch.einsum("nhdk,hdkr->nhdr", lam * torch.sin(omega + theta), zs)) * s
        kbar = (torch.einsum("nhdk,hdkr->nhdr", lam * torch.cos(omega), zc)
                + torch.einsum("nhdk,hdkr->nhdr", lam * torch.sin(omega), zs)) * s
    else:
        L = size
        yq = F.conv1d(p["z"], p["wq"], groups=H * D)[:, :, L:L + n]   # (R, H*D, N): valid correlation
        yk = F.conv1d(p["z"], p["wk"], groups=H * D)[:, :, L:L + n]
        qbar = (yq * s).permute(2, 1, 0).reshape(n, H, D, R)
        kbar = (yk * s).permute(2, 1, 0).reshape(n, H, D, R)
    g = torch.sigmoid(p["gate"])[None, :, :, None]
    e = s * p["eps"][None]
    qbar = torch.sqrt(1 - g) * qbar + torch.sqrt(g) * e
    kbar = torch.sqrt(1 - g) * kbar + torch.sqrt(g) * e
    qhat = torch.einsum("nhdr,nhd->nhr", qbar, p["q"])
    khat = torch.einsum("nhdr,nhd->nhr", kbar, p["k"])
    return qhat, khat


def hats(n, H, R, seed=1):
    g = torch.Generator().manual_seed(seed)
    sc = R ** -0.25
    return torch.randn(H, n, R, generator=g) * sc, torch.randn(H, n, R, generator=g) * sc


def attention_maps(qh, kh):
    return torch.softmax(qh @ kh.transpose(1, 2) / math.sqrt(qh.shape[-1]), dim=-1)


def elu1(x):
    return F.elu(x) + 1


def linear_attention(qh, kh, v, causal, chunk=256):
    pq, pk = elu1(qh), elu1(kh)                                    # (H, N, M)
    if not causal:
        kv = pk.transpose(1, 2) @ v                                # (H, M, Dv)
        z = pk.sum(1)                                              # (H, M)
        return (pq @ kv) / (pq @ z[:, :, None])
    H, n, M = pq.shape
    S = torch.zeros(H, M, v.shape[-1])
    zsum = torch.zeros(H, M)
    out = torch.empty(H, n, v.shape[-1])
    mask = torch.tril(torch.ones(chunk, chunk))
    for c0 in range(0, n, chunk):
        q, k, vv = pq[:, c0:c0 + chunk], pk[:, c0:c0 + chunk], v[:, c0:c0 + chunk]
        b = q.shape[1]
        a = (q @ k.transpose(1, 2)) * mask[:b, :b]
        num = q @ S + a @ vv
        den = q @ zsum[:, :, None] + a.sum(-1, keepdim=True)
        out[:, c0:c0 + b] = num / den
        S = S + k.transpose(1, 2) @ vv
        zsum = zsum + k.sum(1)
    return out


def skew_logits(q, k, e):
    """(Q K^T + S_rel) / sqrt(D), S_rel[m, n] = q_m . E[m - n], E row i <-> tau = i - (N-1)."""
    n, D = q.shape
    qe = q @ e.flip(0).T                                           # column j <-> tau = N-1-j
    # row m needs columns N-1-m .. 2N-2-m: a strided view (the pad/reshape skew, without copies)
    srel = torch.as_strided(qe, (n, n), (2 * n - 2, 1), storage_offset=n - 1)
    return (q @ k.T + srel) / math.sqrt(D)


# ---- the rpe side ---------------------------------------------------------------------------

QUICK = []


def rpe_bench_row(rpe, only, repeats, best=False):
    """Median seconds of the `rpe bench` rows selected by --only (the first one)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([rpe, "bench"] + QUICK + ["--only", only, "--repeats", str(repeats), "--json", f.name],
                       check=True, stdout=subprocess.DEVNULL)
        rows = json.load(open(f.name))["results"]
    rows = [r for r in rows if (r["workload"] == "0 sgemm best") == best]
    if not rows:
        raise SystemExit(f"compare-torch.py: no bench row matches {only!r}")
    return rows[0]["median_s"], rows[0]


def rpe_process(cmd, repeats):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rpe", default=os.path.join(os.path.dirname(__file__), "..", "build", "app", "rpe"))
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per comparison")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per side per round")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--only", default="", help="only the comparisons whose name contains this text "
                    "(e.g. \"linear attention\")")
    args = ap.parse_args()
    rpe = os.path.abspath(args.rpe)
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    tmp = tempfile.mkdtemp(prefix="rpe-compare-")
    H, D, R = 8, 64, 64
    n_spe = 1024 if args.quick else 4096
    n_att = 512 if args.quick else 2048
    n_lin = 16384 if args.quick else 65536
    if args.quick:
        QUICK.append("--quick")
    n_skew = 1024 if args.quick else 8192

    comparisons = []   # (name, size, rpe_fn, torch_fn)

    def wanted(name):
        return args.only in name

    for method, size in (("sine", 5), ("conv", 128)):
        key = f"K={size}" if method == "sine" else f"L={size}"
        fused, whole = (f"SPE forward {method} {key}, fused path (rpe bench)",
                        f"SPE forward {method} {key}, whole `rpe compute encode`")
        if not (wanted(fused) or wanted(whole)):
            continue
        p = spe_inputs(method, n_spe, H, D, R, size)
        tf = (lambda p=p, method=method, size=size: spe_forward(method, p, n_spe, H, D, R, size))
        if wanted(fused):
            comparisons.append((fused, f"N={n_spe} H={H} D={D} R={R} gated",
                                lambda key=key, method=method: rpe_bench_row(rpe, f"{method} {key} N={n_spe} ", args.repeats)[0],
                                tf))
        cmd = [rpe, "compute", "encode", "--method", method, "--sines" if method == "sine" else "--kernel",
               str(size), "--heads", str(H), "--features", str(D), "--realizations", str(R), "--length", str(n_spe),
               "--content", "random", "-o", os.path.join(tmp, "q.npy"), "--out-keys", os.path.join(tmp, "k.npy")]
        if wanted(whole):
            comparisons.append((whole, f"N={n_spe} H={H} D={D} R={R} gated",
                                lambda cmd=cmd: rpe_process(cmd, args.repeats), tf))

    if wanted("attention maps (logits + softmax)"):
        qa, ka = hats(n_att, H, R)
        comparisons.append(("attention maps (logits + softmax)", f"N={n_att} H={H} R={R}",
                            lambda: rpe_bench_row(rpe, f"attention map N={n_att} H={H} ", args.repeats)[0],
                            lambda: attention_maps(qa, ka)))
    lin_names = {causal: f"linear attention elu+1 {'causal' if causal else 'non-causal'}" for causal in (False, True)}
    if any(wanted(name) for name in lin_names.values()):
        ql, kl = hats(n_lin, H, R, seed=2)
        vl = torch.randn(H, n_lin, 64)
    for causal in (False, True):
        label = "causal" if causal else "non-causal"
        if wanted(lin_names[causal]):
            comparisons.append((lin_names[causal], f"N={n_lin} H={H} M=64 Dv=64",
                                lambda label=label: rpe_bench_row(rpe, f"linear {label} N={n_lin} ", args.repeats)[0],
                                lambda causal=causal: linear_attention(ql, kl, vl, causal)))
    if wanted("exact RPE logits, skewing"):
        g = torch.Generator().manual_seed(3)
        qs, ks = torch.randn(n_skew, 64, generator=g), torch.randn(n_skew, 64, generator=g)
        es = torch.randn(2 * n_skew - 1, 64, generator=g)
        comparisons.append(("exact RPE logits, skewing", f"N={n_skew} H=1 D=64",
                            lambda: rpe_bench_row(rpe, f"skew N={n_skew} ", args.repeats)[0],
                            lambda: skew_logits(qs, ks, es)))
    if not comparisons:
        raise SystemExit(f"compare-torch.py: no comparison matches --only {args.only!r}")

    results = []
    for name, size, rpe_fn, torch_fn in comparisons:
        r_times, t_times = [], []
        for _ in range(args.rounds):
            r_times.append(rpe_fn())
            t_times.append(median_time(torch_fn, args.repeats))
        r, t = statistics.median(r_times), statistics.median(t_times)
        results.append((name, size, r, t))
        if not args.markdown:
            print(f"{name:58s} {size:28s} rpe {r * 1e3:9.1f} ms  torch {t * 1e3:9.1f} ms  torch/rpe {t / r:6.2f}x",
                  flush=True)
    # the best matrix multiply of each side, for reference
    nb = 512 if args.quick else 2048
    a, b = torch.randn(nb, nb), torch.randn(nb, nb)
    tm = median_time(lambda: a @ b, 7)
    _, best = rpe_bench_row(rpe, "0 sgemm best", 1, best=True)
    shutil.rmtree(tmp, ignore_errors=True)
    if args.markdown:
        print(f"| workload | size | rpe | PyTorch {torch.__version__} ({threads} threads) | PyTorch / rpe |")
        print("|---|---|---:|---:|---:|")
        for name, size, r, t in results:
            print(f"| {name} | {size} | {r * 1e3:.1f} ms | {t * 1e3:.1f} ms | {t / r:.2f}x |")
    print(f"torch.mm {nb}^3: {2 * nb ** 3 / tm * 1e-9:.0f} GFLOP/s; rpe bench's best sgemm "
          f"({best['size']}): {best['gflops']:.0f} GFLOP/s")


if __name__ == "__main__":
    main()
