/*
 * gpus.c - the GPU table of gpus.h.  Every figure is the vendor's data
 * sheet value (datasets/README.md, "GPU table", names each sheet): dense
 * tensor-core peaks (a sheet's "with sparsity" figure halved), memory
 * bandwidth in GB/s, NVLink per direction (half the sheet's total).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <ctype.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "gpus.h"

/* More specific names first: lookup takes the first match. */
static const struct gpu_spec table[] = {
	{ "B200", "B200", 2250, 2250, 8000, 900 },
	{ "H200-SXM-141GB", "H200", 989, 989, 4800, 450 },
	{ "H100-PCIe-80GB", "H100-PCIE", 756, 756, 2000, 0 },
	{ "H100-NVL-94GB", "H100-NVL", 835, 835, 3900, 0 },
	{ "H100-SXM5-80GB", "H100", 989, 989, 3350, 450 },
	{ "A100-PCIe-80GB", "A100-PCIE-80GB", 312, 312, 1935, 0 },
	{ "A100-PCIe-40GB", "A100-PCIE", 312, 312, 1555, 0 },
	{ "A100-SXM4-80GB", "A100-80GB", 312, 312, 2039, 300 },
	{ "A100-SXM4-40GB", "A100", 312, 312, 1555, 300 },
	{ "L40S-48GB", "L40S", 362, 362, 864, 0 },
	{ "L40-48GB", "L40", 181, 181, 864, 0 },
	{ "L4-24GB", "L4", 121, 121, 300, 0 },
	{ "A40-48GB", "A40", 150, 150, 696, 0 },
	{ "A10-24GB", "A10", 125, 125, 600, 0 },
	{ "V100S-PCIe-32GB", "V100S", 0, 130, 1134, 0 },
	{ "V100-PCIe-16GB", "V100-PCIE", 0, 112, 900, 0 },
	{ "V100-SXM2-16GB", "V100", 0, 125, 900, 150 },
	{ "T4-16GB", "T4", 0, 65, 320, 0 },
	{ "P100-PCIe-12GB", "P100-12GB", 0, 18.7, 549, 0 },
	{ "P100-SXM2-16GB", "P100-SXM2", 0, 21.2, 732, 80 },
	{ "P100-PCIe-16GB", "P100", 0, 18.7, 732, 0 },
};

#define NTABLE ((int)(sizeof(table) / sizeof(table[0])))

static int
is_sep(int c)
{
	return c == '\0' || c == '-' || c == '_' || c == ' ';
}

/* Whether word w (len bytes) occurs in s as a whole word, case ignored. */
static int
has_word(const char *s, const char *w, size_t len)
{
	for (const char *p = s; *p != '\0'; p++) {
		if (p != s && !is_sep((unsigned char)p[-1]))
			continue;
		if (strncasecmp(p, w, len) == 0 && is_sep((unsigned char)p[len]))
			return 1;
	}
	return 0;
}

static int
matches(const char *gpu_model, const char *match)
{
	const char *w = match;

	while (*w != '\0') {
		size_t len = strcspn(w, "-");

		if (!has_word(gpu_model, w, len))
			return 0;
		w += len;
		if (*w == '-')
			w++;
	}
	return 1;
}

const struct gpu_spec *
gpu_lookup(const char *gpu_model)
{
	if (gpu_model == NULL)
		return NULL;
	for (int i = 0; i < NTABLE; i++)
		if (matches(gpu_model, table[i].match))
			return &table[i];
	return NULL;
}

const struct gpu_spec *
gpu_table(int *n)
{
	*n = NTABLE;
	return table;
}
