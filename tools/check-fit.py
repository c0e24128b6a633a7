#!/usr/bin/python3
"""check-fit.py: recompute `rpe fit`'s error in PyTorch, from docs/math.md alone.

Loads a fitted .safetensors into modules written here after docs/math.md, sections 1-3 (the SPE
authors' parameter names and shapes: SineSPE freqs/offsets/gains (H, D, K), ConvSPE conv_q/
conv_k as depthwise Conv1d weights (H*D, 1, L), SPEFilter gate (H, D)) with
load_state_dict(strict=True), evaluates the unit-content logit profile
l_h(tau) = sum_d Ptilde_hd(tau) / sqrt(D) in float64, the target bias independently (T5 with
its reference _relative_position_bucket in torch), and prints the relative Frobenius error of
the mean-removed profiles.  With --expect E it exits 1 unless the two agree to --rtol.

Fixture/comparison script only: the app and CI never need Python.

  tools/check-fit.py FITTED.safetensors --target alibi --heads 8 --length 128 --expect 0.0123
"""
import argparse
import json
import math
import struct
import sys

import numpy as np
import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + hlen])
    base = 8 + hlen
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", e
        b, end = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[base + b:base + end], dtype="<f4").reshape(e["shape"]).copy())
    return out


class SineSPE(torch.nn.Module):
    def __init__(self, h, d, k):
        super().__init__()
        self.freqs = torch.nn.Parameter(torch.zeros(h, d, k))
        self.offsets = torch.nn.Parameter(torch.zeros(h, d, k))
        self.gains = torch.nn.Parameter(torch.zeros(h, d, k))

    def lags(self, n):
        # docs/math.md, section 1: P_d(tau) = 1/(2K) sum_k lambda^2 cos(2 pi f tau + theta)
        f = torch.sigmoid(self.freqs.double()) / 2
        th = self.offsets.double()
        lam = torch.nn.functional.softplus(self.gains.double())
        k = f.shape[-1]
        tau = torch.arange(-(n - 1), n, dtype=torch.float64)
        ph = 2 * math.pi * f[..., None] * tau + th[..., None]
        return (lam[..., None] ** 2 * torch.cos(ph)).sum(-2) / (2 * k)   # (H, D, 2N-1)


class ConvSPE(torch.nn.Module):
    def __init__(self, h, d, l):
        super().__init__()
        self.h, self.d = h, d
        self.conv_q = torch.nn.Conv1d(h * d, h * d, l, groups=h * d, bias=False)
        self.conv_k = torch.nn.Conv1d(h * d, h * d, l, groups=h * d, bias=False)

    def lags(self, n):
        # docs/math.md, section 2: the query code uses conv_k.weight; P(tau) = sum_j wq[j] wk[j + tau]
        wq = self.conv_k.weight.double()[:, 0, :]
        wk = self.conv_q.weight.double()[:, 0, :]
        c, l = wq.shape
        out = torch.zeros(c, 2 * n - 1, dtype=torch.float64)
        for t in range(-(min(l, n) - 1), min(l, n)):
            if t >= 0:
                s = (wq[:, :l - t] * wk[:, t:]).sum(-1)
            else:
                s = (wq[:, -t:] * wk[:, :l + t]).sum(-1)
            out[:, t + n - 1] = s
        return out.reshape(self.h, self.d, 2 * n - 1)


class SPEFilter(torch.nn.Module):
    def __init__(self, h, d):
        super().__init__()
        self.gate = torch.nn.Parameter(torch.zeros(h, d))


