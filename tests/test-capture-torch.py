#!/usr/bin/python3
"""test-capture-torch.py: a PyTorch model's capture, read by `rpe`, gives the exact logits.

For a sine-SPE and a conv-SPE model, each with 3 layers, one shared code and a gated filter per
layer, built here with a stand-in `spe` module that has exactly the public interface of the SPE
authors' package (SineSPE, ConvSPE, SPEFilter; the math of docs/math.md: codes, gating,
encoded queries and keys), this test:

  1. saves the model's state_dict with torch.save (.pt),
  2. captures one forward pass with tools/rpe_capture.py (no change to the model: the filters are
     recognised by their class name),
  3. runs `rpe compute logits --exact --checkpoint M.pt --content CAPTURE --layer l` for every
     layer l, and checks the (H, N, N) result against the exact logits computed here in float64
     from the model's own queries and keys (kept by the model during the forward pass, not read
     back from the capture) and its templates:
         l(m, n) = sum_d q[m, d] k[n, d] Ptilde_d(m - n) / sqrt(D),  Ptilde = (1 - g) P + g,
     P the analytic sine or conv template of the stored parameters;
  4. checks that a capture from another model, a missing layer, and hostile captures are refused
     with exit status 2 and a message naming both shapes, the layer or the member.

Arguments: RPE (the `rpe` executable) TOOLS_DIR (holding rpe_capture.py).  Output: TAP.  Without
torch or numpy, the whole test is skipped (TAP "1..0 # SKIP"), not failed.
"""

import math
import os
import hashlib
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:                     # skipped, not failed, where torch is absent
    print("1..0 # SKIP PyTorch or numpy is not installed for %s (%s)" % (sys.executable, e))
    sys.exit(0)

RPE = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import rpe_capture  # noqa: E402

TESTS = []
FAILED = 0


def test(fn):
    TESTS.append(fn)
    return fn


# ----------------------------------------------------- the stand-in `spe` package (public interface)

class SineSPE(nn.Module):
    def __init__(self, num_heads=8, in_features=64, num_realizations=256, num_sines=1):
        super().__init__()
        self.num_heads, self.in_features = num_heads, in_features
        self.num_realizations, self.num_sines = num_realizations, num_sines
        self.code_shape = (num_heads, in_features)
        self.freqs = nn.Parameter(torch.randn(num_heads, in_features, num_sines))
        self.offsets = nn.Parameter(torch.randn(num_heads, in_features, num_sines))
        self.gains = nn.Parameter(torch.randn(num_heads, in_features, num_sines))

    def forward(self, shape, num_realizations=None):
        n = shape[1]
        r = num_realizations or self.num_realizations
        k = self.num_sines
        f = torch.sigmoid(self.freqs) / 2
        lam = F.softplus(self.gains) / math.sqrt(2 * k)
        pos = torch.arange(n, dtype=torch.float32)[:, None, None, None]
        z = torch.randn(self.num_heads, self.in_features, 2 * k, r)
        s = 1.0 / (r * self.in_features) ** 0.25
        phq = 2 * math.pi * f * pos + self.offsets
        phk = 2 * math.pi * f * pos
        q = torch.einsum("nhdk,hdkr->nhdr", lam * torch.cos(phq), z[:, :, 0::2]) \
            + torch.einsum("nhdk,hdkr->nhdr", lam * torch.sin(phq), z[:, :, 1::2])
        kk = torch.einsum("nhdk,hdkr->nhdr", lam * torch.cos(phk), z[:, :, 0::2]) \
            + torch.einsum("nhdk,hdkr->nhdr", lam * torch.sin(phk), z[:, :, 1::2])
        return (s * q)[None], (s * kk)[None]


