# One clock: on every bundled cluster x 3 models x 4 strategies, the plan's
# T_g is the 1F1B makespan that an independent replay of the evaluated
# plan (tests/cli/oneclock-check.py) and eval's own simulation give,
# within 0.5 %.  Under DLPLAN_WRAP (valgrind) only hetero-lab x gpt2-xl.

OC_PY=/usr/bin/python3
if ! [ -x "$OC_PY" ]; then
	skip "one clock" "no $OC_PY"
	return 0 2>/dev/null || exit 0
fi
oc_clusters="geo-8 hetero-lab philly-64 single-node two-dc"
oc_models="gpt2-xl llama2-7b bert-large"
if [ -n "${DLPLAN_WRAP:-}" ]; then
	oc_clusters=hetero-lab
	oc_models=gpt2-xl
fi
for _c in $oc_clusters; do
	for _m in $oc_models; do
		for _s in auto dp pp hybrid; do
			_n="one clock: $_c x $_m, $_s"
			_d=$TMP/oc-$_c-$_m-$_s
			dlplan plan -c "$SRCDIR/datasets/clusters/$_c" \
			    -m "$SRCDIR/datasets/models/$_m.csv" \
			    --global-batch 256 --micro-batch 2 --strategy "$_s" \
			    -o "$_d" >/dev/null 2>"$TMP/oc.err"
			_rc=$?
			if [ "$_rc" -eq 3 ]; then
				# No plan of that strategy fits: say why.
				skip "$_n" "$(head -n 1 "$TMP/oc.err")"
				continue
			fi
			if [ "$_rc" -ne 0 ]; then
				t_notok "$_n" "plan exit $_rc" \
				    "$(head -3 "$TMP/oc.err")"
				continue
			fi
			if ! dlplan eval "$_d/plan.json" --format json \
			    >"$_d/eval.json" 2>"$TMP/oc.err"; then
				t_notok "$_n" "eval failed" \
				    "$(head -3 "$TMP/oc.err")"
				continue
			fi
			check "$_n" "$OC_PY" "$SRCDIR/tests/cli/oneclock-check.py" \
			    "$_d/eval.json" "$SRCDIR/datasets/models/$_m.csv"
		done
	done
done
