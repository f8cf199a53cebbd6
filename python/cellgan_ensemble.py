"""cellgan's generator ensembles in PyTorch.

`cellgan export --ensemble RUN/ensemble.bin --out ensemble.pt` writes a
run's mixture of generators as a file that torch.load reads; this module
rebuilds the generators from it and samples the mixture as cellgan does:

    import cellgan_ensemble
    ensemble = cellgan_ensemble.load("ensemble.pt")
    images = ensemble.sample(1000, seed=1)  # what `cellgan sample -n 1000 --seed 1` writes

`ensemble.sample(n, seed)` gives the float32 samples [n, sample_dim] of
`cellgan sample --ensemble RUN/ensemble.bin -n N --seed S --out FILE.npy`
(to float rounding), and `ensemble.sample(n, seed, cls=C)` those of
`--class C`, for a dcgan_conditional network or a per_class run.
`ensemble.generators` are the networks (torch.nn.Module, in evaluation
mode) and `ensemble.weights` their mixture weights (float64).

How cellgan draws n samples: generator i contributes exactly round(w_i * n)
of them (largest remainders get the leftover samples), in generator order;
its latent vectors are drawn at once, torch.randn(count_i, latent_dim), from
one CPU torch.Generator seeded with a seed derived from S (derive_seed), and
pass through it 1,000 rows at a time. Needs only PyTorch (1.13 or later).
"""

import math

import torch
from torch import nn

__all__ = ["load", "Ensemble", "MlpGenerator", "ToyGenerator", "DcganGenerator", "ConditionalGenerator",
           "derive_seed", "sample_counts"]

FORMAT = "cellgan-ensemble"
VERSION = 1
SAMPLE_CHUNK = 1000  # rows a generator sees at once (common/nn/ensemble.h)
CLASS_COUNT = 10
IMAGE_SIDE = 28
IMAGE_DIM = IMAGE_SIDE * IMAGE_SIDE
LEAKY_SLOPE = 0.2
MLP_HIDDEN, MLP_HIDDEN_LAYERS = 256, 2
# The streams of common/rng.h that cellgan sample draws its latent vectors from.
_EVALUATION_STREAM, _SAMPLE_INDEX = 5, 2
_MASK = (1 << 64) - 1


# ---- the networks (common/nn/networks.h), named as cellgan names their tensors ----

def _hidden_mlp(inputs, hidden, layers, outputs):
    body = []
    for i in range(layers):
        body += [nn.Linear(inputs if i == 0 else hidden, hidden), nn.LeakyReLU(LEAKY_SLOPE)]
    return body + [nn.Linear(hidden, outputs)]


class MlpGenerator(nn.Module):
    """network.kind mlp: z -> 256 -> LeakyReLU 0.2 -> 256 -> LeakyReLU 0.2 -> data_dim -> Tanh."""

    def __init__(self, latent_dim, data_dim):
        super().__init__()
        self.body = nn.Sequential(*_hidden_mlp(latent_dim, MLP_HIDDEN, MLP_HIDDEN_LAYERS, data_dim), nn.Tanh())

    def forward(self, z):
        return self.body(z)


class ToyGenerator(nn.Module):
    """network.kind toy: z -> [toy_hidden -> LeakyReLU 0.2] x toy_layers -> data_dim (linear output)."""

    def __init__(self, latent_dim, data_dim, hidden, layers):
        super().__init__()
        self.body = nn.Sequential(*_hidden_mlp(latent_dim, hidden, layers, data_dim))

    def forward(self, z):
        return self.body(z)


class DcganGenerator(nn.Module):
    """network.kind dcgan and sngan: z -> Linear 128x7x7 -> BN -> ReLU -> up x2 -> Conv 128->64 k3 -> BN -> ReLU
    -> up x2 -> Conv 64->1 k3 -> Tanh, flattened to [N, 784]."""

    def __init__(self, latent_dim):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(latent_dim, 128 * 7 * 7), nn.Unflatten(1, (128, 7, 7)), nn.BatchNorm2d(128), nn.ReLU(),
            nn.Upsample(scale_factor=2.0, mode="nearest"), nn.Conv2d(128, 64, 3, padding=1), nn.BatchNorm2d(64),
            nn.ReLU(), nn.Upsample(scale_factor=2.0, mode="nearest"), nn.Conv2d(64, 1, 3, padding=1), nn.Tanh(),
            nn.Flatten())

    def forward(self, z):
        return self.body(z)