class Model(torch.nn.Module):
    def __init__(self, spe, gated, h, d):
        super().__init__()
        self.spe = spe
        if gated:
            self.spe_filters = torch.nn.ModuleList([SPEFilter(h, d)])

    def profile(self, n, gated):
        p = self.spe.lags(n)
        if gated:
            g = torch.sigmoid(self.spe_filters[0].gate.double())[..., None]
            p = (1 - g) * p + g                                    # docs/math.md, section 3
        return p.sum(1) / math.sqrt(p.shape[1])                   # (H, 2N-1)


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # T5's _relative_position_bucket (relative_position = memory - query)
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).to(torch.long) * num_buckets
        n = torch.abs(n)
    else:
        n = torch.max(n, torch.zeros_like(n))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                                * (num_buckets - max_exact)).to(torch.long)
    val_if_large = torch.min(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
    ret += torch.where(is_small, n, val_if_large)
    return ret


def per_head(text, h, default):
    v = [float(x) for x in (text or default).split(",")]
    return torch.tensor(v * h if len(v) == 1 else v, dtype=torch.float64)


def target(a, h, n):
    tau = torch.arange(-(n - 1), n, dtype=torch.float64)
    if a.target == "alibi":
        s = per_head(a.alibi_slopes, h, None) if a.alibi_slopes else \
            torch.tensor([2.0 ** (-8.0 * (i + 1) / h) for i in range(h)], dtype=torch.float64)
        return -s[:, None] * tau.abs()
    if a.target == "kerple-log":
        r1, r2 = per_head(a.kerple_r1, h, "1"), per_head(a.kerple_r2, h, "1")
        return -r1[:, None] * torch.log1p(r2[:, None] * tau.abs())
    if a.target == "kerple-power":
        r1, r2 = per_head(a.kerple_r1, h, "1"), per_head(a.kerple_r2, h, "0.5")
        return -r1[:, None] * tau.abs() ** r2[:, None]
    if a.target == "t5":
        table = torch.from_numpy(np.load(a.t5_bias)).double()            # (buckets, H)
        m = torch.arange(n)[:, None]
        k = torch.arange(n)[None, :]
        b = t5_bucket(k - m, not a.t5_unidirectional, a.t5_buckets, a.t5_max_distance)   # (N, N)
        full = table[b].permute(2, 0, 1)                                  # (H, N, N)
        # the profile: row m = N-1 holds tau = N-1 .. 0, column 0 ... build from both
        out = torch.zeros(h, 2 * n - 1, dtype=torch.float64)
        for t in range(-(n - 1), n):
            mm, kk = (t, 0) if t >= 0 else (0, -t)
            out[:, t + n - 1] = full[:, mm, kk]
        return out
    if a.target == "file":
        w = torch.from_numpy(np.load(a.target_file)).double()
        return w.expand(h, -1).clone() if w.ndim == 1 else w
    raise SystemExit("unsupported target " + a.target)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("fitted")
    p.add_argument("--target", required=True)
    p.add_argument("--length", type=int, default=128)
    p.add_argument("--heads", type=int, help="H (needed for an ungated conv checkpoint)")
    p.add_argument("--alibi-slopes")
    p.add_argument("--kerple-r1")
    p.add_argument("--kerple-r2")
    p.add_argument("--t5-bias")
    p.add_argument("--t5-buckets", type=int, default=32)
    p.add_argument("--t5-max-distance", type=int, default=128)
    p.add_argument("--t5-unidirectional", action="store_true")
    p.add_argument("--target-file")
    p.add_argument("--expect", type=float)
    p.add_argument("--rtol", type=float, default=1e-4)
    a = p.parse_args()

    sd = read_safetensors(a.fitted)
    gated = "spe_filters.0.gate" in sd
    if "spe.freqs" in sd:
        h, d, k = sd["spe.freqs"].shape
        spe = SineSPE(h, d, k)
    else:
        c, _, l = sd["spe.conv_q.weight"].shape
        h = sd["spe_filters.0.gate"].shape[0] if gated else a.heads
        if h is None:
            raise SystemExit("an ungated conv checkpoint stores (H*D, 1, L): say H with --heads")
        spe = ConvSPE(h, c // h, l)
        d = c // h
    model = Model(spe, gated, h, d)
    model.load_state_dict(sd, strict=True)
    n = a.length
    with torch.no_grad():
        l = model.profile(n, gated)
    b = target(a, h, n)
    lc = l - l.mean(1, keepdim=True)
    bc = b - b.mean(1, keepdim=True)
    err = float(torch.linalg.norm(lc - bc) / torch.linalg.norm(bc))
    print(f"relative error {err:.9g}")
    if a.expect is not None:
        ok = abs(err - a.expect) <= a.rtol * max(abs(a.expect), 1e-12) + 1e-9
        print("matches rpe fit" if ok else f"MISMATCH: rpe fit said {a.expect}")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
