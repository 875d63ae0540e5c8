# dlplan check: summaries, and every malformed-input path of the CSV
# readers (exit status 2, FILE:LINE:COLUMN in the message, nothing on
# stdout, no file written).

H='node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps'
OKROW='n1,s1,4,A100,312,80,2400,200'

# cluster DIR NODES [LINKS [LOAD [TRAFFIC]]]: write a cluster directory.
cluster() {
	rm -rf "$1"
	mkdir -p "$1"
	printf '%b' "$2" >"$1/nodes.csv"
	[ -n "${3:-}" ] && printf '%b' "$3" >"$1/links.csv"
	[ -n "${4:-}" ] && printf '%b' "$4" >"$1/load.csv"
	[ -n "${5:-}" ] && printf '%b' "$5" >"$1/traffic.csv"
	return 0
}

# bad NAME MESSAGE NODES [LINKS [LOAD [TRAFFIC]]]: check must fail with
# status 2, MESSAGE on stderr, nothing on stdout and no new file.
bad() {
	_name=$1 _msg=$2
	shift 2
	cluster "$TMP/c" "$@"
	_before=$(ls -A "$TMP/c" | tr '\n' ' ')
	expect_err "$_name" 2 "$_msg" -- dlplan check -c "$TMP/c"
	if [ -s "$TMP/out" ] || [ "$(ls -A "$TMP/c" | tr '\n' ' ')" != "$_before" ]; then
		t_notok "$_name: no output" "stdout or directory changed"
	fi
}

# --- good input -------------------------------------------------------
for d in single-node hetero-lab two-dc geo-8; do
	expect_run "check $d" 0 "check-$d.txt" - -- \
	    dlplan check -c "datasets/clusters/$d"
	expect_run "check $d json" 0 "check-$d.json" - -- \
	    dlplan check -c "datasets/clusters/$d" --format json
done

cluster "$TMP/q" "\357\273\277# comment line\r\n$H,x_note\r\n\r\n\"n1\",s1,4,\"A100, \"\"SXM\"\"\",312,80,2400,200,\"two\nlines\"\r\n# another comment\r\nn2,s1,2,T4,65,16,64,25,x"
expect_run "BOM, CRLF, comments, quotes, x_ column, no final newline" 0 \
    check-quoted.json - -- dlplan check -c "$TMP/q" --format json

cluster "$TMP/m" "$H\n$OKROW\n"
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb\nemb,0.5,10,1,2\nblk,4,100,1,8\n' >"$TMP/m/model.csv"
expect_run "check with a model" 0 check-model.json - -- \
    dlplan check -c "$TMP/m" -m "$TMP/m/model.csv" --format json

# --- usage errors -----------------------------------------------------
expect_err "no cluster" 1 \
    "dlplan: no cluster given (expected -c DIR or --nodes FILE)" -- dlplan check
expect_err "unknown option" 1 "dlplan: unknown option '--frobnicate'" -- \
    dlplan check -c datasets/clusters/two-dc --frobnicate
expect_err "bad format" 1 \
    "dlplan: option '--format': 'xml' is not one of table|json" -- \
    dlplan check -c datasets/clusters/two-dc --format xml
expect_err "missing argument" 1 \
    "dlplan: option '--format' requires an argument FMT" -- \
    dlplan check -c datasets/clusters/two-dc --format
expect_err "stray operand" 1 "dlplan: unexpected argument 'extra'" -- \
    dlplan check -c datasets/clusters/two-dc extra
expect_err "not a directory" 2 \
    "dlplan: $TMP/none: not a cluster directory (expected a directory holding nodes.csv)" -- \
    dlplan check -c "$TMP/none"
mkdir -p "$TMP/empty"
expect_err "no nodes.csv" 2 \
    "dlplan: $TMP/empty: no nodes.csv in cluster directory" -- \
    dlplan check -c "$TMP/empty"

