#!/usr/bin/env python3
"""tests/bench/report.py - turn the raw measurements of run.sh into the
"make bench" table (stdout), bench.csv, balanced.csv and plan-time.svg.

    report.py --out DIR --raw raw.tsv --limit S --balanced FILE
              --predict FILE --predict-rss KB --route FILE --route-rss KB
              [--sched FILE]

raw.tsv has one line per planning run: kind, GPUs, layers, sites, GPU
types, global batch, run, exit status, wall seconds, peak RSS (KB) and
the plan JSON of the last successful run.  The --sched file holds the
lines of sched-scale.sh ("dlplan schedule" on many jobs).  Growth exponents are the
least-squares slope of log(median time) on log(GPUs) or log(layers) over
the finished, feasible points.  Standard library only.
"""
import argparse
import csv
import json
import math
import os
import re
import statistics


def load_raw(path):
    runs = {}
    order = []
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 11:
                continue
            key = (p[0], int(p[1]), int(p[2]))
            if key not in runs:
                order.append(key)
                runs[key] = {"sites": int(p[3]), "types": int(p[4]),
                             "batch": int(p[5]), "runs": [],
                             "json": p[10],
                             "cluster": p[11] if len(p) > 11 else None}
            runs[key]["runs"].append((int(p[7]), float(p[8]), int(p[9])))
    return order, runs


def own_bound(d, cluster):
    """T_lb of the GPUs plan d uses: T_lb times the speed of every GPU of
    the cluster over the speed of the plan's (tflops x mfu x (1 - load),
    the load as plan.json's forecast has it, clamped to [0, 0.95])."""
    path = os.path.join(cluster, "nodes.csv")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    fc = d.get("forecast", {})
    mfu = d.get("options", {}).get("mfu", 0.4)

    def speed(r):
        u = min(max(fc.get(r["node"], 0.0), 0.0), 0.95)
        return float(r["tflops"]) * float(r.get("mfu") or mfu) * (1 - u)

    sp = {r["node"]: speed(r) for r in rows}
    total = sum(int(r["gpus"]) * sp[r["node"]] for r in rows)
    own = sum(len(st["gpus"]) * sp[st["node"]]
              for g in d["groups"] for st in g["stages"])
    if own <= 0:
        return None
    return d["estimate"]["lower_bound_s"] * total / own


def summarise(key, r, limit):
    ok = [w for st, w, _ in r["runs"] if st == 0]
    last = r["runs"][-1][0]
    s = {"kind": key[0], "gpus": key[1], "layers": key[2],
         "sites": r["sites"], "types": r["types"], "batch": r["batch"],
         "runs": len(ok), "status": "ok", "median_s": None,
         "min_s": None, "max_s": None,
         "rss_mb": max(x for _, _, x in r["runs"]) / 1024.0}
    if last == 124:
        s["status"] = "not finished in %g s" % limit
    elif last == 3:
        s["status"] = "infeasible (exit 3)"
    elif last != 0:
        s["status"] = "failed (exit %d)" % last
    if ok:
        s["median_s"] = statistics.median(ok)
        s["min_s"], s["max_s"] = min(ok), max(ok)
    if s["status"] == "ok" and os.path.exists(r["json"]):
        with open(r["json"]) as f:
            d = json.load(f)
        e = d["estimate"]
        b = e.get("baselines", {})
        s["gpus_used"] = len(d.get("ranks", []))
        s["groups"] = len(d.get("groups", []))
        s["iteration_s"] = e["iteration_s"]
        s["lower_bound_s"] = e["lower_bound_s"]
        s["efficiency"] = e["lower_bound_s"] / e["iteration_s"]
        # The search's bound (fill, transfers, sync; at least T_lb).
        s["bound_s"] = e.get("bound_s", e["lower_bound_s"])
        s["gap_bound"] = 1 - s["bound_s"] / e["iteration_s"]
        if r.get("cluster"):
            s["own_bound_s"] = own_bound(d, r["cluster"])
            if s["own_bound_s"]:
                s["gap_own"] = 1 - s["own_bound_s"] / e["iteration_s"]
        s["even_s"] = b.get("even_dp_s")
        s["proportional_s"] = b.get("proportional_dp_s")
        s["even_fits"] = b.get("even_dp_fits_memory")
        s["proportional_fits"] = b.get("proportional_dp_fits_memory")
        if s["even_s"]:
            s["speedup_even"] = s["even_s"] / e["iteration_s"]
        if s["proportional_s"]:
            s["speedup_prop"] = s["proportional_s"] / e["iteration_s"]
        s["solver_s"] = d.get("solver", {}).get("time_s")
    return s


