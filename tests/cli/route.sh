# dlplan route: routes of a small flow list on the bundled clusters (csv,
# table, json goldens), the regime model (--regimes), and every failure
# path with its message and exit status.

TWO=datasets/clusters/two-dc
FL=$DATA/route-two-dc.csv

# --- good input -------------------------------------------------------
expect_run "route two-dc csv" 0 route-two-dc.csv - -- \
    dlplan route -c $TWO --flows "$FL" --format csv
expect_run "route two-dc table" 0 route-two-dc.txt - -- \
    dlplan route -c $TWO --flows "$FL"
expect_run "route two-dc json" 0 route-two-dc.json - -- \
    dlplan route -c $TWO --flows "$FL" --format json
expect_run "route two-dc 2 regimes, horizon 6" 0 route-two-dc-k2.csv - -- \
    dlplan route -c $TWO --flows "$FL" --format csv --states 2 --horizon 6
expect_run "route geo-8 csv" 0 route-geo-8.csv - -- \
    dlplan route -c datasets/clusters/geo-8 --flows "$DATA/route-geo-8.csv" \
    --format csv

# The csv contract of dlplan-formats(5), route csv, checked apart from the
# golden.
dlplan route -c $TWO --flows "$FL" --format csv >"$TMP/r.csv" 2>/dev/null
check "csv: header" test "$(head -1 "$TMP/r.csv")" = \
    "flow,src,dst,mb,regime,expected_s,path"
check "csv: one row per flow in input order" test \
    "$(tail -n +2 "$TMP/r.csv" | cut -d, -f1 | tr '\n' ' ')" = \
    "fwd0 bwd0 sync1 local l4 relay "
# fwd0 and sync1 are equal (1000 MB); fwd0 comes first in the file, so it
# is routed first and sync1 shares the WAN with it: sync1 pays more.
check "csv: equal flows routed in input order, the later one shares" awk -F, \
    '$1 == "fwd0" { a = $6 } $1 == "sync1" { b = $6 } END { exit !(b > a) }' \
    "$TMP/r.csv"

# Without a flow column flows are numbered from 1; the implicit switch of
# a cluster without links.csv costs 2 x 0.005 ms + 8 S / nic of the sender.
printf 'src,dst,mb\nlab-a100-0,lab-v100-0,100\nlab-v100-0,lab-a100-0,100\n' \
    >"$TMP/lab.csv"
expect_run "route implicit switch, numbered flows" 0 route-hetero-lab.csv - -- \
    dlplan route -c datasets/clusters/hetero-lab --flows "$TMP/lab.csv" \
    --format csv

expect_run "regimes two-dc" 0 route-regimes-two-dc.txt - -- \
    dlplan route -c $TWO --regimes
expect_run "regimes two-dc, forecast gmc is the default" 0 \
    route-regimes-two-dc.txt - -- \
    dlplan route -c $TWO --regimes --forecast gmc
# --forecast: the start regime's forecast is predict's for the same
# method on the mean link series.
for m in last auto; do
	dlplan route -c $TWO --regimes --forecast $m --format json \
	    >"$TMP/rg-$m.json" 2>&1
	dlplan predict -H $TWO/traffic.csv --mean-link --method $m \
	    --format csv >"$TMP/pr-$m.csv" 2>&1
	check "forecast $m: start regime from predict's forecast" \
	    /usr/bin/python3 -c "
import json, sys
r = json.load(open('$TMP/rg-$m.json'))
f = float(open('$TMP/pr-$m.csv').read().splitlines()[1].split(',')[2])
sys.exit(0 if r['forecast_util'] == f and r['forecast_method'] == '$m' and
    r['start_regime'] == min(int(f * 3), 2) else 1)"
done
expect_err "unknown forecast method" 1 \
    "dlplan: option '--forecast': 'x' is not one of gmc|gm|last|mean|median|wmed|ensemble|auto" -- \
    dlplan route -c $TWO --regimes --forecast x
expect_run "regimes two-dc json" 0 route-regimes-two-dc.json - -- \
    dlplan route -c $TWO --regimes --format json
expect_run "regimes two-dc csv, 2 regimes" 0 route-regimes-two-dc-k2.csv - -- \
    dlplan route -c $TWO --regimes --format csv --states 2
expect_run "regimes without traffic" 0 route-regimes-hetero-lab.txt - -- \
    dlplan route -c datasets/clusters/hetero-lab --regimes
expect_run "route -h" 0 route-help.txt - -- dlplan route -h

# --- usage errors (exit 1) --------------------------------------------
expect_err "no flows" 1 \
    "dlplan: no flows given (expected --flows FILE, or --regimes)" -- \
    dlplan route -c $TWO
expect_err "no cluster" 1 \
    "dlplan: no cluster given (expected -c DIR or --nodes FILE)" -- \
    dlplan route --flows "$FL"
expect_err "flows and regimes" 1 \
    "dlplan: options '--flows' and '--regimes' cannot be used together" -- \
    dlplan route -c $TWO --flows "$FL" --regimes
expect_err "unknown format" 1 \
    "dlplan: option '--format': 'xml' is not one of table|csv|json" -- \
    dlplan route -c $TWO --flows "$FL" --format xml
