# pipedream2csv.awk - turn PipeDream's ResNet-50 profile into a model.csv.
#
# Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
#
#	awk -f pipedream2csv.awk [-v batch=128] [-v tflops=15.7] graph.txt
#
# graph.txt is profiler/image_classification/profiles/resnet50/graph.txt
# of https://github.com/msr-fiddle/pipedream (see README.md here).  Its
# node lines read
#	nodeN -- OP -- forward_compute_time=MS, backward_compute_time=MS,
#	    activation_size=BYTES, parameter_size=BYTES
# for one batch of `batch` images in FP32.  Nodes are numbered in forward
# order.  They are grouped into the rows of dlplan model resnet50: the stem
# ends at the max pool, every bottleneck block ends at the ReLU that
# follows its residual Add, and the head is the rest.  Per row and per
# image:
#	fwd_gflop, bwd_gflop	measured milliseconds x tflops (the time the
#				profiled GPU took, as GFLOP at its peak);
#				the Input node (data loading) is left out
#	params_m		parameter bytes / 4 / 1e6
#	act_mb			output of the row's last node
#	mem_mb			outputs of the nodes that are not in place
#				(ReLU and Add are; View and Size are views),
#				plus the input image
# The script stops with an error unless it finds 18 rows.

BEGIN {
	if (batch == "")
		batch = 128
	if (tflops == "")
		tflops = 15.7
	nstage[1] = 3; nstage[2] = 4; nstage[3] = 6; nstage[4] = 3
}

/^node[0-9]+ -- / {
	id = substr($1, 5) + 0
	split($0, part, " -- ")
	op[id] = part[2]
	fwd[id] = val($0, "forward_compute_time")
	bwd[id] = val($0, "backward_compute_time")
	act[id] = val($0, "activation_size")
	par[id] = val($0, "parameter_size")
	if (id > maxid)
		maxid = id
}

# The number after "key=" in s.
function val(s, key,    i, rest) {
	i = index(s, key "=")
	if (i == 0) {
		print "pipedream2csv: no " key " in: " s > "/dev/stderr"
		bad = 1
		exit 1
	}
	rest = substr(s, i + length(key) + 1)
	sub(/[, ].*/, "", rest)
	return rest + 0
}

function emit(name,    scale) {
	scale = tflops / batch
	printf "%s,%.6g,%.6g,%.6g,%.6g,%.6g\n", name, rf * scale, rb * scale,
	    rp / 4 / 1e6, ra / batch / 1e6, rm / batch / 1e6
	rf = rb = rp = rm = 0
	nrows++
}

END {
	if (bad)
		exit 1
	print "# ResNet-50 v1.5, measured per layer by the PipeDream profiler"
	print "# (msr-fiddle/pipedream, profiles/resnet50/graph.txt), batch " \
	    batch ", FP32; GFLOP = measured time x " tflops " TFLOPS"
	print "layer,fwd_gflop,bwd_gflop,params_m,act_mb,mem_mb"
	stage = 2
	blk = 0
	for (id = 1; id <= maxid; id++) {
		if (!(id in op)) {
			print "pipedream2csv: node" id " is missing" > "/dev/stderr"
			exit 1
		}
		if (op[id] != "Input") {
			rf += fwd[id]
			rb += bwd[id]
		}
		rp += par[id]
		ra = act[id]
		if (op[id] !~ /inplace|^View|^Size/)
			rm += act[id]
		if (op[id] ~ /^MaxPool2d/) {
			emit("stem")
		} else if (op[id] ~ /^ReLU/ && op[id - 1] ~ /^Add/) {
			blk++
			emit("conv" stage "_" blk)
			if (blk == nstage[stage - 1]) {
				stage++
				blk = 0
			}
		}
	}
	emit("head")
	if (nrows != 18) {
		print "pipedream2csv: found " nrows " rows, expected 18" \
		    > "/dev/stderr"
		exit 1
	}
}
