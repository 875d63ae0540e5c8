# dlplan predict: GMC forecasts of load.csv and traffic.csv histories in
# every format, the backtest, and every usage and data error with its exit
# status and message.

# Relative paths: tests/run runs this from the repository root, and the
# path appears in the table and json output.
L=tests/cli/data/predict-load.csv
T=tests/cli/data/predict-traffic.csv

# --- forecasts --------------------------------------------------------
expect_run "load csv" 0 predict-load.csv - -- \
    dlplan predict -H "$L" --horizon 3 --format csv
expect_run "load table" 0 predict-load.txt - -- \
    dlplan predict -H "$L" --horizon 3
expect_run "load json" 0 predict-load.json - -- \
    dlplan predict -H "$L" --horizon 2 --format json
expect_run "argmax, 2 states, window 8" 0 predict-load-argmax.csv - -- \
    dlplan predict -H "$L" --horizon 2 --window 8 --states 2 \
    --correction argmax --format csv
expect_run "traffic csv" 0 predict-traffic.csv - -- \
    dlplan predict -H "$T" --horizon 2 --format csv
expect_run "mean link csv" 0 predict-mean-link.csv - -- \
    dlplan predict -H "$T" --mean-link --horizon 2 --format csv
expect_run "long horizon table" 0 predict-long.txt - -- \
    dlplan predict -H "$T" --horizon 9

# json: valid, one forecast per step, every number finite.
dlplan predict -H "$L" --horizon 4 --format json >"$TMP/p.json" 2>&1
if command -v jq >/dev/null 2>&1; then
	check "json parses, 4 steps per series" jq -e \
	    '.schema == "dlplan.predict/1" and (.series | length) == 3 and
	    all(.series[]; (.forecast | length) == 4)' "$TMP/p.json"
elif command -v python3 >/dev/null 2>&1; then
	check "json parses" python3 -m json.tool "$TMP/p.json"
else
	skip "json parses" "neither jq nor python3 installed"
fi
check "json has no NaN or Inf" sh -c '! grep -Eiq "nan|inf" "$1"' sh \
    "$TMP/p.json"

# A constant series is forecast exactly: a = 0, b = the constant, no shift,
# zero residuals (mre 0, C 0, P 1).
printf 'node,t,util\nc,0,0.25\nc,1,0.25\nc,2,0.25\nc,3,0.25\nc,4,0.25\n' \
    >"$TMP/const.csv"
dlplan predict -H "$TMP/const.csv" --horizon 2 --format csv >"$TMP/const.out"
printf '%s\n' 'node,h,forecast,a,b,shift,ratio_ok,mre,C,P,grade' \
    'c,1,0.25,0,0.25,0,1,0,0,1,good' 'c,2,0.25,0,0.25,0,1,0,0,1,good' \
    >"$TMP/const.want"
check "constant series forecast exactly" cmp "$TMP/const.out" "$TMP/const.want"

# The published series 223.3 ... 251.1, scaled by 1/1000 into [0, 1]:
# a is scale-free (-0.025282899224766...), b scales (0.2175956625...).
printf 'node,t,util\n' >"$TMP/pub.csv"
t=0
for v in 0.2233 0.2273 0.2305 0.2381 0.2429 0.2511; do
	printf 'p,%d,%s\n' "$t" "$v" >>"$TMP/pub.csv"
	t=$((t + 1))
done
dlplan predict -H "$TMP/pub.csv" --format csv >"$TMP/pub.out"
check "published example: a and b through the CLI" awk -F, 'NR == 2 {
	da = $4 + 0.025282899224766; db = $5 - 0.2175956625000323
	exit !(da < 1e-12 && da > -1e-12 && db < 1e-12 && db > -1e-12 &&
	    $6 == 0 && $7 == 1) }' "$TMP/pub.out"

# Rows out of order and series interleaved give the same forecast as the
# sorted file.
{ echo 'node,t,util'; grep -v '^#' "$L" | sed 1d | sort -t, -k1,1 -k2,2n; } \
    >"$TMP/sorted.csv"