class ConvSPE(nn.Module):
    def __init__(self, ndim=1, num_heads=8, in_features=64, num_realizations=256, kernel_size=200):
        super().__init__()
        assert ndim == 1
        c = num_heads * in_features
        self.num_heads, self.in_features = num_heads, in_features
        self.num_realizations, self.kernel_size = num_realizations, kernel_size
        self.code_shape = (num_heads, in_features)
        self.conv_q = nn.Conv1d(c, c, kernel_size, groups=c, bias=False)
        self.conv_k = nn.Conv1d(c, c, kernel_size, groups=c, bias=False)

    def forward(self, shape, num_realizations=None):
        n = shape[1]
        r = num_realizations or self.num_realizations
        el, c = self.kernel_size, self.num_heads * self.in_features
        z = torch.randn(r, c, n + 4 * el)
        s = 1.0 / (r * self.in_features) ** 0.25
        q = s * F.conv1d(z, self.conv_k.weight, groups=c)[:, :, el:el + n]   # the query code: conv_k
        k = s * F.conv1d(z, self.conv_q.weight, groups=c)[:, :, el:el + n]
        q = q.permute(2, 1, 0).reshape(n, self.num_heads, self.in_features, r)
        k = k.permute(2, 1, 0).reshape(n, self.num_heads, self.in_features, r)
        return q[None], k[None]


class SPEFilter(nn.Module):
    def __init__(self, gated=True, code_shape=None):
        super().__init__()
        self.gated = gated
        if gated:
            self.gate = nn.Parameter(torch.randn(code_shape))

    def forward(self, queries, keys, code):
        qbar, kbar = code
        if self.gated:
            h, d = self.gate.shape
            r = qbar.shape[-1]
            eps = torch.randn(h, d, r) / (r * d) ** 0.25
            g = torch.sigmoid(self.gate)[..., None]
            qbar = torch.sqrt(1 - g) * qbar + torch.sqrt(g) * eps
            kbar = torch.sqrt(1 - g) * kbar + torch.sqrt(g) * eps
        return (qbar * queries[..., None]).sum(-2), (kbar * keys[..., None]).sum(-2)


# ------------------------------------------------------------------------ a small model using it

class Model(nn.Module):
    def __init__(self, kind, heads=2, features=4, layers=3, vocab=11):
        super().__init__()
        self.heads, self.features = heads, features
        width = heads * features
        self.embed = nn.Embedding(vocab, width)
        self.qk = nn.ModuleList([nn.Linear(width, 2 * width) for _ in range(layers)])
        if kind == "sine":
            self.spe = SineSPE(heads, features, num_realizations=32, num_sines=3)
        else:
            self.spe = ConvSPE(1, heads, features, num_realizations=32, kernel_size=5)
            with torch.no_grad():
                self.spe.conv_q.weight.normal_()
                self.spe.conv_k.weight.normal_()
        # one code shared by the layers, a gated filter per layer (the SPE experiments' layout)
        self.spe_filters = nn.ModuleList([SPEFilter(True, self.spe.code_shape) for _ in range(layers)])
        self.seen = []      # the model's own q, k per layer (the test's reference; not the capture)

    def forward(self, tokens):
        b, n = tokens.shape
        x = self.embed(tokens)
        code = self.spe(tokens.shape)
        for qk, filt in zip(self.qk, self.spe_filters):
            q, k = qk(x).reshape(b, n, 2, self.heads, self.features).unbind(2)
            self.seen.append((q[0].detach().double().numpy(), k[0].detach().double().numpy()))
            qhat, khat = filt(q, k, code)
            x = x + torch.tanh(qhat.mean(dim=(2, 3)))[..., None]   # anything, so that layers differ
        return x


def templates(model, n, layer):
    """Ptilde (H, D, 2N - 1) over tau = -(N-1) .. N-1 (index tau + N - 1), float64."""
    sd = {k: v.detach().double().numpy() for k, v in model.state_dict().items()}
    tau = np.arange(-(n - 1), n)
    h, d = model.heads, model.features
    if "spe.freqs" in sd:
        f = 1.0 / (1.0 + np.exp(-sd["spe.freqs"])) / 2.0
        lam = np.log1p(np.exp(sd["spe.gains"]))
        th = sd["spe.offsets"]
        k2 = 2 * f.shape[-1]
        p = (lam[..., None] ** 2 * np.cos(2 * np.pi * f[..., None] * tau + th[..., None])).sum(2) / k2
    else:
        wq = sd["spe.conv_k.weight"][:, 0, :]        # the query code's filter
        wk = sd["spe.conv_q.weight"][:, 0, :]
        el = wq.shape[1]
        p = np.zeros((h * d, 2 * n - 1))
        for i, t in enumerate(tau):
            for j in range(el):
                if 0 <= j + t < el:
                    p[:, i] += wq[:, j] * wk[:, j + t]
        p = p.reshape(h, d, 2 * n - 1)
    g = 1.0 / (1.0 + np.exp(-sd["spe_filters.%d.gate" % layer]))
    return (1.0 - g)[..., None] * p + g[..., None]