class ConditionalGenerator(nn.Module):
    """network.kind dcgan_conditional (common/nn/conditional_networks.h): the last 10 of the latent_dim values are
    label slots, the class is their argmax; a DCGAN generator takes [z, onehot(class)] and the output is
    [image (784), onehot(class)]."""

    def __init__(self, latent_dim):
        super().__init__()
        self.latent_dim = latent_dim
        self.body = nn.Sequential(DcganGenerator(latent_dim))

    def forward(self, z):
        free = self.latent_dim - CLASS_COUNT
        label = nn.functional.one_hot(latent_labels(z), CLASS_COUNT).to(torch.float32)
        return torch.cat([self.body(torch.cat([z[:, :free], label], 1)), label], 1)


def latent_labels(z):
    """The class of each latent row of a conditional generator: the argmax of its label slots."""
    return z[:, z.size(1) - CLASS_COUNT:].argmax(1)


def _build_generator(meta):
    kind, latent, data = meta["kind"], meta["latent_dim"], meta["data_dim"]
    if kind == "mlp":
        return MlpGenerator(latent, data)
    if kind == "toy":
        return ToyGenerator(latent, data, meta["toy_hidden"], meta["toy_layers"])
    if kind in ("dcgan", "sngan"):
        return DcganGenerator(latent)
    if kind == "dcgan_conditional":
        return ConditionalGenerator(latent)
    raise ValueError(f"network kind '{kind}': expected mlp, dcgan, sngan, toy or dcgan_conditional")


# ---- cellgan's draws (common/rng.h, common/nn/ensemble.cpp) ----