dlplan predict -H "$TMP/sorted.csv" --horizon 3 --format csv >"$TMP/s.out"
check "input order does not matter" cmp "$TMP/s.out" "$GOLDEN/predict-load.csv"

# --- backtest ---------------------------------------------------------
expect_run "backtest csv" 0 predict-backtest.csv - -- \
    dlplan predict -H "$L" --backtest --window 8 --horizon 2 --format csv
expect_run "backtest table" 0 predict-backtest.txt - -- \
    dlplan predict -H "$L" --backtest --window 8 --horizon 2
expect_run "backtest json" 0 predict-backtest.json - -- \
    dlplan predict -H "$L" --backtest --window 8 --horizon 2 --format json
# gpu3 has 12 points: origins o = 8..11 for h = 1 (3 for h = 2).  By hand
# for h = 1, actuals x(9..12) = .2 .1 0 .05 (the 0 is left out of MAPE):
#   last: x(8..11) = 0 .2 .1 0, errors .2 .1 .1 .05: MAE .1125, MAPE 1;
#   mean of x(o-7..o): .025 .05 .0625 .05625, errors .175 .05 .0625 .00625:
#   MAE .29375/4 = .0734375, MAPE (.875 + .5 + .125)/3 = .5.
check "backtest by hand: counts, zero actuals, last and mean" awk -F, '
	function near(x, y) { return x - y < 1e-12 && y - x < 1e-12 }
	$1 == "gpu3" && $2 == 1 && $3 == "last" {
		a = $4 == 4 && $5 == 3 && near($6, 1) && near($7, .1125) }
	$1 == "gpu3" && $2 == 1 && $3 == "mean" {
		b = near($6, .5) && near($7, .0734375) }
	$1 == "gpu3" && $2 == 2 && $3 == "gmc" { c = $4 == 3 && $5 == 2 }
	END { exit !(a && b && c) }' "$GOLDEN/predict-backtest.csv"

# --- methods ----------------------------------------------------------
expect_run "auto csv" 0 predict-auto.csv - -- \
    dlplan predict -H "$L" --horizon 3 --method auto --format csv
expect_run "ensemble table" 0 predict-ensemble.txt - -- \
    dlplan predict -H "$L" --horizon 2 --method ensemble
expect_run "auto json" 0 predict-auto.json - -- \
    dlplan predict -H "$L" --horizon 2 --method auto --format json
# Without --method, and with --method gmc, the output is today's, byte for
# byte (the golden file predates the option).
expect_run "method gmc is the default" 0 predict-load.csv - -- \
    dlplan predict -H "$L" --horizon 3 --method gmc --format csv
# The forecasts of last, mean and median by hand: gpu3's 12 points in t
# order are 0 0 .05 0 .1 .05 0 0 .2 .1 0 .05, so last .05, mean .55/12,
# median (0 + .05)/2 (sorted, the 6th and 7th of 12 are 0 and .05).
for m in last mean median; do
	dlplan predict -H "$L" --method $m --format csv >"$TMP/m-$m.csv" 2>&1
done
check "simple methods by hand (gpu3)" awk -F, '
	function near(x, y) { return x - y < 1e-12 && y - x < 1e-12 }
	FILENAME ~ /m-last/ && $1 == "gpu3" { a = near($3, .05) && $12 == "last" }
	FILENAME ~ /m-mean/ && $1 == "gpu3" { b = near($3, .55 / 12) && $12 == "mean" }
	FILENAME ~ /m-median/ && $1 == "gpu3" { c = near($3, .025) && $12 == "median" }
	END { exit !(a && b && c) }' "$TMP/m-last.csv" "$TMP/m-mean.csv" \
    "$TMP/m-median.csv"
check "auto names a candidate per row" awk -F, '
	NR == 1 { ok = $12 == "method"; next }
	$12 !~ /^(ensemble|gmc|gm|last|mean|median)$/ { ok = 0 }
	END { exit !ok }' "$GOLDEN/predict-auto.csv"
