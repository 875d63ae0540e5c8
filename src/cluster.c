/*
 * cluster.c - read and check nodes, links, load and traffic.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cluster.h"
#include "csvin.h"
#include "kc.h"
#include "sb.h"
#include "series.h"

#define INF HUGE_VAL

static const struct csv_col nodes_cols[] = {
	{ "node", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "site", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "gpus", CSV_INT, 1, 1, 1024, 0, 0, NULL },
	{ "gpu_model", CSV_STR, 1, 0, 0, 0, 0, NULL },
	{ "tflops", CSV_NUM, 1, 1e-3, 1e6, 0, 0, "TFLOPS" },
	{ "mem_gb", CSV_NUM, 1, 0, 1e6, 1, 0, "GB" },
	{ "intra_gbps", CSV_NUM, 1, 1e-3, 1e7, 0, 0, "Gbps" },
	{ "nic_gbps", CSV_NUM, 1, 1e-3, 1e7, 0, 0, "Gbps" },
	{ "mfu", CSV_NUM, 0, 0, 1, 1, 0, NULL },
	{ "cost_per_hour", CSV_NUM, 0, 0, 1e9, 0, 0, NULL },
	{ "host", CSV_STR, 0, 0, 0, 0, 0, NULL },
	{ "mem_gbs", CSV_NUM, 0, 0, 1e6, 0, 0, "GB/s" },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL }
};
const struct csv_schema dl_nodes_schema = { "nodes.csv", nodes_cols };

/*
 * Plausibility limits (dlplan-formats(5)): no GPU or node of 2026 comes
 * near them, so a value above is more likely a unit slip.
 */
static const struct csv_limit nodes_limits[] = {
	{ "gpus", 64, "more than 64 GPUs in one node" },
	{ "tflops", 20000, "more than 20,000 TFLOPS per GPU; given in "
	    "GFLOPS?" },
	{ "mem_gb", 1024, "more than 1,024 GB per GPU; given in MB?" },
	{ "intra_gbps", 100000, "more than 100,000 Gbps inside a node; given "
	    "in Mbps?" },
	{ "nic_gbps", 100000, "more than 100,000 Gbps per node; given in "
	    "Mbps?" },
	{ "cost_per_hour", 10000, "more than 10,000 per node-hour" },
	{ "mem_gbs", 50000, "more than 50,000 GB/s of memory bandwidth per "
	    "GPU; given in Gbit/s or MB/s?" },
	{ NULL, 0, NULL }
};
static const struct csv_limit links_limits[] = {
	{ "gbps", 100000, "more than 100,000 Gbps on one link; given in "
	    "Mbps?" },
	{ "latency_ms", 10000, "more than 10 s; given in microseconds?" },
	{ NULL, 0, NULL }
};

static const struct csv_col links_cols[] = {
	{ "src", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "dst", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "gbps", CSV_NUM, 1, 1e-3, 1e7, 0, 0, "Gbps" },
	{ "latency_ms", CSV_NUM, 1, 0, 1e6, 0, 0, "ms" },
	{ "duplex", CSV_INT, 0, 0, 1, 0, 0, NULL },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL }
};
const struct csv_schema dl_links_schema = { "links.csv", links_cols };

/* The history schemas (load.csv, traffic.csv) are series.c's. */

/* The index of vertex id in vm (id -> index, kc.h), or -1. */
static int
vertex_index(const struct kcache *vm, const char *id)
{
	size_t i;

	return kc_findi(vm, id, strlen(id), &i) ? (int)i : -1;
}

/* Loader state. */
struct ld {
	struct dl_cluster *c;
	struct kcache *vm;	/* vertex id -> index, kept in c->vindex */
	size_t vcap, ecap;
	struct dl_err *e;
	long dst_col;		/* file column of links.csv's dst */
};

static int
add_vertex(struct ld *L, const char *id, int node, int site, int implicit)
{
	struct dl_cluster *c = L->c;
	struct dl_vertex *v;

	c->verts = xgrow(c->verts, &L->vcap, c->nverts + 1, sizeof(*v));
	v = &c->verts[c->nverts];
	v->id = xstrdup(id);
	v->node = node;
	v->site = site;
	v->implicit_switch = implicit;
	kc_puti(L->vm, v->id, strlen(v->id), c->nverts);
	return (int)c->nverts++;
}

