#!/usr/bin/python3
"""train-demos.py: the trained demo checkpoints of RPE Studio.

A small causal linear transformer (2 layers, H = 4 heads of D = 16 features, elu+1 feature map),
written here from docs/math.md (sections 1-5, 7-9), trained at N_train = 64 on a task where
relative position matters: copy the token from k = 3 positions back.  One model per positional
encoding:

    sine-spe   sine SPE (K = 8 sines), gated             docs/math.md, sections 1, 3, 4
    conv-spe   conv SPE (L = 16 taps), gated             docs/math.md, sections 2, 3, 4
    lrpe       LRPE rotation, identity P, theta a (RoPE) docs/math.md, section 7 (after the feature map,
                                                          layer-normalised output)
    fastrpb    FastRPB, a Toeplitz bias W V per layer    docs/math.md, section 8 (reference "full" layout)
    ape        a learned absolute position embedding (the baseline: nothing beyond N_train)

Each model is saved as .safetensors (written here: the format is an 8-byte header length, a JSON
header, the raw little-endian data) with the SPE authors' state_dict names (`spe.freqs|offsets|
gains`, `spe.conv_q.weight|conv_k.weight` (H*D, 1, L), `spe_filters.<layer>.gate`, raw before the
as-coded transforms) and metadata: task, N_train, steps, the accuracy at N_train and at 4 N_train.

Usage: /usr/bin/python3 tools/train-demos.py [OUT_DIR]   (default resources/demos)
CPU only, seeded, two models at a time on one thread each (about 10 minutes on 2 cores).  Not run in CI.
"""

import json
import math
import multiprocessing
import os
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

H = 4             # heads
D = 16            # features per head
DM = H * D        # model width
VOCAB = 8         # token alphabet
LAYERS = 2
N_TRAIN = 64
N_EVAL = 4 * N_TRAIN
LAG = 3           # the task: y[m] = x[m - LAG]
R = 16            # SPE realizations
K_SINES = 8
L_CONV = 16
M_FASTRPB = N_EVAL    # FastRPB max_seq_len: offsets beyond N_train stay as initialised (0)
STEPS = int(os.environ.get("RPE_DEMO_STEPS", "1200"))
BATCH = 16
LR = 3e-3
SEED = 20210712

TASK = "copy the token %d positions back (alphabet of %d, uniform tokens)" % (LAG, VOCAB)


def elu1(x):
    return F.elu(x) + 1.0


# ----------------------------------------------------------------------- SPE (docs/math.md, sections 1-3)

class SineSPE(nn.Module):
    """Parameters (H, D, K) raw: f = sigmoid(freqs) / 2, theta = offsets, lambda = softplus(gains)."""

    def __init__(self):
        super().__init__()
        self.freqs = nn.Parameter(torch.randn(H, D, K_SINES) - 4.0)
        self.offsets = nn.Parameter(torch.randn(H, D, K_SINES))
        self.gains = nn.Parameter(torch.randn(H, D, K_SINES))

    def forward(self, n, r):
        f = torch.sigmoid(self.freqs) / 2.0
        lam = F.softplus(self.gains)
        pos = torch.arange(n, dtype=torch.float32)
        ph = 2.0 * math.pi * f[None] * pos[:, None, None, None]            # (N, H, D, K)
        z = torch.randn(H, D, 2 * K_SINES, r)
        zc, zs = z[:, :, 0::2, :], z[:, :, 1::2, :]                         # (H, D, K, R)
        a = lam / math.sqrt(2 * K_SINES)
        s = 1.0 / (r * D) ** 0.25
        q = s * (torch.einsum("nhdk,hdkr->nhdr", a * torch.cos(ph + self.offsets), zc)
                 + torch.einsum("nhdk,hdkr->nhdr", a * torch.sin(ph + self.offsets), zs))
        k = s * (torch.einsum("nhdk,hdkr->nhdr", a * torch.cos(ph), zc)
                 + torch.einsum("nhdk,hdkr->nhdr", a * torch.sin(ph), zs))
        return q, k                                                          # (N, H, D, R)


class ConvSPE(nn.Module):
    """conv_q.weight, conv_k.weight (H*D, 1, L); the query code uses conv_k.weight (docs/math.md, section 2)."""

    def __init__(self):
        super().__init__()
        self.conv_q = nn.Conv1d(DM, DM, L_CONV, groups=DM, bias=False)
        self.conv_k = nn.Conv1d(DM, DM, L_CONV, groups=DM, bias=False)
        with torch.no_grad():
            self.conv_q.weight.normal_(0.0, 1.0 / math.sqrt(L_CONV))
            self.conv_k.weight.normal_(0.0, 1.0 / math.sqrt(L_CONV))

    def forward(self, n, r):
        z = torch.randn(r, DM, n + 4 * L_CONV)
        s = 1.0 / (r * D) ** 0.25
        # valid cross-correlation, cropped after L samples: out[t] = sum_j w[j] z[t + j]
        q = s * F.conv1d(z, self.conv_k.weight, groups=DM)[:, :, L_CONV:L_CONV + n]
        k = s * F.conv1d(z, self.conv_q.weight, groups=DM)[:, :, L_CONV:L_CONV + n]
        q = q.permute(2, 1, 0).reshape(n, H, D, r)
        k = k.permute(2, 1, 0).reshape(n, H, D, r)
        return q, k


