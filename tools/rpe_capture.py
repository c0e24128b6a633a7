#!/usr/bin/python3
"""rpe_capture: record what a trained model's attention layers receive on one input, for RPE Studio.

A *capture* is one .npz file holding, for every attention layer l of one forward pass, the queries
and keys (and optionally the values) as the model computed them *before* the positional encoding,
for the first item of the batch.  RPE Studio (`rpe ... --content run.npz --layer l`) then draws every
view on the model's real content: the exact attention of the trained positional module on that input,
its SPE estimate, outputs with the captured values.  The format is described in docs/checkpoints.md (section "Captures").

With the SPE authors' package (module `spe`) nothing in the model needs to change: every module whose
class is named ``SPEFilter`` is recognised (its ``forward(queries, keys, code)`` receives queries and
keys of shape (batch, N, heads, key_dim)), and the layer index is the order of the calls in the
forward pass (a filter shared by all layers is called once per layer)::

    import rpe_capture
    with rpe_capture.Capture(model) as cap:
        model(tokens)
    cap.save("run.npz", tokens=tokens[0])

Any other attention code (LRPE, FastRPB, plain softmax models) records with one line where it has
its queries, keys and values::

    cap.record(layer, queries=q, keys=k, values=v)     # (batch, N, H, D) or (N, H, D)

Pass the capture down to the code however suits the model (an argument, an attribute, or the
module-level ``rpe_capture.active()``, which returns the innermost open capture or None)::

    c = rpe_capture.active()
    if c is not None:
        c.record(self.index, queries=q, keys=k, values=v)

The file also records a *fingerprint* of the model it ran (``meta["model_fingerprint"]``): for every
tensor of ``model.state_dict()`` (names without a leading ``module.``), its dtype, its shape and the
SHA-256 of its values converted to float32, little-endian, in C order.  RPE Studio compares it with
the checkpoint it is opened with and refuses a capture of another model (the same architecture with
other weights included), naming the tensors that differ.  A capture made without a model
(``Capture()`` and ``record()`` only) has no fingerprint; pass ``Capture(fingerprint=model)`` (a
module or a state_dict) to give it one.

Needs only torch (for the hooks; numpy arrays are accepted too) and numpy.  It never reads a file;
it writes only the file it is asked to write (through a temporary file in the same folder, renamed
over it when complete).  `python3 rpe_capture.py info run.npz` prints what a capture holds (read
with numpy, pickles refused).
"""

import datetime
import hashlib
import json
import os
import sys
import tempfile
import warnings

import numpy as np

__all__ = ["Capture", "active", "load", "fingerprint", "FORMAT", "VERSION"]

FORMAT = "rpe-capture"
VERSION = 1
FINGERPRINT_HASH = "sha256-float32le"

_active = []


def active():
    """The innermost open Capture (inside its ``with`` block), or None."""
    return _active[-1] if _active else None


def _first_item(x, what, layer):
    """x as a float32 (N, H, D) numpy array: the first batch item of a 4-D tensor, or a 3-D one."""
    if hasattr(x, "detach"):            # torch.Tensor, without importing torch here
        x = x.detach()
        if x.dim() == 4:
            x = x[0]
        x = x.to("cpu").float().numpy()
    else:
        x = np.asarray(x)
        if x.ndim == 4:
            x = x[0]
    if x.ndim != 3:
        raise ValueError("layer %d %s: expected (batch, N, H, D) or (N, H, D), got shape %s"
                         % (layer, what, tuple(x.shape)))
    if any(s == 0 for s in x.shape):
        raise ValueError("layer %d %s: empty shape %s" % (layer, what, tuple(x.shape)))
    x = np.ascontiguousarray(x, dtype=np.float32)
    if not np.isfinite(x).all():
        raise ValueError("layer %d %s: %d values are not finite" % (layer, what, int((~np.isfinite(x)).sum())))
    return x


def fingerprint(model_or_state_dict):
    """The fingerprint of a model (a torch module, or a state_dict: a mapping of names to tensors or
    arrays) as a capture records it: {"hash": "sha256-float32le", "tensors": {name: {"dtype",
    "shape", "sha256"}}}, with a leading "module." (DataParallel) dropped from the names.  The hash
    is over the values converted to float32, little-endian, C order: what RPE Studio computes again
    from the checkpoint file, whatever dtype it stores."""
    sd = model_or_state_dict.state_dict() if hasattr(model_or_state_dict, "state_dict") else model_or_state_dict
    tensors = {}
    for name, t in sd.items():
        key = name
        while key.startswith("module."):
            key = key[len("module."):]
        if hasattr(t, "detach"):
            dtype = str(t.dtype).replace("torch.", "")
            a = t.detach().to("cpu")
            if a.is_complex():
                continue            # not a tensor RPE Studio reads
            a = a.float().contiguous().numpy()
        else:
            a = np.asarray(t)
            dtype = str(a.dtype)
            if np.iscomplexobj(a):
                continue
        a = np.ascontiguousarray(a, dtype="<f4")
        tensors[key] = {"dtype": dtype, "shape": [int(d) for d in a.shape],
                        "sha256": hashlib.sha256(a.tobytes()).hexdigest()}
    return {"hash": FINGERPRINT_HASH, "tensors": tensors}