expect_run "backtest every 2nd origin" 0 predict-backtest-every.csv - -- \
    dlplan predict -H "$L" --backtest --window 8 --horizon 2 --every 2 \
    --format csv
check "every 2nd origin: half the points of gpu3 at h=1" awk -F, '
	$1 == "gpu3" && $2 == 1 && $3 == "last" { ok = $4 == 2 }
	END { exit !ok }' "$GOLDEN/predict-backtest-every.csv"
check "backtest: one best row per series and step" awk -F, '
	NR > 1 { n[$1 "," $2] += $8 }
	END { for (k in n) if (n[k] != 1) exit 1 }' \
    "$GOLDEN/predict-backtest.csv"

# --- usage errors (exit 1) --------------------------------------------
expect_err "unknown method" 1 \
    "dlplan: option '--method': 'arima' is not one of gmc|gm|last|mean|median|wmed|ensemble|auto" -- \
    dlplan predict -H "$L" --method arima
expect_err "every without backtest" 1 \
    "dlplan: option '--every' needs --backtest" -- \
    dlplan predict -H "$L" --every 2
expect_err "every 0" 1 \
    "dlplan: option '--every': '0' is out of range [1, 1000000]" -- \
    dlplan predict -H "$L" --backtest --every 0
expect_err "no -H" 1 "dlplan: no history given (expected -H FILE)" -- \
    dlplan predict
expect_err "horizon 0" 1 \
    "dlplan: option '--horizon': '0' is out of range [1, 10000]" -- \
    dlplan predict -H "$L" --horizon 0
expect_err "horizon x" 1 "dlplan: option '--horizon': 'x' is not an integer" -- \
    dlplan predict -H "$L" --horizon x
expect_err "horizon -1" 1 \
    "dlplan: option '--horizon': '-1' is out of range [1, 10000]" -- \
    dlplan predict -H "$L" --horizon -1
expect_err "window 3" 1 \
    "dlplan: option '--window': '3' is out of range [4, 1000000]" -- \
    dlplan predict -H "$L" --window 3
expect_err "states 0" 1 \
    "dlplan: option '--states': '0' is out of range [1, 32]" -- \
    dlplan predict -H "$L" --states 0
expect_err "states 33" 1 \
    "dlplan: option '--states': '33' is out of range [1, 32]" -- \
    dlplan predict -H "$L" --states 33
expect_err "unknown correction" 1 \
    "dlplan: option '--correction': 'median' is not one of expect|argmax" -- \
    dlplan predict -H "$L" --correction median
expect_err "unknown format" 1 \
    "dlplan: option '--format': 'xml' is not one of table|csv|json" -- \
    dlplan predict -H "$L" --format xml
expect_err "stray operand" 1 "dlplan: unexpected argument 'extra'" -- \
    dlplan predict -H "$L" extra
expect_err "missing -H argument" 1 \
    "dlplan: option '-H' requires an argument FILE" -- dlplan predict -H
expect_run "help" 0 - - -- dlplan predict -h

# --- data and I/O errors (exit 2 and 4) -------------------------------
# bad NAME STATUS MESSAGE CONTENT [OPTIONS]: write CONTENT to $TMP/h.csv;
# predict must fail with STATUS and MESSAGE, printing nothing on stdout.
bad() {
	_name=$1 _st=$2 _msg=$3 _data=$4
	shift 4
	printf '%b' "$_data" >"$TMP/h.csv"
	expect_err "$_name" "$_st" "$_msg" -- dlplan predict -H "$TMP/h.csv" "$@"
	[ -s "$TMP/out" ] && t_notok "$_name: no output" "stdout not empty"
	return 0
}
H=$TMP/h.csv
expect_err "missing file" 2 \
    "dlplan: $TMP/none.csv: cannot open file: No such file or directory" -- \
    dlplan predict -H "$TMP/none.csv"
