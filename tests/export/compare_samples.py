"""Checks python/cellgan_ensemble.py against cellgan sample (tests/export/round_trip.sh).

Usage: compare_samples.py MODULE_DIR MANIFEST
Each MANIFEST line: CASE PT_FILE NPY_FILE N SEED CLASS LABELS_NPY (CLASS and LABELS_NPY "-" when not given).
For each line, the export loads with torch.load(weights_only=True), and load(PT).sample(N, SEED, cls=CLASS) gives
NPY_FILE's samples to 1e-5 (and the labels of LABELS_NPY). Prints one line per check with the largest absolute
difference; exits 1 when any check fails.
"""

import sys

import numpy
import torch

sys.path.insert(0, sys.argv[1])
import cellgan_ensemble  # noqa: E402

TOLERANCE = 1e-5
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


def check_file(case, pt):
    raw = torch.load(pt, map_location="cpu", weights_only=True)  # nothing but tensors and plain values
    check(raw["format"] == "cellgan-ensemble" and raw["version"] == 1, f"{case}: format and version")
    check(raw["weights"].dtype == torch.float64, f"{case}: weights are float64")
    check(len(raw["generators"]) == raw["weights"].numel(), f"{case}: one state dict per weight")
    ensemble = cellgan_ensemble.load(pt)
    check(all(isinstance(g, torch.nn.Module) and not g.training for g in ensemble.generators),
          f"{case}: generators are nn.Modules in evaluation mode")
    check(torch.equal(ensemble.weights, raw["weights"]), f"{case}: .weights")
    return ensemble


def main():
    loaded = {}
    rows = [line.split() for line in open(sys.argv[2]) if line.strip()]
    for case, pt, npy, n, seed, cls, labels_npy in rows:
        if pt not in loaded:
            loaded[pt] = check_file(case, pt)
        ensemble = loaded[pt]
        expected = torch.from_numpy(numpy.load(npy))
        want_labels = labels_npy != "-"
        got = ensemble.sample(int(n), seed=int(seed), cls=None if cls == "-" else int(cls), labels=want_labels)
        samples, labels = got if want_labels else (got, None)
        what = f"{case} -n {n} --seed {seed}" + ("" if cls == "-" else f" --class {cls}")
        if samples.dtype != torch.float32 or samples.shape != expected.shape:
            check(False, f"{what}: python gives {samples.dtype} {tuple(samples.shape)}, cellgan {tuple(expected.shape)}")
            continue
        diff = (samples - expected).abs().max().item()
        print(f"{what}: {expected.shape[0]} x {expected.shape[1]}, max |python - cellgan| = {diff:.3g}")
        check(diff <= TOLERANCE, f"{what}: max difference {diff:.3g} > {TOLERANCE}")
        if want_labels:
            cellgan_labels = torch.from_numpy(numpy.load(labels_npy)).reshape(-1).to(torch.int64)
            check(torch.equal(labels, cellgan_labels), f"{what}: the labels differ from --labels")
        # The comparison can fail: the next seed gives other samples.
        other = ensemble.sample(int(n), seed=int(seed) + 1 if int(seed) < 2**64 - 1 else 0,
                                cls=None if cls == "-" else int(cls))
        check((other - expected).abs().max().item() > 1e-3, f"{what}: another seed gives the same samples")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print(f"all {len(rows)} sample comparisons agree to {TOLERANCE}")


main()