static void
add_edge(struct ld *L, int src, int dst, double gbps, double lat, int fromsw,
    long line)
{
	struct dl_cluster *c = L->c;
	struct dl_edge *ed;

	c->edges = xgrow(c->edges, &L->ecap, c->nedges + 1, sizeof(*ed));
	ed = &c->edges[c->nedges++];
	ed->src = src;
	ed->dst = dst;
	ed->gbps = gbps;
	ed->latency_ms = lat;
	ed->from_switch = fromsw;
	ed->line = line;
}

/* A launcher hostname: letters, digits, '.', '-', '_'; 1..253 chars. */
static int
valid_host(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > 253 || s[0] == '-' || s[0] == '.')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' ||
		    *s == '_'))
			return 0;
	return 1;
}

static int
load_nodes(struct ld *L, const char *path)
{
	struct dl_cluster *c = L->c;
	struct csv_table t;
	size_t scap = 0;
	size_t cnode, csite, cgpus, cmodel, ctflops, cmem, cintra, cnic, cmfu,
	    ccost, chost, cmembw;
	int rc;

	if ((rc = csvin_read(path, &dl_nodes_schema, &t, L->e)) != DL_OK)
		return rc;
	cnode = csv_colidx(&t, "node");
	csite = csv_colidx(&t, "site");
	cgpus = csv_colidx(&t, "gpus");
	cmodel = csv_colidx(&t, "gpu_model");
	ctflops = csv_colidx(&t, "tflops");
	cmem = csv_colidx(&t, "mem_gb");
	cintra = csv_colidx(&t, "intra_gbps");
	cnic = csv_colidx(&t, "nic_gbps");
	cmfu = csv_colidx(&t, "mfu");
	ccost = csv_colidx(&t, "cost_per_hour");
	chost = csv_colidx(&t, "host");
	cmembw = csv_colidx(&t, "mem_gbs");
	if (t.nrows == 0) {
		dl_seterr(L->e, DL_EDATA, path, t.header_line, 0,
		    "no nodes (expected at least one row after the header)");
		csvin_free(&t);
		return DL_EDATA;
	}
	c->nodes = xcalloc(t.nrows, sizeof(struct dl_node));
	for (size_t r = 0; r < t.nrows; r++) {
		struct dl_node *n = &c->nodes[r];
		const char *site = csv_str(&t, r, csite);
		int prev = vertex_index(L->vm, csv_str(&t, r, cnode));
		size_t s;

		if (prev >= 0) {
			rc = csv_cellerr(&t, r, cnode, L->e, "duplicate node "
			    "'%s' (first on line %ld)", csv_str(&t, r, cnode),
			    c->nodes[prev].line);
			csvin_free(&t);
			return rc;
		}
		n->id = xstrdup(csv_str(&t, r, cnode));
		n->site = xstrdup(site);
		n->gpus = (int)csv_num(&t, r, cgpus);
		n->gpu_model = xstrdup(csv_str(&t, r, cmodel));
		n->tflops = csv_num(&t, r, ctflops);
		n->mem_gb = csv_num(&t, r, cmem);
		n->intra_gbps = csv_num(&t, r, cintra);
		n->nic_gbps = csv_num(&t, r, cnic);
		n->mfu = csv_num_or(&t, r, cmfu, -1);
		n->cost_per_hour = csv_num_or(&t, r, ccost, -1);
		n->mem_gbs = csv_num_or(&t, r, cmembw, -1);
		n->line = t.line[r];
		if (csv_has(&t, r, chost)) {
			if (!valid_host(csv_str(&t, r, chost))) {
				rc = csv_cellerr(&t, r, chost, L->e, "'%.80s' "
				    "is not a valid hostname (expected "
				    "letters, digits, '.', '-', '_')",
				    csv_str(&t, r, chost));
				free(n->id);
				free(n->site);
				free(n->gpu_model);
				csvin_free(&t);
				return rc;
			}
			n->host = xstrdup(csv_str(&t, r, chost));
		} else {
			n->host = xstrdup(n->id);
		}
		c->nnodes++;
		for (s = 0; s < c->nsites; s++)
			if (strcmp(c->sites[s], site) == 0)
				break;
		if (s == c->nsites) {
			c->sites = xgrow(c->sites, &scap, s + 1, sizeof(char *));
			c->sites[c->nsites++] = xstrdup(site);
		}
		n->site_idx = (int)s;
		add_vertex(L, n->id, (int)r, (int)s, 0);
	}
	csv_plausible(&t, nodes_limits, &c->warnings);
	csvin_free(&t);
	return DL_OK;
}