class Capture:
    """Records, during the forward passes inside its ``with`` block, the queries, keys and values of
    every attention layer (first batch item), and saves them as one .npz.

    ``Capture(model)``: hooks every submodule of `model` whose class is named ``SPEFilter`` while the
    block is open (the hooks are removed when it closes).  Capture one forward pass per Capture: the
    filters' calls are numbered in order, so a second pass would record layers L .. 2L - 1.  A call
    whose queries cannot be recorded (not (batch, N, H, D), not finite) is left out with a warning;
    the forward pass itself is never changed.  `model` may be None when the code records
    every layer itself.  ``meta`` is a dict saved in the file's metadata (add what you like: the
    task, the checkpoint's name, the input's source).  ``fingerprint``: the module or state_dict whose
    fingerprint the file records (default: `model`; False: none).
    """

    def __init__(self, model=None, fingerprint=None):
        self.model = model
        self.fingerprint_of = model if fingerprint is None else (None if fingerprint is False else fingerprint)
        self.layers = {}          # layer -> {"queries": array, "keys": array, "values": array}
        self.meta = {}
        self.batch = None
        self._spe_calls = 0
        self._patched = []

    # ---- hooks -------------------------------------------------------------------------------

    def __enter__(self):
        if self.model is not None and hasattr(self.model, "modules"):
            for module in self.model.modules():
                if type(module).__name__ == "SPEFilter":
                    self._patch(module)
        _active.append(self)
        return self

    def __exit__(self, *exc):
        for module, had_own, own in reversed(self._patched):
            if had_own:
                module.forward = own
            else:
                del module.forward
        self._patched = []
        if self in _active:
            _active.remove(self)
        return False

    def _patch(self, module):
        # an instance attribute shadows the class's forward for this module only, and sees keyword
        # arguments too (forward pre-hooks do not, before torch 2.0)
        had_own = "forward" in module.__dict__
        original = module.forward
        capture = self

        def forward(*args, **kwargs):
            queries = kwargs["queries"] if "queries" in kwargs else (args[0] if len(args) > 0 else None)
            keys = kwargs["keys"] if "keys" in kwargs else (args[1] if len(args) > 1 else None)
            if queries is not None and keys is not None:
                layer = capture._spe_calls
                capture._spe_calls += 1
                try:
                    capture.record(layer, queries=queries, keys=keys)
                except ValueError as e:
                    # never break the user's forward pass: the layer is left out, and said so
                    warnings.warn("rpe_capture: layer %d was not recorded: %s" % (layer, e))
            return original(*args, **kwargs)

        module.forward = forward
        self._patched.append((module, had_own, original if had_own else None))

    # ---- recording -----------------------------------------------------------------------------

    def record(self, layer, queries=None, keys=None, values=None):
        """Records layer `layer`'s queries and keys (before the positional encoding) and values:
        torch tensors or numpy arrays of shape (batch, N, H, D) (the first item is kept) or (N, H, D).
        Any of them may be given alone; a second record of the same array for a layer replaces it."""
        layer = int(layer)
        if layer < 0 or layer > 9999:
            raise ValueError("layer %d: layer indices are 0 .. 9999" % layer)
        arrays = {}
        for what, x in (("queries", queries), ("keys", keys), ("values", values)):
            if x is not None:
                arrays[what] = _first_item(x, what, layer)      # all checked before any is kept
        for what, x in (("queries", queries), ("keys", keys), ("values", values)):
            if x is not None and self.batch is None and getattr(x, "ndim", None) == 4:
                self.batch = int(x.shape[0])
        if arrays:
            self.layers.setdefault(layer, {}).update(arrays)

    # ---- saving --------------------------------------------------------------------------------

    def _check(self, tokens):
        if not self.layers:
            raise ValueError("nothing was captured (no SPEFilter was called and nothing was recorded)")
        for layer, entry in sorted(self.layers.items()):
            if "queries" not in entry or "keys" not in entry:
                raise ValueError("layer %d: queries and keys are both needed (recorded: %s)"
                                 % (layer, ", ".join(sorted(entry)) or "nothing"))
            q, k = entry["queries"], entry["keys"]
            if q.shape != k.shape:
                raise ValueError("layer %d: queries %s and keys %s differ in shape"
                                 % (layer, q.shape, k.shape))
            v = entry.get("values")
            if v is not None and v.shape[:2] != q.shape[:2]:
                raise ValueError("layer %d: values %s do not match queries %s in (N, H)"
                                 % (layer, v.shape, q.shape))
        if tokens is not None:
            if tokens.ndim != 1 or tokens.shape[0] == 0:
                raise ValueError("tokens: expected a non-empty (N,) sequence, got shape %s" % (tokens.shape,))

    def save(self, path, tokens=None):
        """Writes the capture to `path` (.npz): layers.<l>.queries|keys|values, tokens (N,) int64
        when given (a 1-D sequence, or (batch, N): the first item), meta (UTF-8 JSON as uint8).
        The file appears whole or not at all."""
        if tokens is not None:
            if hasattr(tokens, "detach"):
                tokens = tokens.detach().to("cpu").numpy()
            tokens = np.asarray(tokens)
            if tokens.ndim == 2:
                tokens = tokens[0]
            if not np.issubdtype(tokens.dtype, np.integer):
                raise ValueError("tokens: expected integers, got %s" % tokens.dtype)
            tokens = np.ascontiguousarray(tokens, dtype=np.int64)
        self._check(tokens)
        arrays = {}
        shapes = {}
        for layer, entry in sorted(self.layers.items()):
            shapes[str(layer)] = {}
            for what in ("queries", "keys", "values"):
                if what in entry:
                    arrays["layers.%d.%s" % (layer, what)] = entry[what]
                    shapes[str(layer)][what] = list(entry[what].shape)
        if tokens is not None:
            arrays["tokens"] = tokens
        model_class = None
        if self.model is not None:
            t = type(self.model)
            model_class = "%s.%s" % (t.__module__, t.__qualname__)
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "model_class": model_class,
            "layers": shapes,
            "tokens": None if tokens is None else int(tokens.shape[0]),
            "batch": self.batch,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "written_by": "rpe_capture.py %d" % VERSION,
        }
        if self.fingerprint_of is not None and (hasattr(self.fingerprint_of, "state_dict")
                                                or hasattr(self.fingerprint_of, "items")):
            meta["model_fingerprint"] = fingerprint(self.fingerprint_of)
        for key, value in self.meta.items():
            if key not in meta:
                meta[key] = value
        text = json.dumps(meta, ensure_ascii=False, sort_keys=True).encode("utf-8")
        if len(text) > (1 << 20) and "model_fingerprint" in meta:
            # the reader takes at most 1 MiB of metadata: a model of very many tensors goes without
            warnings.warn("rpe_capture: the model has too many tensors for the fingerprint; it is left out")
            del meta["model_fingerprint"]
            text = json.dumps(meta, ensure_ascii=False, sort_keys=True).encode("utf-8")
        arrays["meta"] = np.frombuffer(text, dtype=np.uint8)
        _write_atomically(path, arrays)
        return path