# --- nodes.csv --------------------------------------------------------
C=$TMP/c
bad "empty file" "dlplan: $C/nodes.csv: empty file (expected a nodes.csv header row)" ""
bad "comments only" "dlplan: $C/nodes.csv: empty file (expected a nodes.csv header row)" "# nothing\n\n"
bad "header only" "dlplan: $C/nodes.csv:1: no nodes (expected at least one row after the header)" "$H\n"
bad "unknown column" "dlplan: $C/nodes.csv:1:9: unknown column 'color' in nodes.csv header (expected node, site, gpus, gpu_model, tflops, mem_gb, intra_gbps, nic_gbps, mfu, cost_per_hour, host, mem_gbs; prefix extra columns with x_)" "$H,color\n$OKROW,red\n"
bad "duplicate column" "dlplan: $C/nodes.csv:1:9: column 'gpus' appears twice in the header" "$H,gpus\n$OKROW,4\n"
bad "missing column" "dlplan: $C/nodes.csv:1: missing required column 'nic_gbps' in nodes.csv header" "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps\nn1,s1,4,A100,312,80,2400\n"
bad "too few fields" "dlplan: $C/nodes.csv:3:8: expected 8 fields as in the header, found 7" "$H\n$OKROW\nn2,s1,4,A100,312,80,2400\n"
bad "too many fields" "dlplan: $C/nodes.csv:2:9: expected 8 fields as in the header, found 9" "$H\n$OKROW,7\n"
bad "duplicate id" "dlplan: $C/nodes.csv:3:1: column 'node': duplicate node 'n1' (first on line 2)" "$H\n$OKROW\n$OKROW\n"
bad "bad id characters" "dlplan: $C/nodes.csv:2:1: column 'node': 'n 1;rm' is not a valid id (expected 1 to 63 of A-Z a-z 0-9 . _ -)" "$H\nn 1;rm,s1,4,A100,312,80,2400,200\n"
bad "id too long" "dlplan: $C/nodes.csv:2:1: column 'node': '$(printf 'a%.0s' $(seq 64))' is not a valid id (expected 1 to 63 of A-Z a-z 0-9 . _ -)" "$H\n$(printf 'a%.0s' $(seq 64)),s1,4,A100,312,80,2400,200\n"
bad "integer with junk" "dlplan: $C/nodes.csv:2:3: column 'gpus': '4x' is not an integer in [1, 1024]" "$H\nn1,s1,4x,A100,312,80,2400,200\n"
bad "fractional integer" "dlplan: $C/nodes.csv:2:3: column 'gpus': '2.5' is not an integer in [1, 1024]" "$H\nn1,s1,2.5,A100,312,80,2400,200\n"
bad "zero gpus" "dlplan: $C/nodes.csv:2:3: column 'gpus': '0' is out of range (expected an integer in [1, 1024])" "$H\nn1,s1,0,A100,312,80,2400,200\n"
bad "negative memory" "dlplan: $C/nodes.csv:2:6: column 'mem_gb': '-80' is out of range (expected a number in (0, 1000000] (GB))" "$H\nn1,s1,4,A100,312,-80,2400,200\n"
bad "not finite" "dlplan: $C/nodes.csv:2:5: column 'tflops': 'inf' is not a number in [0.001, 1000000] (TFLOPS)" "$H\nn1,s1,4,A100,inf,80,2400,200\n"
bad "nan" "dlplan: $C/nodes.csv:2:5: column 'tflops': 'nan' is not a number in [0.001, 1000000] (TFLOPS)" "$H\nn1,s1,4,A100,nan,80,2400,200\n"
bad "huge number" "dlplan: $C/nodes.csv:2:8: column 'nic_gbps': '1e308' is out of range (expected a number in [0.001, 10000000] (Gbps))" "$H\nn1,s1,4,A100,312,80,2400,1e308\n"
bad "overflowing number" "dlplan: $C/nodes.csv:2:8: column 'nic_gbps': '1e999' is out of range (expected a number in [0.001, 10000000] (Gbps))" "$H\nn1,s1,4,A100,312,80,2400,1e999\n"
bad "empty required" "dlplan: $C/nodes.csv:2:5: column 'tflops': empty value (a value is required)" "$H\nn1,s1,4,A100,,80,2400,200\n"
bad "mfu above one" "dlplan: $C/nodes.csv:2:9: column 'mfu': '1.5' is out of range (expected a number in (0, 1])" "$H,mfu\n$OKROW,1.5\n"
bad "bad host" "dlplan: $C/nodes.csv:2:9: column 'host': 'a\$(reboot)' is not a valid hostname (expected letters, digits, '.', '-', '_')" "$H,host\n$OKROW,a\$(reboot)\n"
bad "control character" "dlplan: $C/nodes.csv:2:4: column 'gpu_model': control character in text" "$H\nn1,s1,4,\"A1\t00\",312,80,2400,200\n"
bad "unterminated quote" "dlplan: $C/nodes.csv:2:4: malformed CSV (unterminated quoted field)" "$H\nn1,s1,4,\"A100,312,80,2400,200\n"
bad "stray quote" "dlplan: $C/nodes.csv:2:4: malformed CSV (error parsing data while strict checking enabled); check the quotes of this field" "$H\nn1,s1,4,A\"100,312,80,2400,200\n"
bad "NUL byte" "dlplan: $C/nodes.csv:2:10: NUL byte in file (expected text)" "$H\nn1,s1,4,A\0000,312,80,2400,200\n"
bad "multi-site without links" "dlplan: $C/nodes.csv:3: cluster spans 2 sites ('s1', 's2') but has no links.csv (expected links.csv describing the network between sites)" "$H\n$OKROW\nn2,s2,4,A100,312,80,2400,200\n"