class SPEFilter(nn.Module):
    """gate (H, D), g = sigmoid(gate): Qbar' = sqrt(1 - g) Qbar + sqrt(g) eps (docs/math.md, section 3)."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Parameter(torch.randn(H, D) - 2.0)

    def forward(self, qbar, kbar, q, k):
        r = qbar.shape[-1]
        g = torch.sigmoid(self.gate)[None, :, :, None]
        eps = torch.randn(1, H, D, r) / (r * D) ** 0.25     # broadcast over positions
        qb = torch.sqrt(1.0 - g) * qbar + torch.sqrt(g) * eps
        kb = torch.sqrt(1.0 - g) * kbar + torch.sqrt(g) * eps
        qhat = torch.einsum("nhdr,bnhd->bnhr", qb[0] if qb.dim() == 5 else qb, q)
        khat = torch.einsum("nhdr,bnhd->bnhr", kb[0] if kb.dim() == 5 else kb, k)
        return qhat, khat


# ------------------------------------------------------------------ attention layers

def causal_linear(phq, phk, v, normalise=True):
    """Causal linear attention (docs/math.md, section 5) with running sums; phq, phk (B, N, H, F), v (B, N, H, Dv)."""
    kv = torch.einsum("bnhf,bnhe->bnhfe", phk, v).cumsum(dim=1)
    num = torch.einsum("bnhf,bnhfe->bnhe", phq, kv)
    if not normalise:
        return num
    den = torch.einsum("bnhf,bnhf->bnh", phq, phk.cumsum(dim=1))
    return num / (den[..., None] + 1e-6)


def rope_theta():
    e = D  # identity P: d' = D, even
    return torch.tensor([10000.0 ** (-2.0 * k / e) for k in range(e // 2)])


def rotate(x, theta):
    """Lambda(s) x for the rotation core, pairs (x0, x1), (x2, x3), ... (docs/math.md, section 7)."""
    n = x.shape[1]
    ang = torch.arange(n, dtype=torch.float32)[:, None] * theta[None, :]     # (N, D/2)
    c = torch.cos(ang).repeat_interleave(2, dim=-1)[None, :, None, :]
    s = torch.sin(ang).repeat_interleave(2, dim=-1)[None, :, None, :]
    xh = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)      # (-z1, z0, -z3, z2, ...)
    return x * c + xh * s


class PositionalBias(nn.Module):
    """FastRPB: bias.w (1, H, 2M - 1), "full" layout: W[h, m, n] = w[0, h, (m - n + M) mod (2M - 1)]."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Module()
        self.bias.w = nn.Parameter(torch.zeros(1, H, 2 * M_FASTRPB - 1))

    def forward(self, v):
        n = v.shape[1]
        m = torch.arange(n)
        idx = (m[:, None] - m[None, :] + M_FASTRPB) % (2 * M_FASTRPB - 1)
        w = self.bias.w[0][:, idx]                                           # (H, N, N)
        w = w * (m[:, None] >= m[None, :])                                   # causal: tau >= 0 only
        return torch.einsum("hmn,bnhe->bmhe", w, v)


class Layer(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.qkv = nn.Linear(DM, 3 * DM)
        self.out = nn.Linear(DM, DM)
        self.norm1 = nn.LayerNorm(DM)
        self.norm2 = nn.LayerNorm(DM)
        self.mlp = nn.Sequential(nn.Linear(DM, 4 * DM), nn.GELU(), nn.Linear(4 * DM, DM))
        if kind == "lrpe":
            self.head_norm = nn.LayerNorm(D)
        if kind == "fastrpb":
            self.positional_bias = PositionalBias()

    def forward(self, x, pe):
        b, n, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, n, H, D) for t in (q, k, v))
        if self.kind == "ape":
            p = pe["ape"](n)
            q, k = q + p, k + p
        if self.kind in ("sine-spe", "conv-spe"):
            qbar, kbar = pe["codes"]
            qhat, khat = pe["filter"](qbar, kbar, q, k)
            y = causal_linear(elu1(qhat), elu1(khat), v)
        elif self.kind == "lrpe":
            th = rope_theta()
            y = self.head_norm(causal_linear(rotate(elu1(q), th), rotate(elu1(k), th), v, normalise=False))
        else:
            y = causal_linear(elu1(q), elu1(k), v)
        if self.kind == "fastrpb":
            y = y + self.positional_bias(v)
        x = x + self.out(y.reshape(b, n, DM))
        return x + self.mlp(self.norm2(x))