static int
load_links(struct ld *L, const char *path)
{
	struct csv_table t;
	size_t cend[2], cgbps, clat, cduplex;
	int rc;

	if ((rc = csvin_read(path, &dl_links_schema, &t, L->e)) != DL_OK)
		return rc;
	cend[0] = csv_colidx(&t, "src");
	cend[1] = csv_colidx(&t, "dst");
	cgbps = csv_colidx(&t, "gbps");
	clat = csv_colidx(&t, "latency_ms");
	cduplex = csv_colidx(&t, "duplex");
	L->dst_col = t.fcol[cend[1]];
	if (t.nrows == 0) {
		dl_seterr(L->e, DL_EDATA, path, t.header_line, 0,
		    "no links (expected at least one row after the header)");
		csvin_free(&t);
		return DL_EDATA;
	}
	for (size_t r = 0; r < t.nrows; r++) {
		int v[2];
		int duplex = (int)csv_num_or(&t, r, cduplex, 1);

		for (int k = 0; k < 2; k++) {
			v[k] = vertex_index(L->vm, csv_str(&t, r, cend[k]));
			if (v[k] < 0)
				v[k] = add_vertex(L, csv_str(&t, r, cend[k]),
				    -1, -1, 0);
		}
		if (v[0] == v[1]) {
			rc = csv_cellerr(&t, r, cend[1], L->e, "link from "
			    "'%s' to itself", csv_str(&t, r, cend[0]));
			csvin_free(&t);
			return rc;
		}
		for (int k = 0; k < 1 + duplex; k++) {
			int a = v[k], b = v[1 - k];

			/* Duplicates are found after the adjacency is built. */
			add_edge(L, a, b, csv_num(&t, r, cgbps),
			    csv_num(&t, r, clat), 0, t.line[r]);
		}
	}
	csv_plausible(&t, links_limits, &L->c->warnings);
	csvin_free(&t);
	return DL_OK;
}

/* Without links.csv: one non-blocking switch per site. */
static int
implicit_links(struct ld *L)
{
	struct dl_cluster *c = L->c;

	if (c->nsites > 1) {
		const struct dl_node *n = &c->nodes[0];
		size_t i;

		for (i = 0; i < c->nnodes; i++)
			if (c->nodes[i].site_idx == 1)
				break;
		return dl_seterr(L->e, DL_EDATA, c->path_nodes,
		    c->nodes[i].line, 0, "cluster spans %zu sites ('%s', "
		    "'%s'%s) but has no links.csv (expected links.csv "
		    "describing the network between sites)", c->nsites,
		    c->sites[n->site_idx], c->sites[1],
		    c->nsites > 2 ? ", ..." : "");
	}
	for (size_t s = 0; s < c->nsites; s++) {
		struct strbuf sb = STRBUF_INIT;
		int sw;

		sb_addf(&sb, "sw.%s", c->sites[s]);
		if (vertex_index(L->vm, sb.buf) >= 0) {
			dl_seterr(L->e, DL_EDATA, c->path_nodes, 0, 0,
			    "node id '%s' clashes with the implicit switch "
			    "of site '%s'", sb.buf, c->sites[s]);
			sb_free(&sb);
			return DL_EDATA;
		}
		sw = add_vertex(L, sb.buf, -1, (int)s, 1);
		sb_free(&sb);
		for (size_t i = 0; i < c->nnodes; i++) {
			if (c->nodes[i].site_idx != (int)s)
				continue;
			add_edge(L, (int)i, sw, c->nodes[i].nic_gbps, 0.005,
			    0, 0);
			add_edge(L, sw, (int)i, c->nodes[i].nic_gbps, 0.005,
			    1, 0);
		}
	}
	return DL_OK;
}

/*
 * Reject a second edge with the same direction: the first such edge in
 * edge order, named with its earlier twin.  Each vertex's out-edges are
 * in edge order; a stamp per destination makes this linear (comparing
 * every pair took minutes for 100,000 links out of one vertex).
 */