# --- links.csv --------------------------------------------------------
N2="$H\n$OKROW\nn2,s2,4,A100,312,80,2400,200\n"
bad "links header only" "dlplan: $C/links.csv:1: no links (expected at least one row after the header)" "$N2" "src,dst,gbps,latency_ms\n"
bad "self link" "dlplan: $C/links.csv:2:2: column 'dst': link from 'n1' to itself" "$N2" "src,dst,gbps,latency_ms\nn1,n1,100,1\n"
bad "duplicate link" "dlplan: $C/links.csv:3:2: link 'n2' -> 'n1' is given twice (also on line 2; a duplex row adds both directions, use duplex=0 for one)" "$N2" "src,dst,gbps,latency_ms\nn1,n2,100,1\nn2,n1,100,1\n"
bad "bad duplex" "dlplan: $C/links.csv:2:5: column 'duplex': '2' is out of range (expected an integer in [0, 1])" "$N2" "src,dst,gbps,latency_ms,duplex\nn1,n2,100,1,2\n"
bad "negative latency" "dlplan: $C/links.csv:2:4: column 'latency_ms': '-1' is out of range (expected a number in [0, 1000000] (ms))" "$N2" "src,dst,gbps,latency_ms\nn1,n2,100,-1\n"
bad "disconnected node" "dlplan: $C/links.csv: network does not connect node 'n2' from node 'n1' (expected a path both ways between all nodes)" "$N2" "src,dst,gbps,latency_ms\nn1,gw,100,1\n"
bad "one-way link" "dlplan: $C/links.csv: network does not connect node 'n2' to node 'n1' (expected a path both ways between all nodes)" "$N2" "src,dst,gbps,latency_ms,duplex\nn1,n2,100,1,0\n"

# --- load.csv and traffic.csv ----------------------------------------
N1="$H\n$OKROW\n"
bad "load unknown node" "dlplan: $C/load.csv:3:1: column 'node': unknown node 'n9' (not in nodes.csv)" "$N1" "" "node,t,util\nn1,0,0.5\nn9,0,0.5\n"
bad "load util above one" "dlplan: $C/load.csv:2:3: column 'util': '1.5' is out of range (expected a number in [0, 1])" "$N1" "" "node,t,util\nn1,0,1.5\n"
bad "load util 1e308" "dlplan: $C/load.csv:2:3: column 'util': '1e308' is out of range (expected a number in [0, 1])" "$N1" "" "node,t,util\nn1,0,1e308\n"
bad "load duplicate step" "dlplan: $C/load.csv:4:2: step t=1 of node 'n1' given twice (also on line 2)" "$N1" "" "node,t,util\nn1,1,0.5\nn1,0,0.5\nn1,1,0.25\n"
bad "load negative step" "dlplan: $C/load.csv:2:2: column 't': '-1' is out of range (expected an integer in [0, 1000000000000000])" "$N1" "" "node,t,util\nn1,-1,0.5\n"
bad "traffic unknown vertex" "dlplan: $C/traffic.csv:2:2: column 'src': unknown vertex 'zz' (not a node or a links.csv endpoint)" "$N2" "src,dst,gbps,latency_ms\nn1,n2,100,1\n" "" "t,src,dst,util\n0,zz,n2,0.1\n"
bad "traffic missing link" "dlplan: $C/traffic.csv:2:3: column 'dst': no link 'n1' -> 'gw' in the network" "$N2" "src,dst,gbps,latency_ms\nn1,n2,100,1\ngw,n2,10,1\n" "" "t,src,dst,util\n0,n1,gw,0.1\n"

# --- model.csv --------------------------------------------------------
cluster "$TMP/m" "$N1"
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb\nemb,0,0,1,2\n' >"$TMP/m/zero.csv"
expect_err "model without work" 2 "dlplan: $TMP/m/zero.csv:1: model has no work (expected fwd_gflop > 0 in some layer)" -- \
    dlplan check -c "$TMP/m" -m "$TMP/m/zero.csv"
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb\nemb,-1,0,1,2\n' >"$TMP/m/neg.csv"
expect_err "model negative flops" 2 "dlplan: $TMP/m/neg.csv:2:2: column 'fwd_gflop': '-1' is out of range (expected a number in [0, 1000000000] (GFLOP per sample))" -- \
    dlplan check -c "$TMP/m" -m "$TMP/m/neg.csv"
expect_err "model missing file" 2 "dlplan: $TMP/m/nope.csv: cannot open file: No such file or directory" -- \
    dlplan check -c "$TMP/m" -m "$TMP/m/nope.csv"