def _write_atomically(path, arrays):
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        # the permissions a plain open() would give (mkstemp makes the file private)
        umask = os.umask(0o22)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load(path):
    """Reads a capture back (numpy only, pickled objects refused): a dict with "layers"
    {l: {"queries", "keys"[, "values"]}}, "tokens" (or None) and "meta" (a dict)."""
    out = {"layers": {}, "tokens": None, "meta": {}}
    with np.load(path, allow_pickle=False) as z:
        for name in z.files:
            if name == "tokens":
                out["tokens"] = z[name]
            elif name == "meta":
                out["meta"] = json.loads(z[name].tobytes().decode("utf-8"))
            elif name.startswith("layers."):
                parts = name.split(".")
                if len(parts) == 3 and parts[1].isdigit() and parts[2] in ("queries", "keys", "values"):
                    out["layers"].setdefault(int(parts[1]), {})[parts[2]] = z[name]
    return out


def _main(argv):
    if len(argv) != 3 or argv[1] != "info":
        sys.stderr.write("usage: %s info CAPTURE.npz\n" % argv[0])
        return 2
    c = load(argv[2])
    meta = c["meta"]
    print("%s: %s version %s, model %s, %s" % (argv[2], meta.get("format"), meta.get("version"),
                                               meta.get("model_class"), meta.get("date")))
    for layer, entry in sorted(c["layers"].items()):
        print("  layer %d: %s" % (layer, ", ".join("%s %s" % (k, tuple(v.shape)) for k, v in sorted(entry.items()))))
    if c["tokens"] is not None:
        print("  tokens (%d,)" % c["tokens"].shape[0])
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