class LearnedAPE(nn.Module):
    """weight (N_train, H*D), added to queries and keys; positions >= N_train get nothing."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(0.5 * torch.randn(N_TRAIN, DM))

    def forward(self, n):
        p = torch.zeros(n, DM)
        m = min(n, N_TRAIN)
        p[:m] = self.weight[:m]
        return p.reshape(1, n, H, D)


class Model(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.embed = nn.Embedding(VOCAB, DM)
        self.layers = nn.ModuleList([Layer(kind) for _ in range(LAYERS)])
        self.head = nn.Linear(DM, VOCAB)
        if kind == "sine-spe":
            self.spe = SineSPE()
        elif kind == "conv-spe":
            self.spe = ConvSPE()
        if kind in ("sine-spe", "conv-spe"):
            self.spe_filters = nn.ModuleList([SPEFilter() for _ in range(LAYERS)])
        if kind == "ape":
            self.ape = LearnedAPE()

    def forward(self, tokens):
        n = tokens.shape[1]
        x = self.embed(tokens)
        codes = self.spe(n, R) if hasattr(self, "spe") else None   # one draw shared by the layers
        for i, layer in enumerate(self.layers):
            pe = {"codes": codes}
            if hasattr(self, "spe_filters"):
                pe["filter"] = self.spe_filters[i]
            if hasattr(self, "ape"):
                pe["ape"] = self.ape
            x = layer(x, pe)
        return self.head(x)


def batch(n, gen):
    x = torch.randint(0, VOCAB, (BATCH, n), generator=gen)
    y = torch.full_like(x, -100)
    y[:, LAG:] = x[:, :-LAG]
    return x, y


@torch.no_grad()
def accuracy(model, n, batches=8, seed=1):
    gen = torch.Generator().manual_seed(seed)
    right = total = 0
    for _ in range(batches):
        x, y = batch(n, gen)
        pred = model(x).argmax(-1)
        mask = y >= 0
        right += (pred[mask] == y[mask]).sum().item()
        total += mask.sum().item()
    return right / total


def write_safetensors(path, tensors, metadata):
    header = {"__metadata__": {k: str(v) for k, v in metadata.items()}}
    offset = 0
    blobs = []
    for name in sorted(tensors):
        t = tensors[name].detach().to(torch.float32).contiguous()
        data = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for blob in blobs:
            f.write(blob)
    os.replace(tmp, path)


def train(kind, out_dir):
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = Model(kind)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, STEPS)
    t0 = time.time()
    for step in range(STEPS):
        x, y = batch(N_TRAIN, gen)
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 200 == 0 or step == STEPS - 1:
            print("%-9s step %4d loss %.4f (%.0f s)" % (kind, step, loss.item(), time.time() - t0), flush=True)
    model.eval()
    torch.manual_seed(SEED + 2)
    acc_train = accuracy(model, N_TRAIN)
    acc_4x = accuracy(model, N_EVAL)
    print("%-9s accuracy at N_train = %d: %.3f, at 4 N_train = %d: %.3f (%.0f s)"
          % (kind, N_TRAIN, acc_train, N_EVAL, acc_4x, time.time() - t0), flush=True)
    tensors = {name: p for name, p in model.state_dict().items()}
    encoding = {
        "sine-spe": "sine SPE, gated (K = %d, R = %d)" % (K_SINES, R),
        "conv-spe": "conv SPE, gated (L = %d, R = %d)" % (L_CONV, R),
        "lrpe": "LRPE: rotation, identity P, theta a (RoPE), after the feature map",
        "fastrpb": "FastRPB (Toeplitz bias, reference full layout, M = %d)" % M_FASTRPB,
        "ape": "learned absolute position embedding (N_train positions)",
    }[kind]
    metadata = {
        "format": "rpe-studio-demo-1",
        "name": kind,
        "encoding": encoding,
        "task": TASK,
        "lag": LAG,
        "n_train": N_TRAIN,
        "steps": STEPS,
        "heads": H,
        "features": D,
        "layers": LAYERS,
        "feature_map": "elu1",
        "causal": "true",
        "accuracy_n_train": "%.4f" % acc_train,
        "accuracy_4n_train": "%.4f" % acc_4x,
        "seed": SEED,
        "trained_with": "tools/train-demos.py, torch %s" % torch.__version__,
    }
    if kind == "lrpe":
        metadata.update({"lrpe_p": "identity", "lrpe_lambda": "rotation", "lrpe_theta": "a"})
    if kind == "fastrpb":
        metadata.update({"fastrpb_layout": "full", "fastrpb_max_seq_len": M_FASTRPB})
    write_safetensors(os.path.join(out_dir, kind + ".safetensors"), tensors, metadata)
    return acc_train, acc_4x


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "resources", "demos")
    kinds = sys.argv[2].split(",") if len(sys.argv) > 2 else ["sine-spe", "conv-spe", "lrpe", "fastrpb", "ape"]
    os.makedirs(out_dir, exist_ok=True)
    # two models at a time, one thread each (2 cores); every model is seeded on its own, so the
    # results do not depend on the order or the pool
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.starmap(train, [(kind, out_dir) for kind in kinds])
    rows = [(kind,) + r for kind, r in zip(kinds, results)]
    print("\n| demo | accuracy at N_train = %d | at 4 N_train = %d |" % (N_TRAIN, N_EVAL))
    print("| --- | --- | --- |")
    for kind, a, b in rows:
        print("| %s | %.3f | %.3f |" % (kind, a, b))


if __name__ == "__main__":
    main()