static int
reject_twins(struct ld *L)
{
	struct dl_cluster *c = L->c;
	size_t *stamp = xcalloc(c->nverts, sizeof(size_t));
	int *first = xcalloc(c->nverts, sizeof(int));
	int bad = -1, twin = -1;

	for (size_t v = 0; v < c->nverts; v++) {
		for (size_t k = c->out_off[v]; k < c->out_off[v + 1]; k++) {
			int i = c->out_edge[k], d = c->edges[i].dst;

			if (stamp[d] == v + 1) {
				if (bad < 0 || i < bad) {
					bad = i;
					twin = first[d];
				}
				break;
			}
			stamp[d] = v + 1;
			first[d] = i;
		}
	}
	free(stamp);
	free(first);
	if (bad < 0)
		return DL_OK;
	return dl_seterr(L->e, DL_EDATA, c->path_links, c->edges[bad].line,
	    L->dst_col, "link '%s' -> '%s' is given twice (also on line %ld; a duplex "
	    "row adds both directions, use duplex=0 for one)",
	    c->verts[c->edges[bad].src].id, c->verts[c->edges[bad].dst].id,
	    c->edges[twin].line);
}

/* out_off/out_edge (out) or in_off/in_edge of c, in edge order. */
static void
adjacency(const struct dl_cluster *c, int out, size_t **off, int **list)
{
	size_t *fill = xcalloc(c->nverts + 1, sizeof(size_t));

	*off = xcalloc(c->nverts + 1, sizeof(size_t));
	*list = xcalloc(c->nedges + 1, sizeof(int));
	for (size_t i = 0; i < c->nedges; i++)
		(*off)[(out ? c->edges[i].src : c->edges[i].dst) + 1]++;
	for (size_t v = 0; v < c->nverts; v++)
		(*off)[v + 1] += (*off)[v];
	for (size_t i = 0; i < c->nedges; i++) {
		int v = out ? c->edges[i].src : c->edges[i].dst;

		(*list)[(*off)[v] + fill[v]++] = (int)i;
	}
	free(fill);
}

static int
build_adjacency(struct ld *L)
{
	adjacency(L->c, 1, &L->c->out_off, &L->c->out_edge);
	adjacency(L->c, 0, &L->c->in_off, &L->c->in_edge);
	return reject_twins(L);
}

/*
 * Breadth-first hop counts from the n vertices src[] over forward edges
 * (dir 1), reverse edges (-1) or both (0), each vertex's out-edges before
 * its in-edges; -1 where none reaches.  from[] (may be NULL) receives the
 * index in src[] of the source that reached each vertex first, -1 where
 * none did.
 */
static void
bfs_from(const struct dl_cluster *c, const int *src, size_t n, int dir,
    int *dist, int *from, int *queue)
{
	size_t qh = 0, qt = 0;

	for (size_t v = 0; v < c->nverts; v++) {
		dist[v] = -1;
		if (from != NULL)
			from[v] = -1;
	}
	for (size_t i = 0; i < n; i++) {
		dist[src[i]] = 0;
		if (from != NULL)
			from[src[i]] = (int)i;
		queue[qt++] = src[i];
	}
	while (qh < qt) {
		int v = queue[qh++];

		/* rev 0: out-edges, 1: in-edges, as dir allows. */
		for (int rev = dir < 0; rev <= (dir <= 0); rev++) {
			const size_t *off = rev ? c->in_off : c->out_off;
			const int *edge = rev ? c->in_edge : c->out_edge;

			for (size_t k = off[v]; k < off[v + 1]; k++) {
				const struct dl_edge *e = &c->edges[edge[k]];
				int u = rev ? e->src : e->dst;

				if (dist[u] >= 0)
					continue;
				dist[u] = dist[v] + 1;
				if (from != NULL)
					from[u] = from[v];
				queue[qt++] = u;
			}
		}
	}
}

/* Breadth-first hop counts from src (forward or reverse edges). */
static void
bfs(const struct dl_cluster *c, int src, int reverse, int *dist, int *queue)
{
	bfs_from(c, &src, 1, reverse ? -1 : 1, dist, NULL, queue);
}

