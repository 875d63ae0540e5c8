/*
 * cluster.h - nodes, the network graph, and load and traffic histories.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A loaded cluster owns every string and array below; cluster_free()
 * releases them.  Indices are stable: node i is vertex i (nodes.csv
 * order); other vertices follow in order of first appearance in links.csv
 * (src before dst), or, without links.csv, one implicit switch
 * "sw.<site>" per site in order of first appearance in nodes.csv.
 */
#ifndef DL_CLUSTER_H
#define DL_CLUSTER_H

#include <stddef.h>

#include "series.h"
#include "util.h"

struct dl_node {
	char *id, *site, *gpu_model, *host;	/* host: launcher hostname */
	int gpus;
	double tflops;		/* dense peak per GPU, TFLOPS */
	double mem_gb;		/* per GPU */
	double intra_gbps;	/* GPU<->GPU inside the node */
	double nic_gbps;
	double mfu;		/* < 0 when not given (use --mfu) */
	double cost_per_hour;	/* < 0 when not given */
	double mem_gbs;		/* GPU memory bandwidth, GB/s; < 0 not given */
	int site_idx;
	long line;		/* in nodes.csv */
};

struct dl_vertex {
	char *id;
	int node;		/* node index, or -1 */
	int implicit_switch;	/* the "sw.<site>" of a cluster without links */
	int site;		/* site index of a node or implicit switch, or -1 */
};

struct dl_edge {
	int src, dst;		/* vertex indices */
	double gbps, latency_ms;
	int from_switch;	/* src is an implicit switch: costs latency only */
	long line;		/* in links.csv, 0 when implicit */
};

struct dl_cluster {
	struct dl_node *nodes;
	size_t nnodes;
	char **sites;
	size_t nsites;
	struct dl_vertex *verts;
	size_t nverts;
	struct dl_edge *edges;
	size_t nedges;
	/* Out-edges of vertex v: out_edge[out_off[v] .. out_off[v+1]-1],
	 * in edge order. */
	size_t *out_off;
	int *out_edge;
	/* In-edges of vertex v, the same way. */
	size_t *in_off;
	int *in_edge;
	int has_links;
	struct dl_series *load;		/* per node; n = 0 without history */
	int has_load;
	struct dl_series *traffic;	/* per edge; n = 0 without history */
	int has_traffic;
	/* Paths of the files read (NULL when absent). */
	char *path_nodes, *path_links, *path_load, *path_traffic;
	void *vindex;		/* private: vertex id lookup */
	/* Values accepted but implausible (mem_gb 81920: MB, not GB?). */
	struct dl_notes warnings;
};

/*
 * Where to read a cluster from.  dir (may be NULL) supplies any file not
 * given explicitly: DIR/nodes.csv (required), DIR/links.csv, DIR/load.csv,
 * DIR/traffic.csv (optional; used when present).
 */
struct dl_cluster_paths {
	const char *dir, *nodes, *links, *load, *traffic;
};

int cluster_load(struct dl_cluster *c, const struct dl_cluster_paths *p,
    struct dl_err *e);
void cluster_free(struct dl_cluster *c);

/* Index of a node or vertex by id, or -1. */
int cluster_node(const struct dl_cluster *c, const char *id);
int cluster_vertex(const struct dl_cluster *c, const char *id);
/* Index of the directed edge src->dst, or -1. */
int cluster_edge(const struct dl_cluster *c, int src, int dst);

/* Total GPUs, total peak TFLOPS. */
long cluster_gpus(const struct dl_cluster *c);
double cluster_tflops(const struct dl_cluster *c);
/* Largest number of hops on a shortest path between two nodes. */
int cluster_diameter(const struct dl_cluster *c);
/* out[n] (room for every node, zeroed by the caller): the widest link
 * out of node n, Gbit/s; 0 when it has none. */
void cluster_widest_out(const struct dl_cluster *c, double *out);
/* label[v] (room for every vertex): the site of vertex v, a node's own
 * and any other vertex's that of the node nearest to it in hops over
 * links either way (the first in nodes.csv order on a tie); -1 where no
 * node reaches it. */
void cluster_site_labels(const struct dl_cluster *c, int *label);

/* Schemas, for tests and for the formats man page (the history schemas
 * are series.h's). */
extern const struct csv_schema dl_nodes_schema, dl_links_schema;

/* Whether a GPU model (nodes.csv gpu_model) has no bf16 arithmetic
 * (Volta and older): it trains fp16 with loss scaling. */
int cluster_gpu_fp16(const char *gpu_model);

/*
 * The cluster restricted to the nodes with keep[i] set, in nodes.csv
 * order.  Every other vertex and every edge stays (so routes, link
 * histories and congestion regimes are those of c): the vertices are the
 * kept nodes first, then all other vertices of c in their order, the
 * nodes left out becoming plain relay vertices (node -1).  vmap (c->nverts
 * entries) receives, for every vertex of sub, its index in c; for a kept
 * node that is its node index in c.  Sites keep their indices.  sub owns
 * copies of everything and is released with cluster_free(); it has no id
 * index, so cluster_vertex() and cluster_node() find nothing in it.
 */
void cluster_sub(struct dl_cluster *sub, const struct dl_cluster *c,
    const unsigned char *keep, int *vmap);

#endif
