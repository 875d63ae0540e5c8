/*
 * gpus.h - the vendor figures of the GPUs dlplan knows by name: dense
 * tensor peaks per precision, memory bandwidth and NVLink bandwidth, each
 * from the vendor's data sheet (datasets/README.md lists the sources).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The cost model takes the memory bandwidth from here for a node whose
 * nodes.csv row has no mem_gbs (dlplan(1) ALGORITHMS, Cost model); the
 * peaks and NVLink figures are what the data sheet prints, for
 * "dlplan check" to compare with a row's tflops and intra_gbps.
 */
#ifndef DL_GPUS_H
#define DL_GPUS_H

struct gpu_spec {
	const char *name;	/* canonical name, as the bundled data write it */
	const char *match;	/* words that must all occur, '-' separated */
	double bf16_tflops;	/* dense; 0: no bf16 */
	double fp16_tflops;	/* dense tensor-core fp16 */
	double mem_gbs;		/* memory bandwidth, GB/s (1e9 bytes) */
	double nvlink_gbs;	/* NVLink per GPU per direction, GB/s; 0: none */
};

/*
 * The entry whose words all occur in gpu_model (case ignored, as whole
 * words between '-', '_', ' ' or the ends), the first of the table's
 * order, which puts the more specific names first; NULL when none does.
 */
const struct gpu_spec *gpu_lookup(const char *gpu_model);
/* The table, n entries, in lookup order (for tests and documentation). */
const struct gpu_spec *gpu_table(int *n);

#endif