static int
check_connected(struct ld *L)
{
	struct dl_cluster *c = L->c;
	int *dist = xcalloc(c->nverts, sizeof(int));
	int *queue = xcalloc(c->nverts, sizeof(int));
	int rc = DL_OK;

	for (int rev = 0; rev < 2 && rc == DL_OK; rev++) {
		bfs(c, 0, rev, dist, queue);
		for (size_t i = 0; i < c->nnodes; i++) {
			if (dist[i] >= 0)
				continue;
			rc = dl_seterr(L->e, DL_EDATA, c->path_links ?
			    c->path_links : c->path_nodes, 0, 0,
			    "network does not connect node '%s' %s node '%s' "
			    "(expected a path both ways between all nodes)",
			    c->nodes[i].id, rev ? "to" : "from",
			    c->nodes[0].id);
			break;
		}
	}
	free(dist);
	free(queue);
	return rc;
}

/*
 * Map series k of h (a node id, or "src>dst") to its node or edge; the
 * first unknown name is an error at its first line.  *name is what the
 * duplicate-step message calls the series.
 */
static int
history_target(const struct dl_cluster *c, const struct series_hist *h,
    size_t k, int *idx, const char **name, struct dl_err *e)
{
	const char *id = h->s[k].name;
	char src[64], *dst;
	int a, b;

	if (!h->traffic) {
		if ((*idx = cluster_node(c, id)) < 0)
			return series_hist_err(h, k, "node", e, "unknown node "
			    "'%s' (not in nodes.csv)", id);
		*name = c->nodes[*idx].id;
		return DL_OK;
	}
	/* Ids are at most 63 characters and hold no '>' (csvin checks). */
	snprintf(src, sizeof(src), "%.*s", (int)strcspn(id, ">"), id);
	dst = strchr(id, '>') + 1;
	a = cluster_vertex(c, src);
	b = cluster_vertex(c, dst);
	if (a < 0 || b < 0)
		return series_hist_err(h, k, a < 0 ? "src" : "dst", e,
		    "unknown vertex '%s' (not a node or a links.csv endpoint)",
		    a < 0 ? src : dst);
	if ((*idx = cluster_edge(c, a, b)) < 0)
		return series_hist_err(h, k, "dst", e, "no link '%s' -> '%s' "
		    "in the network", src, dst);
	*name = c->verts[c->edges[*idx].src].id;
	return DL_OK;
}

/* Read a load.csv or traffic.csv into c->load or c->traffic. */
static int
load_history(struct ld *L, const char *path, int traffic)
{
	struct dl_cluster *c = L->c;
	size_t n = traffic ? c->nedges : c->nnodes;
	struct series_hist h;
	struct dl_series *s;
	long **lines;
	const char **names;
	int rc;

	if ((rc = series_hist_read(path, traffic, &h, L->e)) != DL_OK)
		return rc;
	s = xcalloc(n ? n : 1, sizeof(*s));
	lines = xcalloc(n ? n : 1, sizeof(long *));
	names = xcalloc(n ? n : 1, sizeof(char *));
	for (size_t g = 0; g < h.ns && rc == DL_OK; g++) {
		const char *name = NULL;
		int k = 0;

		if ((rc = history_target(c, &h, g, &k, &name, L->e)) != DL_OK)
			break;
		names[k] = name;
		s[k] = h.s[g].s;
		lines[k] = h.s[g].line;
		memset(&h.s[g].s, 0, sizeof(h.s[g].s));
		h.s[g].line = NULL;
	}
	/* Sorted in node or edge order, as the first error is reported. */
	for (size_t k = 0; k < n && rc == DL_OK; k++)
		if (s[k].n > 0)
			rc = series_sort(&s[k], lines[k], path,
			    series_hist_tcol(&h), traffic ?
			    "link from" : "node", names[k], L->e);
	for (size_t k = 0; k < n; k++)
		free(lines[k]);
	free(lines);
	free(names);
	series_hist_free(&h);
	if (rc != DL_OK) {
		for (size_t k = 0; k < n; k++)
			series_free(&s[k]);
		free(s);
		return rc;
	}
	if (traffic) {
		c->traffic = s;
		c->has_traffic = 1;
	} else {
		c->load = s;
		c->has_load = 1;
	}
	return DL_OK;
}

static char *
pick(const char *given, const char *dir, const char *name, int required,
    struct dl_err *e, int *rc)
{
	struct stat st;
	char *p;
	size_t n;

	*rc = DL_OK;
	if (given)
		return xstrdup(given);
	if (dir == NULL)
		return NULL;
	n = strlen(dir) + strlen(name) + 2;
	p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	if (stat(p, &st) == 0)
		return p;
	if (required)
		*rc = dl_seterr(e, DL_EDATA, dir, 0, 0, "no %s in cluster "
		    "directory", name);
	free(p);
	return NULL;
}

