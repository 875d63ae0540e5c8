#!/usr/bin/env python3
"""tests/bench/fit-ensemble.py - fit and measure the "ensemble" and "auto"
forecasts on the public Google VM CPU traces.

    python3 tests/bench/fit-ensemble.py [--data CSV] [--window 16]
        [--horizon 6] [--every 1] [--iters 30] [--check DLPLAN]

It reproduces the rolling-origin backtest of "dlplan predict --backtest"
(src/cmd_predict.c): every origin o = W..n-1 of a series of n points
(--every E keeps o = W, W+E, ...), a fit on the W points before o, and
forecasts h = 1..H as far as o + h <= n.  MAPE is the mean of
|error|/|actual| over the points whose actual is not 0, MAE is over all
points, both pooled over the series.  last, mean and median are not
clamped (as in dlplan); gmc, gm and ensemble are clamped to [0, 1].

Methods: gmc (dlplan(1) ALGORITHMS, Forecast, with expect correction and K = 3,
a port of src/gmc.c that --check compares with "DLPLAN predict" on every 5th
window of every series and on synthetic windows that need a shift), gm (plain
GM(1,1)), last, mean, median (of the W points; mean of the two middle
values), wmed (the recency- and 1/x-weighted median, a member only),
ensemble (per-horizon linear combination of gmc, last, mean, median and
wmed, clamped to [0, 1]) and auto (per series and h, the method among
ensemble, gmc, gm, last, mean, median with the lowest summed APE over
the origins o' = W..o-h of the same series; ties and no history pick the
earlier name in that list, so ensemble first).

The weights are fitted on the series with an even index in file order
(0, 2, ...) by minimising their pooled MAPE (iteratively reweighted least
squares, --iters rounds, residual floor 1e-4, first round plain least
squares on relative errors), and printed with 17 significant digits.
The report gives MAPE and MAE of every method per h on the fit half, the
held-out half (odd index) and all series, and the ratio of ensemble and
auto to the best of last, mean and median.  See
tests/bench/ensemble-spec.md for the algorithm.
Standard library only; about two minutes of CPU for the 400 series.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
from operator import mul

def read_series(path):
    """node,t,util rows (lines starting with # skipped) -> list of
    (name, [values sorted by t]) in order of first appearance."""
    order, data = [], {}
    with open(path) as f:
        header = None
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            if header is None:
                header = line.strip().split(",")
                continue
            node, t, u = line.strip().split(",")
            if node not in data:
                data[node] = []
                order.append(node)
            data[node].append((int(t), float(u)))
    return [(k, [v for _, v in sorted(data[k])]) for k in order]


# --- GMC of dlplan(1) ALGORITHMS, Forecast, operation for operation like
# src/gmc.c

def _ratio_pass(x, c):
    n = len(x)
    lo = math.exp(-2.0 / (n + 1))
    hi = math.exp(2.0 / (n + 1))
    for v in x:
        if not (v + c > 0):
            return False
    for k in range(1, n):
        q = (x[k - 1] + c) / (x[k] + c)
        if not (q > lo and q < hi):
            return False
    return True


def gmc_fit(x, K=3):
    """Fit the window x (a list); returns a dict with the fit."""
    n = len(x)
    c = 0.0
    if not _ratio_pass(x, 0.0):
        sabs = 0.0
        for v in x:
            sabs += abs(v)
        unit = max(sabs / n, 1e-3)
        for j in range(1, 21):
            c = j * unit
            if _ratio_pass(x, c):
                break
    # Least squares in centred form, means as offsets from the first term.
    m = float(n - 1)
    ago = x[0] + c
    y0 = x[1] + c
    z0 = zs = ys = 0.0
    for k in range(1, n):
        prev = ago
        y = x[k] + c
        ago += y
        z = (ago + prev) / 2
        if k == 1:
            z0 = z
        zs += z - z0
        ys += y - y0
    zb = z0 + zs / m
    yb = y0 + ys / m
    sxx = sxy = 0.0
    ago = x[0] + c
    for k in range(1, n):
        prev = ago
        y = x[k] + c
        ago += y
        z = (ago + prev) / 2
        sxx += (z - zb) * (z - zb)
        sxy += (z - zb) * (y - yb)
    a = 0.0 if (sxy == 0 or sxx == 0) else -sxy / sxx
    b = yb + a * zb
    y1 = x[0] + c
    phi = 1.0 if a == 0 else math.expm1(a) / a
    coef = (b - a * y1) * phi
    # Markov correction of the relative residuals k = 2..n.
    r = []
    for k in range(2, n + 1):
        y = x[k - 1] + c
        r.append(0.0 if y == 0 else (y - coef * math.exp(-a * (k - 1))) / y)
    rmin = rmax = r[0]
    for v in r[1:]:
        rmin = min(rmin, v)
        rmax = max(rmax, v)
    width = (rmax - rmin) / K
    mid = [rmin + (j + 0.5) * width for j in range(K)]

    def state(v):
        if width == 0:
            return 0
        for j in range(K - 1):
            if v < rmin + (j + 1) * width:
                return j
        return K - 1
    count = [[0] * K for _ in range(K)]
    prev = 0
    for i, v in enumerate(r):
        s = state(v)
        if i > 0:
            count[prev][s] += 1
        prev = s
    trans = []
    for i in range(K):
        tot = sum(count[i])
        if tot == 0:
            trans.append([1.0 if j == i else 0.0 for j in range(K)])
        else:
            trans.append([count[i][j] / tot for j in range(K)])
    return {"n": n, "c": c, "a": a, "coef": coef, "mid": mid,
            "trans": trans, "last_state": prev, "K": K}


def _clamp01(v):
    if not (v > 0):
        return 0.0
    return 1.0 if v > 1 else v


def gmc_forecast(f, H):
    """Corrected (expect) and plain GM(1,1) forecasts, h = 1..H, clamped."""
    K, a, coef, c, n = f["K"], f["a"], f["coef"], f["c"], f["n"]
    mid, trans = f["mid"], f["trans"]
    p = [1.0 if j == f["last_state"] else 0.0 for j in range(K)]
    out, plain = [], []
    for h in range(1, H + 1):
        yhat = coef * math.exp(-a * float(n + h - 1))
        q = []
        for j in range(K):
            s = 0.0
            for i in range(K):
                s += p[i] * trans[i][j]
            q.append(s)
        p = q
        v = 0.0
        for j in range(K):
            v += p[j] * (yhat / (1 - mid[j]) if mid[j] < 1 else yhat)
        out.append(_clamp01(v - c))
        plain.append(_clamp01(yhat - c))
    return out, plain


def check(dlplan, series, W, H, every, tmpdir):
    import os
    import subprocess
    wins = []
    for _, v in series:
        for o in range(W, len(v), every):
            wins.append(v[o - W:o])
    # Synthetic windows that need a shift: zeros, flat, steps.
    wins.append([0.0] * W)
    wins.append([0.5] * W)
    wins.append([0.0] * (W // 2) + [0.3] * (W - W // 2))
    wins.append([0.01 * (k % 3) for k in range(W)])
    path = os.path.join(tmpdir, "windows.csv")
    with open(path, "w") as f:
        f.write("node,t,util\n")
        for i, w in enumerate(wins):
            for t, u in enumerate(w):
                f.write("w%d,%d,%r\n" % (i, t, u))
    out = subprocess.run([dlplan, "predict", "-H", path, "--horizon",
                          str(H), "--window", str(W), "--format", "csv"],
                         check=True, capture_output=True, text=True).stdout
    ref = {}
    for line in out.splitlines()[1:]:
        p = line.split(",")
        ref[(int(p[0][1:]), int(p[1]))] = float(p[2])
    worst = 0.0
    exact = 0
    for i, w in enumerate(wins):
        fc, _ = gmc_forecast(gmc_fit(w), H)
        for h in range(1, H + 1):
            d = abs(fc[h - 1] - ref[(i, h)])
            worst = max(worst, d)
            exact += d == 0
    return len(wins), len(wins) * H, exact, worst



WMED_DECAY = 0.8
WMED_FLOOR = 1e-3
MEMBERS = ["gmc", "last", "mean", "median", "wmed"]
AUTO = ["ensemble", "gmc", "gm", "last", "mean", "median"]
REPORT = ["gmc", "gm", "last", "mean", "median", "wmed", "ensemble", "auto"]


def median(x):
    s = sorted(x)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def wmed(x):
    """Weighted median of the window: weight d^(n-k) / max(x_k, floor),
    d^(n-k) by repeated multiplication from the newest point (weight 1);
    values ascending, equal values by age (oldest first); the first value
    whose running weight reaches half the total (summed oldest first)."""
    n = len(x)
    g = [0.0] * n
    u = 1.0
    for k in range(n - 1, -1, -1):
        g[k] = u / max(x[k], WMED_FLOOR)
        u *= WMED_DECAY
    tot = 0.0
    for v in g:
        tot += v
    acc = 0.0
    for k in sorted(range(n), key=lambda k: (x[k], k)):
        acc += g[k]
        if acc >= tot / 2:
            return x[k]
    return x[-1]


def members(series, W, H, every):
    """rows[i] = list of (origin, {method: [f_1..f_H]}, actuals)."""
    rows = []
    for _, v in series:
        r = []
        for o in range(W, len(v), every):
            w = v[o - W:o]
            gmc, gm = gmc_forecast(gmc_fit(w), H)
            m = {"gmc": gmc, "gm": gm}
            for name, f in (("last", w[-1]), ("mean", sum(w) / W),
                            ("median", median(w)), ("wmed", wmed(w))):
                m[name] = [f] * H
            r.append((o, m, v[o:o + H]))
        rows.append(r)
    return rows


def solve(A, b):
    """Gaussian elimination with partial pivoting."""
    n = len(b)
    M = [A[i][:] + [b[i]] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(M[r][c]))
        M[c], M[p] = M[p], M[c]
        for r in range(n):
            if r != c:
                f = M[r][c] / M[c][c]
                for k in range(c, n + 1):
                    M[r][k] -= f * M[c][k]
    return [M[i][n] / M[i][i] for i in range(n)]


def fit_weights(rows, part, h, iters):
    """Minimise sum |1 - sum_j w_j f_j / y| over the points of part."""
    G = [[] for _ in MEMBERS]
    for i in part:
        for _, m, a in rows[i]:
            if len(a) >= h and a[h - 1] != 0:
                for j, name in enumerate(MEMBERS):
                    G[j].append(m[name][h - 1] / a[h - 1])
    p, N = len(G), len(G[0])
    u = [1.0] * N
    w = None
    for _ in range(iters):
        ug = [list(map(mul, u, g)) for g in G]
        A = [[sum(map(mul, ug[j], G[k])) for k in range(p)]
             for j in range(p)]
        w = solve(A, [sum(x) for x in ug])
        pred = [0.0] * N
        for j in range(p):
            pred = [q + w[j] * x for q, x in zip(pred, G[j])]
        u = [1 / max(abs(1 - q), 1e-4) for q in pred]
    return w


def add_ensemble(rows, weights, H):
    for r in rows:
        for _, m, _ in r:
            m["ensemble"] = [_clamp01(sum(wj * m[name][h]
                                          for wj, name in
                                          zip(weights[h], MEMBERS)))
                             for h in range(H)]


def add_auto(rows, H):
    """Per series and h: the AUTO method with the lowest APE summed over
    the earlier origins o' whose target o' + h <= o is known at the
    origin o (no look-ahead); ties and no history: the first in AUTO."""
    for r in rows:
        for _, m, _ in r:
            m["auto"] = [0.0] * H
            m["auto_pick"] = [None] * H
        for h in range(1, H + 1):
            tot = [0.0] * len(AUTO)
            k = 0
            for o, m, a in r:
                while r[k][0] + h <= o:
                    _, m2, a2 = r[k]
                    y = a2[h - 1]
                    if y != 0:
                        tot = [t + abs(m2[c][h - 1] - y) / abs(y)
                               for t, c in zip(tot, AUTO)]
                    k += 1
                pick = min(range(len(AUTO)), key=lambda c: (tot[c], c))
                m["auto"][h - 1] = m[AUTO[pick]][h - 1]
                m["auto_pick"][h - 1] = AUTO[pick]


def score(rows, part, H):
    """{(method, h): (mape, mae)} pooled over the series in part."""
    out = {}
    for name in REPORT:
        for h in range(1, H + 1):
            ae = ape = 0.0
            n = nape = 0
            for i in part:
                for _, m, a in rows[i]:
                    if len(a) >= h:
                        y = a[h - 1]
                        e = abs(m[name][h - 1] - y)
                        ae += e
                        n += 1
                        if y != 0:
                            ape += e / abs(y)
                            nape += 1
            out[(name, h)] = (ape / nape if nape else float("nan"),
                              ae / n if n else float("nan"))
    return out


def report(title, sc, H):
    print("\n### %s\n" % title)
    print("| method | " + " | ".join("MAPE h=%d" % h for h in range(1, H + 1))
          + " | " + " | ".join("MAE h=%d" % h for h in range(1, H + 1))
          + " |")
    print("|---" * (2 * H + 1) + "|")
    for name in REPORT:
        print("| %s | " % name
              + " | ".join("%.3f %%" % (100 * sc[(name, h)][0])
                           for h in range(1, H + 1)) + " | "
              + " | ".join("%.5f" % sc[(name, h)][1]
                           for h in range(1, H + 1)) + " |")
    for name in ("ensemble", "auto", "wmed"):
        ratios = []
        for h in range(1, H + 1):
            best = min(sc[(b, h)][0] for b in ("last", "mean", "median"))
            ratios.append("%.3f" % (sc[(name, h)][0] / best))
        print("| %s / best naive | " % name + " | ".join(ratios)
              + " |" + " |" * H)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--data", default=os.path.join(
        here, "..", "..", "..", "shared", "data", "google-vm-cpu.csv"))
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--horizon", type=int, default=6)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--check", metavar="DLPLAN")
    o = ap.parse_args()
    if not os.path.isfile(o.data):
        sys.exit("fit-ensemble: no %s: the Google VM CPU traces are not in "
                 "the repository but beside it, in ../shared/data "
                 "(or give --data FILE)" % o.data)
    series = read_series(o.data)
    W, H = o.window, o.horizon
    if o.check:
        with tempfile.TemporaryDirectory() as tmp:
            nw, npts, exact, worst = check(o.check, series, W, H, 5, tmp)
        print("check: %d windows, %d forecasts, %d bit-identical, largest "
              "difference %.3g" % (nw, npts, exact, worst))
    rows = members(series, W, H, o.every)
    fit = range(0, len(series), 2)
    held = range(1, len(series), 2)
    weights = [fit_weights(rows, fit, h, o.iters) for h in range(1, H + 1)]
    print("## weights (fitted on the %d even-index series)\n" % len(fit))
    print("| h | " + " | ".join(MEMBERS) + " | sum |")
    print("|---" * (len(MEMBERS) + 2) + "|")
    for h in range(1, H + 1):
        print("| %d | " % h + " | ".join("%.17g" % x for x in weights[h - 1])
              + " | %.6f |" % sum(weights[h - 1]))
    add_ensemble(rows, weights, H)
    add_auto(rows, H)
    for title, part in (("fit half (even index, %d series)" % len(fit), fit),
                        ("held-out half (odd index, %d series)" % len(held),
                         held),
                        ("all %d series" % len(series),
                         range(len(series)))):
        report(title, score(rows, part, H), H)
    picks = {}
    for r in rows:
        for _, m, _ in r:
            for h in (1, H):
                picks[(h, m["auto_pick"][h - 1])] = picks.get(
                    (h, m["auto_pick"][h - 1]), 0) + 1
    print("\nauto picks (origins, all series): " + "; ".join(
        "h=%d %s %d" % (h, c, picks.get((h, c), 0))
        for h in (1, H) for c in AUTO))


if __name__ == "__main__":
    main()