def _splitmix64(state):
    z = (state + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def derive_seed(seed, stream, index=0):
    """The seed of cellgan's stream `stream` number `index` under seed `seed` (SplitMix64, common/rng.h)."""
    s = _splitmix64(seed & _MASK)
    s = _splitmix64(s ^ ((stream * 0xD1B54A32D192ED03) & _MASK))
    return _splitmix64(s ^ ((index * 0x8CB92BA72F3D8DD7 + 0x632BE59BD9B4E019) & _MASK))


def _total(values):
    total = 0.0  # in order, one addition at a time, as std::accumulate
    for v in values:
        total += v
    return total


def sample_counts(weights, n):
    """How many of n samples each generator draws: floor(w_i / sum * n), the rest one each to the largest
    remainders (ties to the lower index), as Ensemble::sample_counts."""
    weights = [float(w) for w in weights]
    total = _total(weights)
    counts, remainders = [], []
    for i, w in enumerate(weights):
        exact = w / total * float(n) if total > 0 else 0.0
        counts.append(int(math.floor(exact)))
        remainders.append((exact - math.floor(exact), i))
    remainders.sort(key=lambda r: -r[0])  # stable: equal remainders keep their order
    used, k = sum(counts), 0
    while used < n and remainders:
        counts[remainders[k][1]] += 1
        used += 1
        k = (k + 1) % len(remainders)
    return counts


def _normalised(weights):
    total = _total(weights)
    return [w / total for w in weights]


# ---- the ensemble ----

class Ensemble:
    """A mixture of generators loaded from a `cellgan export` file (see the module's help).

    Attributes: generators (list of nn.Module), weights (float64 tensor), kind (network.kind), latent_dim,
    sample_dim (the values of one sample), cell, classes (the class count of a conditional generator, else
    None) and, for a per_class run, proportions (float64 tensor, the classes' shares) and class_generators
    (per class: the indices of its generators)."""

    def __init__(self, data):
        self.kind = data["kind"]
        self.latent_dim = int(data["latent_dim"])
        self.sample_dim = int(data["sample_dim"])
        self.cell = int(data["cell"])
        self.weights = data["weights"].to(torch.float64)
        self.generators = []
        for i, state in enumerate(data["generators"]):
            g = _build_generator(data)
            try:
                g.load_state_dict(state)
            except RuntimeError as e:
                raise ValueError(f"generator {i}: its tensors do not fit a {self.kind} network: {e}") from None
            self.generators.append(g.eval())
        if len(self.generators) != self.weights.numel():
            raise ValueError(f"{len(self.generators)} generators but {self.weights.numel()} weights")
        self.proportions, self.class_generators, self.classes = None, None, None
        if data.get("classes") is not None:
            index = data["classes"]
            self.proportions = index["proportions"].to(torch.float64)
            self.class_generators = [list(range(int(first), int(first) + int(count)))
                                     for first, count in index["generators"].tolist()]
            self.classes = len(self.class_generators)
        elif self.conditional:
            self.classes = CLASS_COUNT

    @property
    def conditional(self):
        """True for network.kind dcgan_conditional."""
        return self.kind == "dcgan_conditional"

    def sample(self, n, seed=1, cls=None, labels=False):
        """n samples, float32 [n, sample_dim]: those `cellgan sample -n N --seed S` writes, or with cls=C those of
        `--class C`. With labels=True, also each sample's class (int64 [n]), as `--labels` writes them."""
        n, seed = int(n), int(seed)
        if n < 1:
            raise ValueError(f"n = {n}: expected at least 1 sample")
        if not 0 <= seed <= _MASK:
            raise ValueError(f"seed = {seed}: expected a non-negative integer below 2^64")
        if (cls is not None or labels) and self.classes is None:
            raise ValueError("cls, labels: this ensemble has no classes (not dcgan_conditional, not per_class)")
        if cls is not None and not 0 <= int(cls) < self.classes:
            raise ValueError(f"cls = {cls}: expected 0..{self.classes - 1}")
        latent_seed = derive_seed(seed, _EVALUATION_STREAM, _SAMPLE_INDEX)
        with torch.no_grad():
            if self.conditional and (cls is not None or labels):
                samples, drawn = self._sample_conditional(n, latent_seed, cls)
            elif cls is not None:
                members = self.class_generators[int(cls)]
                weights = _normalised([float(self.weights[i]) for i in members])
                samples = self._sample_mixture([self.generators[i] for i in members], weights, n, latent_seed)
                drawn = torch.full((n,), int(cls), dtype=torch.int64)
            else:
                samples = self._sample_mixture(self.generators, self.weights.tolist(), n, latent_seed)
                drawn = self._mixture_labels(n) if labels else None
        return (samples, drawn) if labels else samples

    def _image_part(self, rows):
        return rows[:, :IMAGE_DIM] if self.conditional else rows

    def _sample_mixture(self, generators, weights, n, seed):
        # sample_mixture: each generator's latent vectors at once, then through it a chunk at a time.
        gen = torch.Generator().manual_seed(seed)
        parts = []
        for g, count in zip(generators, sample_counts(weights, n)):
            if count == 0:
                continue
            z = torch.randn(count, self.latent_dim, generator=gen)
            with _evaluating(g):
                for start in range(0, count, SAMPLE_CHUNK):
                    parts.append(self._image_part(g(z[start:start + SAMPLE_CHUNK])))
        return torch.cat(parts, 0)

    def _sample_conditional(self, n, seed, cls):
        # sample_conditional: the same draws, the label slots set to the class asked for; no chunks.
        gen = torch.Generator().manual_seed(seed)
        parts, drawn = [], []
        for g, count in zip(self.generators, sample_counts(self.weights.tolist(), n)):
            if count == 0:
                continue
            z = torch.randn(count, self.latent_dim, generator=gen)
            if cls is not None:
                z[:, self.latent_dim - CLASS_COUNT:] = 0.0
                z[:, self.latent_dim - CLASS_COUNT + int(cls)] = 1.0
            with _evaluating(g):
                parts.append(self._image_part(g(z)))
            drawn.append(latent_labels(z))
        return torch.cat(parts, 0), torch.cat(drawn, 0)

    def _mixture_labels(self, n):
        counts = sample_counts(self.weights.tolist(), n)
        return torch.tensor([c for c, members in enumerate(self.class_generators)
                             for i in members for _ in range(counts[i])], dtype=torch.int64)


class _evaluating:
    """Evaluation mode for the duration of a with block; the module's own mode after it."""

    def __init__(self, module):
        self.module, self.was_training = module, module.training

    def __enter__(self):
        self.module.eval()

    def __exit__(self, *exc):
        self.module.train(self.was_training)


def _read(path):
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # a PyTorch without weights_only
        return torch.load(path, map_location="cpu")


def load(path):
    """The ensemble in a file `cellgan export` wrote. ValueError when the file is not one."""
    data = _read(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a cellgan ensemble export (cellgan export --ensemble FILE --out FILE.pt)")
    if data.get("version") != VERSION:
        raise ValueError(f"{path}: export format version {data.get('version')}, this module reads version {VERSION}")
    return Ensemble(data)
