# One clock: on every bundled cluster x 3 models x 4 strategies, the plan's
# T_g is the 1F1B makespan that an independent replay of the evaluated
# plan (tests/cli/oneclock-check.py) and eval's own simulation give,
# within 0.5 %.  Under DLPLAN_WRAP (valgrind) only hetero-lab x gpt2-xl.
#
# Every case must make a plan: "no plan fits" (exit 3) fails unless the
# case is listed in oc_nofit below with the first words of the reason,
# and a listed case that makes a plan fails too, so that a case never
# skips its check unseen (philly-64 x llama2-7b, dp once skipped on
# every run).

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
# "CLUSTER:MODEL:STRATEGY:reason" of the cases where no plan fits (the
# reason: the start of dlplan's message, blanks as "_"); none today.
oc_nofit=""

# nofit_reason CASE: the listed reason of CASE, or nothing.
nofit_reason() {
	for _e in $oc_nofit; do
		case $_e in
		"$1":*) printf '%s\n' "${_e#"$1":}" | tr _ ' '; return ;;
		esac
	done
}

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
			_why=$(nofit_reason "$_c:$_m:$_s")
			if [ "$_rc" -eq 3 ]; then
				case $(head -n 1 "$TMP/oc.err") in
				"dlplan: $_why"*)
					[ -n "$_why" ] && {
						t_ok "$_n: no plan fits, as listed"
						continue
					} ;;
				esac
				t_notok "$_n" "no plan fits (exit 3):" \
				    "$(head -n 1 "$TMP/oc.err")" \
				    "list it in oc_nofit if that is right"
				continue
			fi
			if [ -n "$_why" ]; then
				t_notok "$_n" "listed in oc_nofit, but plan" \
				    "exits $_rc: remove it from the list"
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

# The interleaved schedule: Megatron plans that interleave, against the
# same replay in Megatron-LM's order (plans/dlplan_pipe.py), with and
# without recomputation.  Each must interleave, or the check proves
# nothing.
for _cm in philly-64:llama2-7b philly-64:llama2-13b single-node:llama2-13b; do
	[ -n "${DLPLAN_WRAP:-}" ] && break
	_c=${_cm%%:*} _m=${_cm#*:}
	for _r in none full; do
		_n="one clock: $_c x $_m, megatron interleaved, recompute $_r"
		_d=$TMP/ocv-$_c-$_m-$_r
		if ! dlplan plan -c "$SRCDIR/datasets/clusters/$_c" \
		    -m "$SRCDIR/datasets/models/$_m.csv" --global-batch 64 \
		    --runtime megatron --recompute "$_r" -o "$_d" -q \
		    2>"$TMP/oc.err" || ! dlplan eval "$_d/plan.json" \
		    --format json >"$_d/eval.json" 2>>"$TMP/oc.err"; then
			t_notok "$_n" "$(head -3 "$TMP/oc.err")"
			continue
		fi
		if ! grep -q '"virtual_stages"' "$_d/plan.json"; then
			t_notok "$_n" "the plan does not interleave"
			continue
		fi
		check "$_n" "$OC_PY" "$SRCDIR/tests/cli/oneclock-check.py" \
		    "$_d/eval.json" "$SRCDIR/datasets/models/$_m.csv"
	done
done
