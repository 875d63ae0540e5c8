# Pool "predict --backtest --format csv" rows per half (series index in
# file order: even = fit, odd = held out) and over all series.
BEGIN { FS = ","; split("gmc gm last mean median wmed ensemble auto", M, " ") }
NR > 1 && $1 != "*" {
	if (!($1 in idx)) idx[$1] = n++
	for (p = 0; p < 3; p++) {
		if (p < 2 && idx[$1] % 2 != p) continue
		k = p SUBSEP $2 SUBSEP $3
		ape[k] += $6 * $5; np[k] += $5; ae[k] += $7 * $4; na[k] += $4
	}
}
END {
	split("fit (even index)|held-out (odd index)|all series", T, "|")
	for (p = 0; p < 3; p++) {
		printf "%s\n", T[p + 1]
		for (h = 1; h <= H; h++) {
			best = 1e9
			for (i = 3; i <= 5; i++) { k = p SUBSEP h SUBSEP M[i]; if (ape[k] / np[k] < best) best = ape[k] / np[k] }
			line = sprintf("  h=%d MAPE %%:", h)
			for (i = 1; i <= 8; i++) { k = p SUBSEP h SUBSEP M[i]; line = line sprintf(" %s %.3f", M[i], 100 * ape[k] / np[k]) }
			printf "%s\n    ensemble/best naive %.3f, auto/best naive %.3f\n", line,
			    ape[p SUBSEP h SUBSEP "ensemble"] / np[p SUBSEP h SUBSEP "ensemble"] / best,
			    ape[p SUBSEP h SUBSEP "auto"] / np[p SUBSEP h SUBSEP "auto"] / best
		}
	}
}
