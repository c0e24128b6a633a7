#!/usr/bin/python3
"""train-demos.py: the trained demo checkpoints of RPE Studio, and a capture of each on one input.

A small causal linear transformer (2 layers, H = 4 heads of D = 16 features, elu+1 feature map),
written here from the formulas of docs/math.md (sine SPE, conv SPE, gating, LRPE,
FastRPB), trained at N_train = 64 on a task where relative position matters: copy the token from
LAG = 3 positions back.  One model per positional encoding:

    sine-spe   sine SPE (K = 8 sines), gated             SineSPE + SPEFilter (the SPE authors'
    conv-spe   conv SPE (L = 16 taps), gated             interface: forward(shape) -> codes,
                                                          filter(queries, keys, code))
    lrpe       LRPE rotation, identity P, learned theta initialised to theta a (RoPE), after the
               feature map, layer-normalised output (the reference `Urpe` with theta_learned)
    fastrpb    FastRPB, a Toeplitz bias W V per layer    (reference "full" layout)
    ape        a learned absolute position embedding (the baseline: nothing beyond N_train)

Each model is saved as .safetensors (written here: an 8-byte header length, a JSON header, the raw
little-endian data) with the reference state_dict names (`spe.freqs|offsets|gains`,
`spe.conv_q.weight|conv_k.weight` (H*D, 1, L), `spe_filters.<layer>.gate`, `lrpe.theta` (1, 1, D/2)
shared by the layers, `layers.<l>.positional_bias.bias.w` (1, H, 2M - 1), raw before the as-coded transforms)
and metadata: task, N_train, steps, the accuracy at N_train, 2 N_train and 4 N_train.  Beside each,
NAME.npz is a capture (tools/rpe_capture.py) of one task input at 4 N_train: every layer's queries,
keys and values as the model computed them before the positional encoding, and the tokens.

Training (what it takes for every model to learn the task at N_train):
  - R_TRAIN = 64 realizations for the SPE codes while training (fresh noise every step): with 16
    the estimate's noise drowns the lag-3 signal under the elu+1 feature map;
  - sine SPE frequencies initialised over the whole band (f = sigmoid(freqs) / 2 spread over
    [0.01, 0.49]) and gains with softplus(gains) near 1.5, so that the codes carry position at all
    (the old init, f = 0.009, was nearly constant over 64 positions);
  - AdamW, linear warm-up then cosine decay, gradient clipping, batches of 32.

Usage: /usr/bin/python3 tools/train-demos.py [--captures-only] [OUT_DIR [NAME,NAME...]]
(default resources/demos; --captures-only writes the captures again from the trained checkpoints)
Environment: RPE_DEMO_STEPS (default 4000), RPE_DEMO_JOBS (models trained at once, default 2),
RPE_DEMO_THREADS (torch threads per model, default 1).
CPU only, seeded.  Not run in CI.  Cost: 4000 steps of batches of 32, measured as CPU time per step
on one thread: sine SPE 0.22-0.26 s, conv SPE 0.12-0.18 s, LRPE, FastRPB and APE 0.05-0.09 s, so
about 40 CPU-minutes for the five; the shipped models took 41 to 112 minutes of wall time each on a
2-core machine shared with other work (load average about 20; the training_seconds in each file).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rpe_capture  # noqa: E402  (tools/rpe_capture.py)

H = 4             # heads
D = 16            # features per head
DM = H * D        # model width
VOCAB = 8         # token alphabet
LAYERS = 2
N_TRAIN = 64
N_EVAL = 4 * N_TRAIN
LAG = 3           # the task: y[m] = x[m - LAG]
R_TRAIN = int(os.environ.get("RPE_DEMO_REALIZATIONS", "64"))   # SPE realizations while training
K_SINES = 8
L_CONV = 16
M_FASTRPB = N_EVAL    # FastRPB max_seq_len: offsets beyond N_train stay as initialised (0)
STEPS = int(os.environ.get("RPE_DEMO_STEPS", "4000"))
WARMUP = 200
BATCH = 32
LR = float(os.environ.get("RPE_DEMO_LR", "3e-3"))
SEED = 20210712
EVAL_BATCHES = 16     # 16 x 32 sequences per length

TASK = "copy the token %d positions back (alphabet of %d, uniform tokens)" % (LAG, VOCAB)


def elu1(x):
    return F.elu(x) + 1.0


# ------------------------------------------------- SPE, with the SPE authors' module interface

class SineSPE(nn.Module):
    """Sine SPE: parameters (H, D, K) raw: f = sigmoid(freqs) / 2, theta = offsets,
    lambda = softplus(gains).  forward(shape) -> (qbar, kbar), each (1, N, H, D, R)."""

    def __init__(self, num_heads, in_features, num_realizations=256, num_sines=1):
        super().__init__()
        self.num_heads, self.in_features = num_heads, in_features
        self.num_realizations, self.num_sines = num_realizations, num_sines
        self.code_shape = (num_heads, in_features)
        # frequencies spread over the band: 2 f = sigmoid(freqs) uniform in [0.02, 0.98]
        u = torch.rand(num_heads, in_features, num_sines) * 0.96 + 0.02
        self.freqs = nn.Parameter(torch.log(u / (1.0 - u)))
        self.offsets = nn.Parameter(torch.randn(num_heads, in_features, num_sines))
        # softplus(gains) ~ 1.5
        self.gains = nn.Parameter(1.28 + 0.3 * torch.randn(num_heads, in_features, num_sines))

    def forward(self, shape, num_realizations=None):
        n = shape[1]
        r = num_realizations or self.num_realizations
        k2 = 2 * self.num_sines
        f = torch.sigmoid(self.freqs) / 2.0
        lam = F.softplus(self.gains)
        pos = torch.arange(n, dtype=torch.float32)
        ph = 2.0 * math.pi * f[None] * pos[:, None, None, None]            # (N, H, D, K)
        z = torch.randn(self.num_heads, self.in_features, k2, r)
        zc, zs = z[:, :, 0::2, :], z[:, :, 1::2, :]                         # (H, D, K, R)
        a = lam / math.sqrt(k2)
        s = 1.0 / (r * self.in_features) ** 0.25
        q = s * (torch.einsum("nhdk,hdkr->nhdr", a * torch.cos(ph + self.offsets), zc)
                 + torch.einsum("nhdk,hdkr->nhdr", a * torch.sin(ph + self.offsets), zs))
        k = s * (torch.einsum("nhdk,hdkr->nhdr", a * torch.cos(ph), zc)
                 + torch.einsum("nhdk,hdkr->nhdr", a * torch.sin(ph), zs))
        return q[None], k[None]                                              # (1, N, H, D, R)


class ConvSPE(nn.Module):
    """Conv SPE: conv_q.weight, conv_k.weight (H*D, 1, L); the query code uses conv_k.weight, the
    key code conv_q.weight (as the reference code names them)."""

    def __init__(self, ndim, num_heads, in_features, num_realizations=256, kernel_size=200):
        super().__init__()
        assert ndim == 1
        self.num_heads, self.in_features = num_heads, in_features
        self.num_realizations, self.kernel_size = num_realizations, kernel_size
        self.code_shape = (num_heads, in_features)
        c = num_heads * in_features
        self.conv_q = nn.Conv1d(c, c, kernel_size, groups=c, bias=False)
        self.conv_k = nn.Conv1d(c, c, kernel_size, groups=c, bias=False)
        with torch.no_grad():
            self.conv_q.weight.normal_(0.0, 1.0 / math.sqrt(kernel_size))
            self.conv_k.weight.normal_(0.0, 1.0 / math.sqrt(kernel_size))

    def forward(self, shape, num_realizations=None):
        n = shape[1]
        r = num_realizations or self.num_realizations
        el = self.kernel_size
        c = self.num_heads * self.in_features
        z = torch.randn(r, c, n + 4 * el)
        s = 1.0 / (r * self.in_features) ** 0.25
        # valid cross-correlation, cropped after L samples: out[t] = sum_j w[j] z[t + j]
        q = s * F.conv1d(z, self.conv_k.weight, groups=c)[:, :, el:el + n]
        k = s * F.conv1d(z, self.conv_q.weight, groups=c)[:, :, el:el + n]
        q = q.permute(2, 1, 0).reshape(n, self.num_heads, self.in_features, r)
        k = k.permute(2, 1, 0).reshape(n, self.num_heads, self.in_features, r)
        return q[None], k[None]


class SPEFilter(nn.Module):
    """Gated SPE filter: gate (H, D), g = sigmoid(gate); Qbar' = sqrt(1 - g) Qbar + sqrt(g) eps with
    eps (H, D, R) shared by queries, keys and positions.  forward(queries, keys, code) with
    queries, keys (batch, N, H, D) returns (qhat, khat), each (batch, N, H, R)."""

    def __init__(self, gated=True, code_shape=None):
        super().__init__()
        self.gated = gated
        if gated:
            self.gate = nn.Parameter(torch.randn(*code_shape) - 2.0)

    def forward(self, queries, keys, code):
        qbar, kbar = code
        r = qbar.shape[-1]
        if self.gated:
            h, d = self.gate.shape
            g = torch.sigmoid(self.gate)[..., None]
            eps = torch.randn(h, d, r) / (r * d) ** 0.25
            qbar = torch.sqrt(1.0 - g) * qbar + torch.sqrt(g) * eps
            kbar = torch.sqrt(1.0 - g) * kbar + torch.sqrt(g) * eps
        # qhat[b, n, h, r] = sum_d qbar[0, n, h, d, r] queries[b, n, h, d]
        qhat = torch.einsum("bnhd,nhdr->bnhr", queries, qbar[0])
        khat = torch.einsum("bnhd,nhdr->bnhr", keys, kbar[0])
        return qhat, khat


# ------------------------------------------------------------------ attention layers

def causal_linear(phq, phk, v, normalise=True):
    """Causal linear attention, phq, phk (B, N, H, F) feature-mapped, v (B, N, H, Dv):
    y_m = sum_{n <= m} (phq_m . phk_n) v_n / sum_{n <= m} phq_m . phk_n.  Computed here in its
    quadratic form (the same sums as the running ones, cheaper than them at these small N)."""
    n = phq.shape[1]
    s = torch.einsum("bmhf,bnhf->bhmn", phq, phk) * torch.ones(n, n).tril()
    num = torch.einsum("bhmn,bnhe->bmhe", s, v)
    if not normalise:
        return num
    den = s.sum(dim=-1).permute(0, 2, 1)                                     # (B, N, H)
    return num / (den[..., None] + 1e-6)


def rope_theta():
    e = D  # identity P: d' = D, even
    return torch.tensor([10000.0 ** (-2.0 * k / e) for k in range(e // 2)])


class Lrpe(nn.Module):
    """LRPE, rotation core, identity P, learned theta (1, 1, D/2) initialised to theta a (RoPE):
    x_s -> Lambda(s) x_s on pairs (x0, x1), (x2, x3), ..."""

    def __init__(self):
        super().__init__()
        self.theta = nn.Parameter(rope_theta().reshape(1, 1, D // 2))

    def forward(self, x):
        n = x.shape[1]
        ang = torch.arange(n, dtype=torch.float32)[:, None] * self.theta[0]    # (N, D/2)
        c = torch.cos(ang).repeat_interleave(2, dim=-1)[None, :, None, :]
        s = torch.sin(ang).repeat_interleave(2, dim=-1)[None, :, None, :]
        xh = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)  # (-z1, z0, -z3, z2, ...)
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

    def forward(self, x, pe, index, capture):
        b, n, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, n, H, D) for t in (q, k, v))
        if capture is not None:
            # what this layer's positional step receives (the SPE filter records its own q, k)
            # (LRPE: before the feature map, which `rpe` applies, --feature-map elu1, before LRPE)
            if self.kind in ("sine-spe", "conv-spe"):
                capture.record(index, values=v)
            else:
                capture.record(index, queries=q, keys=k, values=v)
        if self.kind == "ape":
            p = pe["ape"](n)
            q, k = q + p, k + p
        if self.kind in ("sine-spe", "conv-spe"):
            qhat, khat = pe["filter"](q, k, pe["codes"])
            y = causal_linear(elu1(qhat), elu1(khat), v)
        elif self.kind == "lrpe":
            lrpe = pe["lrpe"]
            y = self.head_norm(causal_linear(lrpe(elu1(q)), lrpe(elu1(k)), v, normalise=False))
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
            self.spe = SineSPE(H, D, num_realizations=R_TRAIN, num_sines=K_SINES)
        elif kind == "conv-spe":
            self.spe = ConvSPE(1, H, D, num_realizations=R_TRAIN, kernel_size=L_CONV)
        if kind in ("sine-spe", "conv-spe"):
            self.spe_filters = nn.ModuleList([SPEFilter(True, self.spe.code_shape) for _ in range(LAYERS)])
        if kind == "lrpe":
            self.lrpe = Lrpe()      # one module shared by the layers, as the SPE code is
        if kind == "ape":
            self.ape = LearnedAPE()

    def forward(self, tokens, capture=None):
        n = tokens.shape[1]
        x = self.embed(tokens)
        codes = self.spe(tokens.shape) if hasattr(self, "spe") else None   # one draw shared by the layers
        for i, layer in enumerate(self.layers):
            pe = {"codes": codes}
            if hasattr(self, "spe_filters"):
                pe["filter"] = self.spe_filters[i]
            if hasattr(self, "ape"):
                pe["ape"] = self.ape
            if hasattr(self, "lrpe"):
                pe["lrpe"] = self.lrpe
            x = layer(x, pe, i, capture)
        return self.head(x)


def batch(n, gen, size=BATCH):
    x = torch.randint(0, VOCAB, (size, n), generator=gen)
    y = torch.full_like(x, -100)
    y[:, LAG:] = x[:, :-LAG]
    return x, y


@torch.no_grad()
def accuracy(model, n, batches=EVAL_BATCHES, seed=1):
    """The fraction of positions m >= LAG whose prediction is the token at m - LAG, on
    batches x BATCH fresh sequences of length n (the SPE models draw their own noise)."""
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


ENCODING = {
    "sine-spe": "sine SPE, gated (K = %d, R = %d while training)" % (K_SINES, R_TRAIN),
    "conv-spe": "conv SPE, gated (L = %d, R = %d while training)" % (L_CONV, R_TRAIN),
    "lrpe": "LRPE: rotation, identity P, learned theta (from theta a, RoPE), after the feature map",
    "fastrpb": "FastRPB (Toeplitz bias, reference full layout, M = %d)" % M_FASTRPB,
    "ape": "learned absolute position embedding (N_train positions)",
}


def train(kind, out_dir):
    torch.set_num_threads(int(os.environ.get("RPE_DEMO_THREADS", "1")))
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = Model(kind)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)

    def rate(step):
        if step < WARMUP:
            return (step + 1) / WARMUP
        return 0.5 * (1.0 + math.cos(math.pi * (step - WARMUP) / max(1, STEPS - WARMUP)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, rate)
    t0 = time.time()
    for step in range(STEPS):
        x, y = batch(N_TRAIN, gen)
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 200 == 0 or step == STEPS - 1:
            print("%-9s step %5d loss %.4f (%.0f s)" % (kind, step, loss.item(), time.time() - t0), flush=True)
    train_seconds = time.time() - t0
    model.eval()
    torch.manual_seed(SEED + 2)
    acc = [accuracy(model, f * N_TRAIN) for f in (1, 2, 4)]
    print("%-9s accuracy at N_train = %d: %.3f, 2 N_train: %.3f, 4 N_train: %.3f (%.0f s training)"
          % (kind, N_TRAIN, acc[0], acc[1], acc[2], train_seconds), flush=True)
    tensors = {name: p for name, p in model.state_dict().items()}
    metadata = {
        "format": "rpe-studio-demo-1",
        "name": kind,
        "encoding": ENCODING[kind],
        "task": TASK,
        "lag": LAG,
        "n_train": N_TRAIN,
        "steps": STEPS,
        "batch": BATCH,
        "heads": H,
        "features": D,
        "layers": LAYERS,
        "feature_map": "elu1",
        "causal": "true",
        "accuracy_n_train": "%.4f" % acc[0],
        "accuracy_2n_train": "%.4f" % acc[1],
        "accuracy_4n_train": "%.4f" % acc[2],
        "accuracy_measured_on": "%d sequences per length, positions m >= %d" % (EVAL_BATCHES * BATCH, LAG),
        "training_seconds": "%.0f" % train_seconds,
        "seed": SEED,
        "trained_with": "tools/train-demos.py, torch %s, %d thread(s)" % (torch.__version__, torch.get_num_threads()),
    }
    if kind in ("sine-spe", "conv-spe"):
        metadata["realizations"] = R_TRAIN
    if kind == "lrpe":
        metadata.update({"lrpe_p": "identity", "lrpe_lambda": "rotation", "lrpe_theta": "learned (from a)"})
    if kind == "fastrpb":
        metadata.update({"fastrpb_layout": "full", "fastrpb_max_seq_len": M_FASTRPB})
    write_safetensors(os.path.join(out_dir, kind + ".safetensors"), tensors, metadata)
    write_capture(model, kind, os.path.join(out_dir, kind + ".npz"))
    return acc + [train_seconds]


@torch.no_grad()
def write_capture(model, kind, path):
    """One task input at 4 N_train through the trained model, captured with rpe_capture."""
    gen = torch.Generator().manual_seed(SEED + 3)
    x, y = batch(N_EVAL, gen, size=1)
    torch.manual_seed(SEED + 4)
    with rpe_capture.Capture(model) as cap:
        pred = model(x, capture=cap).argmax(-1)
    mask = y >= 0
    right = (pred[mask] == y[mask]).float()
    cap.meta["demo"] = kind
    cap.meta["task"] = TASK
    cap.meta["n_train"] = N_TRAIN
    cap.meta["accuracy_this_input_n_train"] = round(right[:N_TRAIN - LAG].mean().item(), 4)
    cap.meta["accuracy_this_input_beyond_n_train"] = round(right[N_TRAIN - LAG:].mean().item(), 4)
    cap.save(path, tokens=x[0])


def read_safetensors(path):
    """The tensors of a .safetensors file written by write_safetensors (F32 only; data, no code)."""
    import numpy as np
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise ValueError("%s: %s is %s, not F32" % (path, name, info["dtype"]))
        lo, hi = info["data_offsets"]
        a = np.frombuffer(blob[base + lo:base + hi], dtype="<f4").reshape(info["shape"])
        out[name] = torch.from_numpy(a.copy())
    return out


def recapture(kind, out_dir):
    """Writes NAME.npz again from the trained NAME.safetensors (no training)."""
    torch.set_num_threads(int(os.environ.get("RPE_DEMO_THREADS", "1")))
    torch.manual_seed(SEED)
    model = Model(kind)
    model.load_state_dict(read_safetensors(os.path.join(out_dir, kind + ".safetensors")))
    model.eval()
    write_capture(model, kind, os.path.join(out_dir, kind + ".npz"))
    print("%s: wrote %s" % (kind, os.path.join(out_dir, kind + ".npz")))


def main():
    args = sys.argv[1:]
    captures_only = "--captures-only" in args
    args = [a for a in args if a != "--captures-only"]
    out_dir = args[0] if len(args) > 0 else os.path.join(os.path.dirname(__file__), "..", "resources", "demos")
    kinds = args[1].split(",") if len(args) > 1 else ["sine-spe", "conv-spe", "lrpe", "fastrpb", "ape"]
    os.makedirs(out_dir, exist_ok=True)
    if captures_only:
        for kind in kinds:
            recapture(kind, out_dir)
        return
    jobs = int(os.environ.get("RPE_DEMO_JOBS", "2"))
    t0 = time.time()
    # every model is seeded on its own, so the results do not depend on the order or the pool
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        results = pool.starmap(train, [(kind, out_dir) for kind in kinds])
    print("\nwall time %.0f s (%d models, %d at a time)" % (time.time() - t0, len(kinds), jobs))
    print("\n| demo | accuracy at N_train = %d | 2 N_train = %d | 4 N_train = %d | training |"
          % (N_TRAIN, 2 * N_TRAIN, N_EVAL))
    print("| --- | --- | --- | --- | --- |")
    for kind, r in zip(kinds, results):
        print("| %s | %.3f | %.3f | %.3f | %.0f s |" % (kind, r[0], r[1], r[2], r[3]))


if __name__ == "__main__":
    main()