int
cluster_load(struct dl_cluster *c, const struct dl_cluster_paths *p,
    struct dl_err *e)
{
	struct ld L;
	struct stat st;
	int rc;

	memset(c, 0, sizeof(*c));
	memset(&L, 0, sizeof(L));
	L.c = c;
	L.e = e;
	if (p->dir && (stat(p->dir, &st) != 0 || !S_ISDIR(st.st_mode)))
		return dl_seterr(e, DL_EDATA, p->dir, 0, 0,
		    "not a cluster directory (expected a directory holding "
		    "nodes.csv)");
	if (p->dir == NULL && p->nodes == NULL)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "no cluster given (expected -c DIR or --nodes FILE)");
	L.vm = xcalloc(1, sizeof(struct kcache));
	c->vindex = L.vm;
	c->path_nodes = pick(p->nodes, p->dir, "nodes.csv", 1, e, &rc);
	if (rc == DL_OK)
		c->path_links = pick(p->links, p->dir, "links.csv", 0, e, &rc);
	if (rc == DL_OK)
		c->path_load = pick(p->load, p->dir, "load.csv", 0, e, &rc);
	if (rc == DL_OK)
		c->path_traffic = pick(p->traffic, p->dir, "traffic.csv", 0, e,
		    &rc);
	if (rc == DL_OK)
		rc = load_nodes(&L, c->path_nodes);
	if (rc == DL_OK) {
		if (c->path_links) {
			c->has_links = 1;
			rc = load_links(&L, c->path_links);
		} else {
			rc = implicit_links(&L);
		}
	}
	if (rc == DL_OK)
		rc = build_adjacency(&L);
	if (rc == DL_OK)
		rc = check_connected(&L);
	if (rc == DL_OK && c->path_load)
		rc = load_history(&L, c->path_load, 0);
	if (rc == DL_OK && c->path_traffic)
		rc = load_history(&L, c->path_traffic, 1);
	if (rc != DL_OK) {
		cluster_free(c);
		return rc;
	}
	return DL_OK;
}

void
cluster_free(struct dl_cluster *c)
{
	notes_free(&c->warnings);
	for (size_t i = 0; i < c->nnodes; i++) {
		free(c->nodes[i].id);
		free(c->nodes[i].site);
		free(c->nodes[i].gpu_model);
		free(c->nodes[i].host);
	}
	for (size_t i = 0; i < c->nsites; i++)
		free(c->sites[i]);
	for (size_t i = 0; i < c->nverts; i++)
		free(c->verts[i].id);
	if (c->load)
		for (size_t i = 0; i < c->nnodes; i++)
			series_free(&c->load[i]);
	if (c->traffic)
		for (size_t i = 0; i < c->nedges; i++)
			series_free(&c->traffic[i]);
	free(c->load);
	free(c->traffic);
	free(c->nodes);
	free(c->sites);
	free(c->verts);
	free(c->edges);
	free(c->out_off);
	free(c->out_edge);
	free(c->in_off);
	free(c->in_edge);
	if (c->vindex) {
		kc_free(c->vindex);
		free(c->vindex);
	}
	free(c->path_nodes);
	free(c->path_links);
	free(c->path_load);
	free(c->path_traffic);
	memset(c, 0, sizeof(*c));
}

int
cluster_node(const struct dl_cluster *c, const char *id)
{
	int v = cluster_vertex(c, id);

	return v >= 0 && (size_t)v < c->nnodes ? v : -1;
}

int
cluster_vertex(const struct dl_cluster *c, const char *id)
{
	return c->vindex ? vertex_index(c->vindex, id) : -1;
}

int
cluster_edge(const struct dl_cluster *c, int src, int dst)
{
	if (c->out_off == NULL)
		return -1;
	for (size_t k = c->out_off[src]; k < c->out_off[src + 1]; k++)
		if (c->edges[c->out_edge[k]].dst == dst)
			return c->out_edge[k];
	return -1;
}

long
cluster_gpus(const struct dl_cluster *c)
{
	long n = 0;

	for (size_t i = 0; i < c->nnodes; i++)
		n += c->nodes[i].gpus;
	return n;
}