def slope(points):
    """Least-squares slope of log y on log x."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def fmt_exp(v, n):
    return "%.2f (%d points)" % (v, n) if v is not None else "- (too few points)"


def parse_predict(path):
    r = {}
    if not os.path.exists(path):
        return r
    txt = open(path).read()
    # The method names of predict --backtest (schema dlplan.backtest/2).
    for m in re.finditer(r"^\s+(gmc|gm|last|mean|median|wmed|ensemble|auto)"
                         r"\s+([\d.]+)%\s+([\d.]+)%", txt, re.M):
        r[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    m = re.search(r"time: ([\d.]+) s \((\d+) series x (\d+) points", txt)
    if m:
        r["backtest_s"] = float(m.group(1))
        r["backtest_series"] = int(m.group(2))
        r["backtest_points"] = int(m.group(3))
    m = re.search(r"forecast: (\d+) series x (\d+) points .*best of 3 "
                  r"([\d.]+) s", txt)
    if m:
        r["series"], r["points"] = int(m.group(1)), int(m.group(2))
        r["forecast_s"] = float(m.group(3))
    r["skipped"] = "backtest: skipped" in txt
    return r


def parse_route(path):
    r = {}
    if not os.path.exists(path):
        return r
    for line in open(path):
        m = re.match(r"\s*(\d+) flows: best of 3 ([\d.]+) s", line)
        if m:
            r[int(m.group(1))] = float(m.group(2))
        m = re.match(r"network: (.*)", line)
        if m:
            r["network"] = m.group(1).strip()
    return r


def parse_sched(path):
    """The runs of sched-scale.sh: (jobs, mode, wall, user, system, KB,
    plan files or None, MB or None) per line."""
    r = []
    if path is None or not os.path.exists(path):
        return r
    for line in open(path):
        m = re.match(r"schedule (\d+) jobs (no -o|-o): wall ([\d.]+) s, "
                     r"user ([\d.]+) s, system ([\d.]+) s, max RSS (\d+) KB"
                     r"(?:, (\d+) plan files, (\d+) MB written)?", line)
        if m:
            g = m.groups()
            r.append((int(g[0]), g[1], float(g[2]), float(g[3]),
                      float(g[4]), int(g[5]),
                      int(g[6]) if g[6] else None,
                      int(g[7]) if g[7] else None))
    return r


def parse_balanced(path):
    rows, tap = [], []
    if not os.path.exists(path):
        return rows, tap
    for line in open(path):
        if line.startswith("ok ") or line.startswith("not ok"):
            tap.append(line.strip())
            continue
        p = line[1:].split() if line.startswith("#") else []
        if len(p) == 7 and p[1].isdigit():
            rows.append({"model": p[0], "layers": int(p[1]),
                         "k": int(p[2]), "balanced": float(p[3]),
                         "dlplan": float(p[4]), "optimum": float(p[5]),
                         "ratio": float(p[6])})
    return rows, tap


def svg_chart(path, series, limit):
    """Planning time vs GPUs, log-log, one polyline per layer count."""
    W, H, L, R, T, B = 720, 460, 70, 170, 30, 50
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts] + [2, 10]
    if not xs:
        return
    x0, x1 = math.log10(min(xs) / 1.5), math.log10(max(xs) * 1.5)
    y0 = math.floor(math.log10(min(ys)))
    y1 = math.ceil(math.log10(max(ys)))
    if y1 <= y0:
        y1 = y0 + 1

    def px(x):
        return L + (math.log10(x) - x0) / (x1 - x0) * (W - L - R)

    def py(y):
        return H - B - (math.log10(y) - y0) / (y1 - y0) * (H - T - B)

    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">'
         % (W, H, W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="18" font-size="14">dlplan plan: wall time vs '
         'GPUs (log-log, median of runs)</text>' % L]
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                 % (L, y, W - R, y))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%g s</text>'
                 % (L - 6, y + 4, 10 ** e))
    for x in sorted(set(xs)):
        o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                 % (px(x), T, px(x), H - B))
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>'
                 % (px(x), H - B + 16, x))
    o.append('<text x="%d" y="%d" text-anchor="middle">GPUs</text>'
             % ((L + W - R) // 2, H - 12))
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
             'stroke="black"/>' % (L, T, W - L - R, H - T - B))
    for t, label in ((2, "target 4,096 GPUs: 2 s"),
                     (10, "target 16,384 GPUs: 10 s")):
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#c00" '
                 'stroke-dasharray="4 4"/>' % (L, py(t), W - R, py(t)))
        o.append('<text x="%d" y="%.1f" fill="#c00">%s</text>'
                 % (W - R + 6, py(t) + 4, label))
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"]
    for i, (name, pts) in enumerate(sorted(series.items())):
        c = colours[i % len(colours)]
        pts = sorted(pts)
        o.append('<polyline fill="none" stroke="%s" stroke-width="2" '
                 'points="%s"/>' % (c, " ".join("%.1f,%.1f" % (px(x), py(y))
                                                for x, y in pts)))
        for x, y in pts:
            o.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s">'
                     '<title>%d GPUs: %.3f s</title></circle>'
                     % (px(x), py(y), c, x, y))
        o.append('<text x="%d" y="%d" fill="%s">%s</text>'
                 % (W - R + 6, T + 20 + 18 * i, c, name))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main():
    ap = argparse.ArgumentParser()
    for a in ("--out", "--raw", "--balanced", "--predict", "--route"):
        ap.add_argument(a, required=True)
    ap.add_argument("--limit", type=float, required=True)
    ap.add_argument("--predict-rss", type=int, default=0)
    ap.add_argument("--route-rss", type=int, default=0)
    ap.add_argument("--sched", default=None)
    a = ap.parse_args()

    order, runs = load_raw(a.raw)
    sums = [summarise(k, runs[k], a.limit) for k in order]
    rows = []       # (benchmark, config, runs, time, rss, result)

    def ms(v):
        return "%.3f" % v if v is not None else "-"

    for s in sums:
        if s["kind"] in ("gpus", "gpus2"):
            name = "plan %d GPUs x %d layers%s" % (
                s["gpus"], s["layers"],
                " (gen 2)" if s["kind"] == "gpus2" else "")
            conf = "%d site%s, %d types, batch %d" % (
                s["sites"], "" if s["sites"] == 1 else "s", s["types"],
                s["batch"])
        elif s["kind"] == "small":
            name = "plan %d layers, two-dc (48 GPUs)" % s["layers"]
            conf = "gpt h256, batch %d" % s["batch"]
        else:
            name = "plan %d layers, 64 GPUs" % s["layers"]
            conf = "llama h2048, batch %d" % s["batch"]
        if s["status"] == "ok" and "efficiency" in s:
            res = ("eff %.1f%%  gap %.1f%%%s  x%.2f even%s  x%.2f prop%s  "
                   "%d groups") % (
                100 * s["efficiency"], 100 * s["gap_bound"],
                " (own GPUs %.1f%%)" % (100 * s["gap_own"])
                if "gap_own" in s and s["gpus_used"] < s["gpus"] else "",
                s.get("speedup_even", 0),
                "" if s.get("even_fits") else "*",
                s.get("speedup_prop", 0),
                "" if s.get("proportional_fits") else "*", s["groups"])
        else:
            res = s["status"]
        rows.append((name, conf, str(s["runs"]), ms(s["median_s"]),
                     "%.0f" % s["rss_mb"], res))

    # Growth exponents.
    exps = []
    for lay in sorted({s["layers"] for s in sums if s["kind"] == "gpus"}):
        pts = [(s["gpus"], s["median_s"]) for s in sums
               if s["kind"] == "gpus" and s["layers"] == lay
               and s["status"] == "ok"]
        big = [p for p in pts if p[0] >= 512]
        exps.append(("time ~ GPUs^k, %d layers" % lay,
                     "all: %s; >= 512 GPUs: %s" % (
                         fmt_exp(slope(pts), len(pts)),
                         fmt_exp(slope(big), len(big)))))
    pts = [(s["layers"], s["median_s"]) for s in sums
           if s["kind"] == "layers" and s["status"] == "ok"]
    big = [p for p in pts if p[0] >= 80]
    exps.append(("time ~ layers^k, 64 GPUs",
                 "all: %s; >= 80 layers: %s" % (
                     fmt_exp(slope(pts), len(pts)),
                     fmt_exp(slope(big), len(big)))))

    # partition_balanced.
    bal, tap = parse_balanced(a.balanced)
    models = []
    for r in bal:
        if r["model"] not in models:
            models.append(r["model"])
    for mname in models:
        rs = [r for r in bal if r["model"] == mname]
        worst = max(r["dlplan"] / r["balanced"] for r in rs)
        lighter = sum(1 for r in rs if r["dlplan"] < r["balanced"] *
                      (1 - 1e-12))
        res = "dlplan/balanced bottleneck <= %.6f: %s, %d lighter" % (
            worst, "never heavier" if worst <= 1 + 1e-12 else "HEAVIER",
            lighter)
        rows.append(("partition_balanced " + mname,
                     "%d layers, k=%d..%d (%d values)" % (
                         rs[0]["layers"], rs[0]["k"], rs[-1]["k"], len(rs)),
                     "1", "-", "-", res))
    bad = [t for t in tap if t.startswith("not ok")]
    if bad or not bal:
        rows.append(("partition_balanced", "test_balanced --table", "1",
                     "-", "-", "; ".join(bad) or "no table"))

    # Forecast and routing.
    p = parse_predict(a.predict)
    if "forecast_s" in p:
        rows.append(("forecast (predict)", "%d synthetic series x %d pts"
                     % (p["series"], p["points"]), "3 (best)",
                     ms(p["forecast_s"]), "%.0f" % (a.predict_rss / 1024.0),
                     "%.0f series/s" % (p["series"] / p["forecast_s"])))
    if "gmc" in p:
        rows.append(("backtest MAPE, Google VM", "%d series x %d pts, h=1..6"
                     % (p["backtest_series"], p["backtest_points"]), "1",
                     ms(p.get("backtest_s")), "-",
                     "GMC %.2f%% (h=1) %.2f%% (h=6); h=1 GM(1,1) %.2f%%, "
                     "last %.2f%%, mean %.2f%%, auto %.2f%%"
                     % (p["gmc"] + tuple(p.get(k, (0, 0))[0] for k in
                                         ("gm", "last", "mean", "auto")))))
    elif p.get("skipped"):
        rows.append(("backtest MAPE, Google VM", "-", "0", "-", "-",
                     "skipped: no google-vm-cpu.csv"))
    r = parse_route(a.route)
    if 1000 in r:
        net = re.sub(r"directed links", "links",
                     r.get("network", "").split(", diameter")[0])
        rows.append(("route 1,000 flows", net,
                     "3 (best)", ms(r[1000]),
                     "%.0f" % (a.route_rss / 1024.0),
                     "%.0f flows/s" % (1000 / r[1000])))

    sched = parse_sched(a.sched)
    for n, mode, wall, user, sy, kb, files, mb in sched:
        res = "CPU %.1f s (user %.1f + system %.1f)" % (user + sy, user, sy)
        if files is not None:
            res += ", %d plan files, %d MB written" % (files, mb)
        rows.append(("schedule %s jobs, %s" % (format(n, ","), mode),
                     "philly-64, gen-jobs.py load 0.9", "1", ms(wall),
                     "%.0f" % (kb / 1024.0), res))
    if a.sched is not None and not sched:
        rows.append(("schedule, many jobs", "sched-scale.sh", "0", "-", "-",
                     "no result (see %s)" % a.sched))

    head = ("benchmark", "config", "runs", "median_s", "rss_MB", "result")
    wid = [max(len(str(x[i])) for x in rows + [head]) for i in range(6)]
    line = "  ".join("%-*s" % (wid[i], head[i]) for i in range(6))
    print(line)
    print("-" * len(line))
    for x in rows:
        print("  ".join(("%*s" if i in (2, 3, 4) else "%-*s") % (wid[i], x[i])
                        for i in range(6)).rstrip())
    print("-" * len(line))
    for name, v in exps:
        print("%-*s  %s" % (wid[0], name, v))
    print("gap: 1 - bound_s / T; own GPUs: 1 - T_lb of the GPUs the plan "
          "uses / T, where it leaves some out.")
    print("* the baseline does not fit in memory (priced all the same). "
          "Times: wall clock of the whole run, plan with its default "
          "--jobs (%d online CPUs; one thread below 256 GPUs)."
          % (os.cpu_count() or 1))

    # CSV and SVG.
    cols = ["kind", "gpus", "layers", "sites", "types", "batch", "runs",
            "status", "median_s", "min_s", "max_s", "rss_mb", "gpus_used",
            "groups", "iteration_s", "lower_bound_s", "efficiency",
            "bound_s", "gap_bound", "own_bound_s", "gap_own",
            "even_s", "proportional_s", "speedup_even", "speedup_prop",
            "even_fits", "proportional_fits", "solver_s"]
    with open(os.path.join(a.out, "bench.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for s in sums:
            w.writerow(["" if s.get(c) is None else s.get(c) for c in cols])
        for name, v in exps:
            w.writerow(["exponent", "", "", "", "", "", "", name + ": " + v])
        if "forecast_s" in p:
            w.writerow(["forecast", "", "", "", "", "", 3, "ok",
                        p["forecast_s"], "", "", a.predict_rss / 1024.0])
        if 1000 in r:
            w.writerow(["route1000", "", "", "", "", "", 3, "ok", r[1000],
                        "", "", a.route_rss / 1024.0])
        for n, mode, wall, user, sy, kb, files, mb in sched:
            w.writerow(["schedule" + ("-o" if mode == "-o" else ""), "", "",
                        "", "", n, 1, "ok", wall, "", "", kb / 1024.0])
    with open(os.path.join(a.out, "balanced.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "layers", "k", "balanced_gflop",
                    "dlplan_gflop", "optimum_gflop", "balanced_over_dlplan"])
        for b in bal:
            w.writerow([b["model"], b["layers"], b["k"], b["balanced"],
                        b["dlplan"], b["optimum"], b["ratio"]])
    series = {}
    for s in sums:
        if s["kind"] == "gpus" and s["status"] == "ok":
            series.setdefault("%d layers" % s["layers"], []).append(
                (s["gpus"], s["median_s"]))
    svg_chart(os.path.join(a.out, "plan-time.svg"), series, a.limit)
    print("wrote %s/bench.csv, balanced.csv, plan-time.svg" % a.out)


if __name__ == "__main__":
    main()