expect_err "states out of range" 1 \
    "dlplan: option '--states': '0' is out of range [1, 32]" -- \
    dlplan route -c $TWO --flows "$FL" --states 0
expect_err "horizon not a number" 1 \
    "dlplan: option '--horizon': 'soon' is not an integer" -- \
    dlplan route -c $TWO --flows "$FL" --horizon soon
expect_err "stray operand" 1 "dlplan: unexpected argument 'extra'" -- \
    dlplan route -c $TWO --flows "$FL" extra

# --- bad flows (exit 2, nothing on stdout) -----------------------------
# badflows NAME MESSAGE CONTENT: route must fail with status 2 and MESSAGE.
badflows() {
	printf '%b' "$3" >"$TMP/f.csv"
	expect_err "$1" 2 "$2" -- dlplan route -c $TWO --flows "$TMP/f.csv"
	[ -s "$TMP/out" ] && t_notok "$1: no output" "stdout not empty"
	return 0
}
F=$TMP/f.csv
H='flow,src,dst,mb'
badflows "zero mb" "dlplan: $F:3:4: column 'mb': '0' is out of range (expected a number in (0, 1000000000000] (MB))" \
    "$H\nf1,use-h100-0,usw-a100-0,100\nf2,use-h100-0,usw-a100-0,0\n"
badflows "negative mb" "dlplan: $F:2:4: column 'mb': '-5' is out of range (expected a number in (0, 1000000000000] (MB))" \
    "$H\nf1,use-h100-0,usw-a100-0,-5\n"
badflows "mb not a number" "dlplan: $F:2:4: column 'mb': '1e3MB' is not a number in (0, 1000000000000] (MB)" \
    "$H\nf1,use-h100-0,usw-a100-0,1e3MB\n"
badflows "duplicate flow id" "dlplan: $F:4:1: column 'flow': duplicate flow 'f1' (first on line 2)" \
    "$H\nf1,use-h100-0,usw-a100-0,100\nf2,use-h100-1,usw-a100-0,5\nf1,usw-l4-0,sw-a,7\n"
badflows "numbered id clashes" "dlplan: $F:3: flow without id numbered '2' clashes with line 2" \
    "$H\n2,use-h100-0,usw-a100-0,100\n,use-h100-1,usw-a100-0,5\n"
badflows "unknown source" "dlplan: $F:2:2: column 'src': unknown vertex 'nowhere' (not a node or a links.csv endpoint)" \
    "$H\nf1,nowhere,usw-a100-0,100\n"
badflows "unknown destination" "dlplan: $F:2:3: column 'dst': unknown vertex 'sw.us-east' (not a node or a links.csv endpoint)" \
    "$H\nf1,use-h100-0,sw.us-east,100\n"
badflows "src equals dst" "dlplan: $F:3:3: column 'dst': flow from 'sw-a' to itself" \
    "$H\nf1,use-h100-0,usw-a100-0,100\nf2,sw-a,sw-a,1\n"
badflows "no flows" "dlplan: $F:2: no flows (expected at least one row after the header)" \
    "# nothing to route\n$H\n"
badflows "missing column" "dlplan: $F:1: missing required column 'mb' in flows.csv header" \
    "flow,src,dst\nf1,use-h100-0,usw-a100-0\n"
badflows "unknown column" "dlplan: $F:1:5: unknown column 'prio' in flows.csv header (expected flow, src, dst, mb; prefix extra columns with x_)" \
    "$H,prio\nf1,use-h100-0,usw-a100-0,100,1\n"
badflows "bad flow id" "dlplan: $F:2:1: column 'flow': 'f 1' is not a valid id (expected 1 to 63 of A-Z a-z 0-9 . _ -)" \
    "$H\nf 1,use-h100-0,usw-a100-0,100\n"
expect_err "missing flows file" 2 \
    "dlplan: $TMP/none.csv: cannot open file: No such file or directory" -- \
    dlplan route -c $TWO --flows "$TMP/none.csv"

# --- no route (exit 3) ---------------------------------------------------
# g reaches n2 over a one-way link, so nothing reaches g.
mkdir -p "$TMP/oneway"
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\nn1,s1,1,G,1,1,1,100\nn2,s2,1,G,1,1,1,100\n' \
    >"$TMP/oneway/nodes.csv"
printf 'src,dst,gbps,latency_ms,duplex\nn1,n2,100,1,1\ng,n2,10,1,0\n' \
    >"$TMP/oneway/links.csv"
printf 'flow,src,dst,mb\nok,g,n1,10\nbig,n2,n1,100\nstuck,n1,g,1\n' >"$TMP/oneway/flows.csv"
expect_err "disconnected destination" 3 \
    "dlplan: $TMP/oneway/flows.csv:4: flow 'stuck': no route from 'n1' to 'g' in the network" -- \
    dlplan route -c "$TMP/oneway" --flows "$TMP/oneway/flows.csv" --format csv
check "no route: nothing on stdout" test ! -s "$TMP/out"

# --- I/O error (exit 4) ------------------------------------------------
if [ -w /dev/full ]; then
	dlplan route -c $TWO --flows "$FL" --format csv >/dev/full 2>"$TMP/err"
	rc=$?
	check "write error: exit 4" test "$rc" -eq 4
else
	skip "write error: exit 4" "no /dev/full"
fi