double
cluster_tflops(const struct dl_cluster *c)
{
	double s = 0;

	for (size_t i = 0; i < c->nnodes; i++)
		s += c->nodes[i].gpus * c->nodes[i].tflops;
	return s;
}

void
cluster_widest_out(const struct dl_cluster *c, double *out)
{
	for (size_t v = 0; v < c->nverts; v++) {
		int n = c->verts[v].node;

		if (n < 0)
			continue;
		for (size_t i = c->out_off[v]; i < c->out_off[v + 1]; i++)
			out[n] = fmax(out[n], c->edges[c->out_edge[i]].gbps);
	}
}

void
cluster_site_labels(const struct dl_cluster *c, int *label)
{
	int *src = xcalloc(c->nnodes + 1, sizeof(int));
	int *dist = xcalloc(c->nverts + 1, sizeof(int));
	int *queue = xcalloc(c->nverts + 1, sizeof(int));

	for (size_t n = 0; n < c->nnodes; n++)
		src[n] = (int)n;
	bfs_from(c, src, c->nnodes, 0, dist, label, queue);
	for (size_t v = 0; v < c->nverts; v++)
		if (label[v] >= 0)
			label[v] = c->nodes[label[v]].site_idx;
	free(src);
	free(dist);
	free(queue);
}

/* Nodes' neighbour lists (for twin_cmp): out-neighbours sorted, -1, in. */
struct twin {
	int *key;
	size_t len;
};

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_twin(const void *a, const void *b)
{
	const struct twin *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	for (size_t i = 0; i < x->len; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return 0;
}

/*
 * Largest hop count between two nodes.  A breadth-first search from
 * every node is O(nodes * links): hours for 100,000 nodes on one switch.
 * Nodes with the same out- and in-neighbours (twins: every node of a
 * site on its implicit switch) need one search for all of them: for
 * twins a and r and any x other than both, dist(a, x) = 1 + min over
 * the shared out-neighbours n of dist(n, x) = dist(r, x), and likewise
 * dist(a, r) = dist(r, a) (links never loop, so twins are not adjacent).
 */
int
cluster_diameter(const struct dl_cluster *c)
{
	int *dist = xcalloc(c->nverts, sizeof(int));
	int *queue = xcalloc(c->nverts, sizeof(int));
	struct twin *tw = xcalloc(c->nnodes + 1, sizeof(*tw));
	int d = 0;

	for (size_t i = 0; i < c->nnodes; i++) {
		size_t no = c->out_off[i + 1] - c->out_off[i];
		size_t ni = c->in_off[i + 1] - c->in_off[i];
		int *k = xcalloc(no + ni + 2, sizeof(int));

		/* The node itself last: the sort keeps it with its key. */
		for (size_t j = 0; j < no; j++)
			k[j] = c->edges[c->out_edge[c->out_off[i] + j]].dst;
		qsort(k, no, sizeof(int), cmp_int);
		k[no] = -1;
		for (size_t j = 0; j < ni; j++)
			k[no + 1 + j] = c->edges[c->in_edge[c->in_off[i] + j]].src;
		qsort(k + no + 1, ni, sizeof(int), cmp_int);
		k[no + ni + 1] = (int)i;
		tw[i].key = k;
		tw[i].len = no + ni + 1;
	}
	qsort(tw, c->nnodes, sizeof(*tw), cmp_twin);
	for (size_t i = 0; i < c->nnodes; i++) {
		if (i > 0 && cmp_twin(&tw[i], &tw[i - 1]) == 0)
			continue;
		bfs(c, tw[i].key[tw[i].len], 0, dist, queue);
		for (size_t j = 0; j < c->nnodes; j++)
			if (dist[j] > d)
				d = dist[j];
	}
	for (size_t i = 0; i < c->nnodes; i++)
		free(tw[i].key);
	free(tw);
	free(dist);
	free(queue);
	return d;
}

/*
 * Whether a GPU model has no bf16 arithmetic (Volta and older: V100,
 * P100, P40, P4, T4 is Turing, K80, M40, M60): such GPUs train fp16
 * with loss scaling.
 */
int
cluster_gpu_fp16(const char *gpu_model)
{
	static const char *const old[] = { "V100", "P100", "P40", "P4-",
	    "T4", "K80", "K40", "M40", "M60", "TITAN V", "GTX" };

	if (gpu_model == NULL)
		return 0;
	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++)
		if (strstr(gpu_model, old[i]) != NULL)
			return 1;
	return strcmp(gpu_model, "P4") == 0;
}