expect_err "directory" 2 "dlplan: $TMP: is a directory (expected a file)" -- \
    dlplan predict -H "$TMP"
bad "series too short" 2 \
    "dlplan: $H:6:1: column 'node': node 'n2' has 3 points (a forecast needs at least 4)" \
    'node,t,util\nn1,0,.1\nn1,1,.2\nn1,2,.3\nn1,3,.4\nn2,0,.1\nn2,1,.2\nn2,2,.3\n'
bad "backtest: series too short" 2 \
    "dlplan: $H:2:1: column 'node': node 'n1' has 1 points (a forecast needs at least 4)" \
    'node,t,util\nn1,5,.1\n' --backtest
bad "duplicate step" 2 \
    "dlplan: $H:5:2: step t=1 of node 'n1' given twice (also on line 3)" \
    'node,t,util\nn1,0,.1\nn1,1,.2\nn1,2,.3\nn1,1,.4\nn1,3,.5\n'
bad "duplicate step, traffic" 2 \
    "dlplan: $H:4:1: step t=0 of link 'a>b' given twice (also on line 2)" \
    't,src,dst,util\n0,a,b,.1\n0,b,a,.2\n0,a,b,.3\n'
bad "util above 1" 2 \
    "dlplan: $H:3:3: column 'util': '1.5' is out of range (expected a number in [0, 1])" \
    'node,t,util\nn1,0,.1\nn1,1,1.5\n'
bad "util negative" 2 \
    "dlplan: $H:2:4: column 'util': '-0.1' is out of range (expected a number in [0, 1])" \
    't,src,dst,util\n0,a,b,-0.1\n'
bad "util not a number" 2 \
    "dlplan: $H:2:3: column 'util': 'nan' is not a number in [0, 1]" \
    'node,t,util\nn1,0,nan\n'
bad "bad step" 2 \
    "dlplan: $H:2:2: column 't': '1.5' is not an integer in [0, 1000000000000000]" \
    'node,t,util\nn1,1.5,.2\n'
bad "bad node id" 2 \
    "dlplan: $H:2:1: column 'node': 'n 1' is not a valid id (expected 1 to 63 of A-Z a-z 0-9 . _ -)" \
    'node,t,util\nn 1,0,.2\n'
bad "neither header" 2 \
    "dlplan: $H:1: header names no 'node' column (load.csv: node,t,util) and no 'src' or 'dst' column (traffic.csv: t,src,dst,util)" \
    'time,value\n0,.5\n'
bad "unknown column" 2 \
    "dlplan: $H:1:4: unknown column 'site' in load.csv header (expected node, t, util; prefix extra columns with x_)" \
    'node,t,util,site\nn1,0,.5,s1\n'
bad "empty file" 2 \
    "dlplan: $H: empty file (expected a load.csv header row)" ''
bad "header only" 2 \
    "dlplan: $H:2: no history rows (expected at least one row after the header)" \
    '# comment\nnode,t,util\n'
bad "mean link of a load.csv" 2 \
    "dlplan: $H: option '--mean-link' needs a traffic.csv history (t,src,dst,util), not a load.csv" \
    'node,t,util\nn1,0,.1\nn1,1,.2\nn1,2,.3\nn1,3,.4\n' --mean-link
bad "mean link too short" 2 \
    "dlplan: $H: series 'mean' has 3 points (a forecast needs at least 4)" \
    't,src,dst,util\n0,a,b,.1\n1,a,b,.2\n1,b,a,.2\n2,b,a,.3\n' --mean-link
printf 'node,t,util\nn1,0,.1\nn1,1,.2\nn1,2,.3\nn1,3,.4\nn1,4,.5\n' >"$TMP/w.csv"
expect_err "backtest: series no longer than the window" 0 \
    "dlplan: 1 of 1 series have no more points than the window (16) and give the backtest nothing to test; try a smaller --window" -- \
    dlplan predict -H "$TMP/w.csv" --backtest --format csv