def exact_logits(q, k, pt):
    """l[h, m, n] = sum_d q[m, h, d] k[n, h, d] Ptilde[h, d, m - n] / sqrt(D), float64."""
    n, h, d = q.shape
    m_idx = np.arange(n)[:, None] - np.arange(n)[None, :] + n - 1        # (N, N) -> tau index
    out = np.empty((h, n, n))
    for hh in range(h):
        ptm = pt[hh][:, m_idx]                                             # (D, N, N)
        out[hh] = np.einsum("md,nd,dmn->mn", q[:, hh], k[:, hh], ptm) / math.sqrt(d)
    return out


def run(*args):
    p = subprocess.run([RPE] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def build(kind, tmp, n=40, seed=1):
    torch.manual_seed(seed)
    model = Model(kind)
    ckpt = os.path.join(tmp, "%s.pt" % kind)
    torch.save(model.state_dict(), ckpt)
    tokens = torch.randint(0, 11, (2, n))                # a batch of 2: the capture keeps item 0
    cap_path = os.path.join(tmp, "%s-capture.npz" % kind)
    with torch.no_grad(), rpe_capture.Capture(model) as cap:
        model(tokens)
    cap.save(cap_path, tokens=tokens)
    return model, ckpt, cap_path, tokens


def check_exact(kind):
    with tempfile.TemporaryDirectory() as tmp:
        model, ckpt, cap_path, tokens = build(kind, tmp)
        c = rpe_capture.load(cap_path)
        assert sorted(c["layers"]) == [0, 1, 2], c["layers"].keys()
        assert c["meta"]["format"] == "rpe-capture" and c["meta"]["version"] == 1, c["meta"]
        assert c["meta"]["model_class"].endswith("Model"), c["meta"]
        assert np.array_equal(c["tokens"], tokens[0].numpy()), "tokens"
        worst = 0.0
        for layer, (q, k) in enumerate(model.seen):
            out = os.path.join(tmp, "logits-%d.npy" % layer)
            rc, _, err = run("compute", "logits", "--exact", "--checkpoint", ckpt, "--content", cap_path,
                             "--layer", layer, "-o", out)
            assert rc == 0, "rpe exited %d: %s" % (rc, err)
            got = np.load(out, allow_pickle=False)
            ref = exact_logits(q, k, templates(model, q.shape[0], layer))
            assert got.shape == ref.shape, (got.shape, ref.shape)
            err_rel = np.abs(got - ref).max() / np.abs(ref).max()
            worst = max(worst, err_rel)
            # float32 sums of D = 4 products of values O(1): a few ulps of the largest logit
            assert err_rel < 2e-5, "layer %d: max relative error %.3g" % (layer, err_rel)
        # the layers really differ (a wrong layer would be caught)
        l0 = np.load(os.path.join(tmp, "logits-0.npy"))
        l1 = np.load(os.path.join(tmp, "logits-1.npy"))
        assert np.abs(l0 - l1).max() > 1e-2 * np.abs(l0).max()
        return "max relative error %.2g over 3 layers" % worst


@test
def sine_exact_logits():
    return check_exact("sine")


@test
def conv_exact_logits():
    return check_exact("conv")


@test
def refusals():
    with tempfile.TemporaryDirectory() as tmp:
        model, ckpt, cap_path, _ = build("sine", tmp, n=12)
        out = os.path.join(tmp, "x.npy")
        # a layer the checkpoint has and the capture does not
        gaps = os.path.join(tmp, "gaps.npz")
        cap = rpe_capture.Capture(None)
        for layer in (0, 2):
            cap.record(layer, queries=torch.randn(12, 2, 4), keys=torch.randn(12, 2, 4))
        cap.save(gaps)
        rc, _, err = run("compute", "logits", "--exact", "--checkpoint", ckpt, "--content", gaps,
                         "--layer", 1, "-o", out)
        assert rc == 2 and "no layer 1" in err and "0, 2" in err, (rc, err)
        # a capture from another model (H = 3 heads of D = 5 features) against this module (2 x 4)
        other = os.path.join(tmp, "other.npz")
        cap = rpe_capture.Capture(None)
        cap.record(0, queries=torch.randn(1, 12, 3, 5), keys=torch.randn(1, 12, 3, 5))
        cap.save(other)
        rc, _, err = run("compute", "logits", "--exact", "--checkpoint", ckpt, "--content", other,
                         "--layer", 0, "-o", out)
        assert rc == 2 and "(12, 3, 5)" in err and "H = 2" in err and "D = 4" in err, (rc, err)
        assert not os.path.exists(out), "an output was written"
        # hostile files: NaN, shapes that disagree, 0 rows (written with numpy directly)
        q = np.ones((12, 2, 4), np.float32)
        bad = {
            "nan": {"layers.0.queries": np.where(np.arange(96).reshape(12, 2, 4) == 5, np.nan, q).astype(np.float32),
                    "layers.0.keys": q},
            "shapes": {"layers.0.queries": q, "layers.0.keys": np.ones((11, 2, 4), np.float32)},
            "empty": {"layers.0.queries": q[:0], "layers.0.keys": q[:0]},
            "pickle": {"layers.0.queries": np.array([{"x": 1}], dtype=object), "layers.0.keys": q},
        }
        for name, arrays in bad.items():
            path = os.path.join(tmp, "bad-%s.npz" % name)
            np.savez(path, **arrays)
            rc, _, err = run("compute", "logits", "--exact", "--checkpoint", ckpt, "--content", path,
                             "--layer", 0, "-o", out)
            assert rc == 2 and path in err, (name, rc, err)
            assert not os.path.exists(out), "an output was written for %s" % name
        # the capture tool itself refuses what it cannot write
        try:
            rpe_capture.Capture(None).save(os.path.join(tmp, "none.npz"))
            raise AssertionError("an empty capture was saved")
        except ValueError:
            pass
        assert not os.path.exists(os.path.join(tmp, "none.npz"))
        assert sorted(os.listdir(tmp)) == sorted(["sine.pt", "sine-capture.npz", "gaps.npz", "other.npz"]
                                                 + ["bad-%s.npz" % b for b in bad]), os.listdir(tmp)
        return "refused with exit status 2"


@test
def values_and_record():
    """cap.record from plain attention code, values included, and --values from the same file."""
    with tempfile.TemporaryDirectory() as tmp:
        model, ckpt, _, _ = build("sine", tmp, n=16)
        torch.manual_seed(3)
        q, k, v = torch.randn(2, 16, 2, 4), torch.randn(2, 16, 2, 4), torch.randn(2, 16, 2, 5)
        path = os.path.join(tmp, "rec.npz")
        with rpe_capture.Capture(None) as cap:
            rpe_capture.active().record(1, queries=q, keys=k, values=v)
        cap.save(path)
        c = rpe_capture.load(path)
        assert np.array_equal(c["layers"][1]["values"], v[0].numpy())
        out = os.path.join(tmp, "y.npy")
        rc, _, err = run("compute", "linear", "--checkpoint", ckpt, "--content", path, "--values", path,
                         "--layer", 1, "--seed", 2, "-o", out)
        assert rc == 0, err
        y = np.load(out)
        assert y.shape == (16, 2, 5), y.shape          # Dv = 5: the captured values were used
        return "linear attention on captured q, k, v: shape %s" % (y.shape,)


@test
def other_model():
    """A capture of model A opened with a checkpoint of model B (same architecture, other weights)
    is refused, naming the tensors; A's own weights are accepted however the file wraps them."""
    with tempfile.TemporaryDirectory() as tmp:
        model, ckpt, cap_path, _ = build("sine", tmp, n=12, seed=1)
        fp = rpe_capture.load(cap_path)["meta"]["model_fingerprint"]
        assert sorted(fp["tensors"]) == sorted(model.state_dict()), sorted(fp["tensors"])
        # the recorded hash is the SHA-256 of the float32 little-endian values, computed here again
        w = model.state_dict()["spe.freqs"].detach().numpy().astype("<f4")
        assert fp["tensors"]["spe.freqs"]["sha256"] == hashlib.sha256(w.tobytes()).hexdigest()
        out = os.path.join(tmp, "x.npy")
        torch.manual_seed(2)
        other = Model("sine")
        ckpt_b = os.path.join(tmp, "b.pt")
        torch.save(other.state_dict(), ckpt_b)
        rc, _, err = run("compute", "logits", "--exact", "--checkpoint", ckpt_b, "--content", cap_path,
                         "--layer", 0, "-o", out)
        assert rc == 2 and "another model" in err and cap_path in err and ckpt_b in err, (rc, err)
        assert "'spe.freqs' holds other values" in err or "more" in err, err
        assert not os.path.exists(out), "an output was written"
        # one tensor changed, the rest A's: that tensor is named
        sd = {k: v.clone() for k, v in model.state_dict().items()}
        sd["spe.gains"][0, 0, 0] += 1e-3
        ckpt_c = os.path.join(tmp, "c.pt")
        torch.save(sd, ckpt_c)
        rc, _, err = run("compute", "logits", "--exact", "--checkpoint", ckpt_c, "--content", cap_path,
                         "--layer", 0, "-o", out)
        assert rc == 2 and "1 of the" in err and "'spe.gains' holds other values" in err, (rc, err)
        # A's weights under {'model': ...} with DataParallel's "module." prefix, beside an
        # optimizer's state: accepted, and the logits are those of A's own file
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for p in model.parameters():
            p.grad = torch.zeros_like(p)
        opt.step()
        wrapped = os.path.join(tmp, "wrapped.pt")
        torch.save({"model": {"module." + k: v for k, v in model.state_dict().items()},
                    "optimizer": opt.state_dict(), "epoch": 3}, wrapped)
        ref = os.path.join(tmp, "ref.npy")
        rc, _, err = run("compute", "logits", "--exact", "--checkpoint", ckpt, "--content", cap_path,
                         "--layer", 0, "-o", ref)
        assert rc == 0 and "fingerprint" not in err, (rc, err)
        rc, _, err = run("compute", "logits", "--exact", "--checkpoint", wrapped, "--content", cap_path,
                         "--layer", 0, "-o", out)
        assert rc == 0, (rc, err)
        assert np.array_equal(np.load(out), np.load(ref))
        # a capture made with record() only: accepted, with a one-line note
        rec = os.path.join(tmp, "rec.npz")
        cap = rpe_capture.Capture(None)
        cap.record(0, queries=torch.randn(12, 2, 4), keys=torch.randn(12, 2, 4))
        cap.save(rec)
        rc, _, err = run("compute", "logits", "--exact", "--checkpoint", ckpt_b, "--content", rec,
                         "--layer", 0, "-o", out)
        assert rc == 0 and "no fingerprint" in err and len(err.strip().splitlines()) == 1, (rc, err)
        return "another model's weights refused, exit status 2; A's weights accepted under a prefix"


def main():
    global FAILED
    print("1..%d" % len(TESTS))
    for i, fn in enumerate(TESTS, 1):
        try:
            note = fn()
            print("ok %d %s # %s" % (i, fn.__name__, note))
        except Exception as e:                  # noqa: BLE001 (reported as a failed TAP test)
            FAILED += 1
            print("not ok %d %s" % (i, fn.__name__))
            for line in ("%s: %s" % (type(e).__name__, e)).splitlines():
                print("# " + line)
        sys.stdout.flush()
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