/*
 * Sub-clusters.
 */

static void
copy_series(struct dl_series *dst, const struct dl_series *src)
{
	dst->n = src->n;
	dst->t = xcalloc(src->n + 1, sizeof(long));
	dst->v = xcalloc(src->n + 1, sizeof(double));
	/* A series without history (two-dc's links without traffic) has
	 * t = v = NULL: memcpy(, NULL, 0) is undefined (UBSan stops plan
	 * --budget on two-dc). */
	if (src->n == 0)
		return;
	memcpy(dst->t, src->t, src->n * sizeof(long));
	memcpy(dst->v, src->v, src->n * sizeof(double));
}

void
cluster_sub(struct dl_cluster *sub, const struct dl_cluster *c,
    const unsigned char *keep, int *vmap)
{
	int *newidx = xcalloc(c->nverts + 1, sizeof(int));
	size_t k = 0, nv = 0;

	memset(sub, 0, sizeof(*sub));
	for (size_t i = 0; i < c->nnodes; i++)
		k += keep[i] != 0;
	sub->nnodes = k;
	sub->nodes = xcalloc(k + 1, sizeof(*sub->nodes));
	if (c->load)
		sub->load = xcalloc(k + 1, sizeof(*sub->load));
	for (size_t i = 0, j = 0; i < c->nnodes; i++) {
		struct dl_node *d = &sub->nodes[j];

		if (!keep[i])
			continue;
		*d = c->nodes[i];
		d->id = xstrdup(c->nodes[i].id);
		d->site = xstrdup(c->nodes[i].site);
		d->gpu_model = xstrdup_or_null(c->nodes[i].gpu_model);
		d->host = xstrdup_or_null(c->nodes[i].host);
		if (c->load)
			copy_series(&sub->load[j], &c->load[i]);
		j++;
	}
	sub->nsites = c->nsites;
	sub->sites = xcalloc(c->nsites + 1, sizeof(char *));
	for (size_t i = 0; i < c->nsites; i++)
		sub->sites[i] = xstrdup(c->sites[i]);

	/* Kept nodes first, then every other vertex in c's order. */
	sub->nverts = c->nverts;
	sub->verts = xcalloc(c->nverts + 1, sizeof(*sub->verts));
	for (size_t i = 0; i < c->nnodes; i++)
		if (keep[i])
			vmap[nv] = (int)i, newidx[i] = (int)nv++;
	for (size_t v = 0; v < c->nverts; v++)
		if (v >= c->nnodes || !keep[v])
			vmap[nv] = (int)v, newidx[v] = (int)nv++;
	for (size_t v = 0; v < nv; v++) {
		struct dl_vertex *d = &sub->verts[v];

		*d = c->verts[vmap[v]];
		d->id = xstrdup(d->id);
		if (v < k) {
			d->node = (int)v;
		} else if (d->node >= 0) {
			/* A node left out only relays traffic. */
			d->node = -1;
			d->site = -1;
		}
	}
	sub->nedges = c->nedges;
	sub->edges = xcalloc(c->nedges + 1, sizeof(*sub->edges));
	for (size_t i = 0; i < c->nedges; i++) {
		sub->edges[i] = c->edges[i];
		sub->edges[i].src = newidx[c->edges[i].src];
		sub->edges[i].dst = newidx[c->edges[i].dst];
	}
	adjacency(sub, 1, &sub->out_off, &sub->out_edge);
	adjacency(sub, 0, &sub->in_off, &sub->in_edge);
	if (c->traffic) {
		sub->traffic = xcalloc(c->nedges + 1, sizeof(*sub->traffic));
		for (size_t i = 0; i < c->nedges; i++)
			copy_series(&sub->traffic[i], &c->traffic[i]);
	}
	sub->has_links = c->has_links;
	sub->has_load = c->has_load;
	sub->has_traffic = c->has_traffic;
	sub->path_nodes = xstrdup_or_null(c->path_nodes);
	sub->path_links = xstrdup_or_null(c->path_links);
	sub->path_load = xstrdup_or_null(c->path_load);
	sub->path_traffic = xstrdup_or_null(c->path_traffic);
	free(newidx);
}
