// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce status [IF] [--json]: where xroce runs in this network namespace
 * and what its program holds.  Per interface: program id and mode.  Per
 * program (shared by all the interfaces it is attached to): config,
 * counters summed over CPUs, domains, memory regions and connections.
 * Everything is found through the interfaces (user/util/bpfmaps.c), so it
 * works whoever attached the program.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfmaps.h"
#include "cli.h"
#include "cmds.h"
#include "domview.h"
#include "ifflags.h"
#include "jsonw.h"
#include "planeinfo.h"
#include "statnames.h"
#include "xdpif.h"
#include "xrcfg.h"
#include "contract/abi.h"

#define CMD "status"
/* Text output lists this many connections per program; --json all. */
#define TEXT_MAX_CONNS 64
#define MAX_DOMVIEWS 256

struct prog_view {
	uint32_t prog_id;
	char name[64];
	struct xr_maps m;
	struct xr_cfg cfg;
	uint64_t stats[XR_STAT_MAX];
	uint32_t ndomains;
	uint32_t nmrs;
	uint32_t *conn_ids;      /* sorted */
	size_t nconns;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: xroce status [IF] [--json]\n"
"\n"
"Show every interface of this network namespace that runs xroce (or just\n"
"IF): program id and mode, driver, RX queues, MTU and transmit engine (of\n"
"each process using it, and what a new process would choose); and for each\n"
"xroce program: data port, flags, counters (summed over CPUs), domains,\n"
"memory regions and connections.\n"
"\n"
"  -j, --json  machine-readable output\n"
"  -h, --help  this help\n");
}

/* ---- reading a program's maps ----------------------------------------- */

static int count_keys(int fd, uint32_t *n)
{
	__u32 key, next;
	void *prev = NULL;

	*n = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		(*n)++;
	}
	return errno == ENOENT ? 0 : -errno;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int read_conn_ids(int fd, uint32_t **ids, size_t *n)
{
	__u32 key, next;
	void *prev = NULL;
	uint32_t *v = NULL, *t;
	size_t cap = 0, k = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (k == cap) {
			cap = cap ? 2 * cap : 64;
			t = realloc(v, cap * sizeof(*v));
			if (!t) {
				free(v);
				return -ENOMEM;
			}
			v = t;
		}
		v[k++] = next;
		key = next;
		prev = &key;
	}
	if (errno != ENOENT) {
		free(v);
		return -errno;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_u32);
	*ids = v;
	*n = k;
	return 0;
}

static int read_stats(int fd, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint64_t *percpu;
	__u32 k;
	int rc = 0;

	if (ncpu < 0)
		return ncpu;
	percpu = calloc((size_t)ncpu, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	for (k = 0; k < XR_STAT_MAX; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, percpu)) {
			/* An object built before this counter existed. */
			if (errno == ENOENT)
				continue;
			rc = -errno;
			break;
		}
		for (i = 0; i < ncpu; i++)
			out[k] += percpu[i];
	}
	free(percpu);
	return rc;
}

static void view_free(struct prog_view *v)
{
	xr_maps_close(&v->m);
	free(v->conn_ids);
	v->conn_ids = NULL;
}

static int view_load(uint32_t prog_id, struct prog_view *v)
{
	int rc;

	memset(v, 0, sizeof(*v));
	v->prog_id = prog_id;
	rc = xr_maps_open_prog(prog_id, &v->m);
	if (rc) {
		xr_err(CMD, rc, "cannot open the maps of xroce program %u",
		       prog_id);
		return rc;
	}
	if (xr_prog_describe(prog_id, v->name, sizeof(v->name), NULL))
		snprintf(v->name, sizeof(v->name), "?");
	rc = xr_cfg_read(v->m.cfg, &v->cfg);
	if (!rc)
		rc = read_stats(v->m.stats, v->stats);
	if (!rc)
		rc = count_keys(v->m.domains, &v->ndomains);
	if (!rc)
		rc = count_keys(v->m.mrs, &v->nmrs);
	if (!rc)
		rc = read_conn_ids(v->m.conns, &v->conn_ids, &v->nconns);
	if (rc) {
		xr_err(CMD, rc, "cannot read the maps of xroce program %u",
		       prog_id);
		view_free(v);
	}
	return rc;
}

/* Peer address i of c as text. */
static void peer_str(const struct xr_conn *c, unsigned int i, char *buf,
		     size_t len)
{
	if (c->family == 4) {
		if (!inet_ntop(AF_INET, &c->peer_addr[i][12], buf, (socklen_t)len))
			snprintf(buf, len, "?");
	} else {
		if (!inet_ntop(AF_INET6, c->peer_addr[i], buf, (socklen_t)len))
			snprintf(buf, len, "?");
	}
}

static const char *state_str(uint32_t state, char *buf, size_t len)
{
	const char *n = xr_conn_state_name(state);

	if (n)
		return n;
	snprintf(buf, len, "state_%u", state);
	return buf;
}

static unsigned int npeers(const struct xr_conn *c)
{
	return c->npeer < XR_MAX_PLANES ? c->npeer : XR_MAX_PLANES;
}

/* ---- text output ------------------------------------------------------- */

static void text_iface(const struct xr_ifxdp *i, const struct prog_view *v,
		       const struct xr_domview *dv, int ndv)
{
	struct xr_planeinfo pi;
	char cfg[256];
	uint32_t k;

	xr_cfg_str(&v->cfg, cfg, sizeof(cfg));
	printf("%s: xroce prog %u", i->name, i->xroce_id);
	if (i->prog_id != i->xroce_id)
		printf(" inside libxdp dispatcher %u", i->prog_id);
	printf(", %s mode, %s\n", xr_xdp_mode_name(i->mode), cfg);
	if (xr_planeinfo_get(i, v->m.txq >= 0, dv, ndv, &pi))
		return;
	printf("  driver %s, %u RX queue%s, MTU %d, transmit engine %s",
	       pi.nic.driver[0] ? pi.nic.driver : "?", pi.rx_queues,
	       pi.rx_queues == 1 ? "" : "s", pi.mtu, xr_planeinfo_engine(&pi));
	for (k = 0; k < pi.nusers; k++)
		printf("%s%s pid %u", k ? ", " : " (", xr_telem_engine_name(pi.users[k].engine),
		       pi.users[k].pid);
	printf("%s; a new process: %s\n", pi.nusers ? ")" : "", pi.engine_default);
	if (!xr_ifflags_get(i->xroce_id, i->ifindex, &k) && (k & XR_IF_CSUM_PARTIAL))
		printf("  partially checksummed frames pass the checksum check\n");
}

static void text_conns(const struct prog_view *v)
{
	size_t k;

	if (!v->nconns)
		return;
	printf("  connections:\n    %-8s %-7s %-7s %-6s %-9s %-13s %s\n", "id",
	       "state", "domain", "pd", "peer_conn", "peer_sports", "peer addresses");
	for (k = 0; k < v->nconns && k < TEXT_MAX_CONNS; k++) {
		struct xr_conn c;
		char st[16], addr[INET6_ADDRSTRLEN], sports[16];
		unsigned int i;

		if (bpf_map_lookup_elem(v->m.conns, &v->conn_ids[k], &c))
			continue; /* closed while we read */
		snprintf(sports, sizeof(sports), "%u+%u", c.peer_sport_lo,
			 c.peer_sport_n);
		printf("    %-8u %-7s %-7u %-6u %-9u %-13s ", v->conn_ids[k],
		       state_str(c.state, st, sizeof(st)), c.domain, c.pd,
		       c.peer_conn, sports);
		for (i = 0; i < npeers(&c); i++) {
			peer_str(&c, i, addr, sizeof(addr));
			printf("%s%s", i ? "," : "", addr);
		}
		printf("%s\n", npeers(&c) ? "" : "-");
	}
	if (v->nconns > TEXT_MAX_CONNS)
		printf("    ... and %zu more (--json lists all)\n",
		       v->nconns - TEXT_MAX_CONNS);
}

static void text_prog(const struct prog_view *v, const struct xr_ifxdp *all,
		      size_t n)
{
	char cfg[256];
	unsigned int k, half = (XR_STAT_MAX + 1) / 2;
	size_t i;

	xr_cfg_str(&v->cfg, cfg, sizeof(cfg));
	printf("\nprog %u '%s' on", v->prog_id, v->name);
	for (i = 0; i < n; i++)
		if (all[i].xroce_id == v->prog_id)
			printf(" %s", all[i].name);
	printf("\n  %s\n", cfg);
	if (v->cfg.rate_capacity_mbps)
		printf("  rate capacity %u Mbit/s, active window %u us\n",
		       v->cfg.rate_capacity_mbps, v->cfg.active_window_us);
	printf("  domains %u/%u, memory regions %u/%u, connections %zu/%u\n",
	       v->ndomains, v->m.max_domains, v->nmrs, v->m.max_mrs,
	       v->nconns, v->m.max_conns);
	printf("  counters (all CPUs):\n");
	/* Two columns, the first half of the enum on the left. */
	for (k = 0; k < half; k++) {
		printf("    %-16s %14" PRIu64, xr_stat_name(k), v->stats[k]);
		if (k + half < XR_STAT_MAX)
			printf("    %-16s %14" PRIu64, xr_stat_name(k + half),
			       v->stats[k + half]);
		printf("\n");
	}
	text_conns(v);
}

/* ---- JSON output ------------------------------------------------------- */

static void json_iface(struct xr_jw *w, const struct xr_ifxdp *i,
		       const struct prog_view *v, const struct xr_domview *dv,
		       int ndv)
{
	struct xr_planeinfo pi;
	uint32_t k;

	xr_jw_obj_open(w, NULL);
	xr_jw_str(w, "name", i->name);
	xr_jw_u64(w, "ifindex", (uint64_t)i->ifindex);
	xr_jw_u64(w, "prog_id", i->xroce_id);
	xr_jw_str(w, "mode", xr_xdp_mode_name(i->mode));
	xr_jw_u64(w, "attached_prog_id", i->prog_id);
	xr_jw_bool(w, "in_dispatcher", i->prog_id != i->xroce_id);
	if (v && !xr_planeinfo_get(i, v->m.txq >= 0, dv, ndv, &pi)) {
		xr_jw_str(w, "driver", pi.nic.driver);
		xr_jw_u64(w, "rx_queues", pi.rx_queues);
		if (pi.nic.has_channels) {
			xr_jw_obj_open(w, "channels");
			xr_jw_u64(w, "combined", pi.nic.combined);
			xr_jw_u64(w, "max_combined", pi.nic.max_combined);
			xr_jw_u64(w, "rx", pi.nic.rx);
			xr_jw_u64(w, "tx", pi.nic.tx);
			xr_jw_obj_close(w);
		}
		xr_jw_u64(w, "mtu", (uint64_t)pi.mtu);
		xr_jw_str(w, "tx_engine", xr_planeinfo_engine(&pi));
		xr_jw_str(w, "tx_engine_default", pi.engine_default);
		if (xr_ifflags_get(i->xroce_id, i->ifindex, &k))
			k = 0;
		xr_jw_bool(w, "csum_partial_ok", (k & XR_IF_CSUM_PARTIAL) != 0);
		xr_jw_arr_open(w, "tx_users");
		for (k = 0; k < pi.nusers; k++) {
			xr_jw_obj_open(w, NULL);
			xr_jw_u64(w, "pid", pi.users[k].pid);
			xr_jw_str(w, "tx_engine", xr_telem_engine_name(pi.users[k].engine));
			xr_jw_obj_close(w);
		}
		xr_jw_arr_close(w);
	}
	xr_jw_obj_close(w);
}

static void json_conn(struct xr_jw *w, uint32_t id, const struct xr_conn *c)
{
	char st[16], addr[INET6_ADDRSTRLEN];
	unsigned int i;

	xr_jw_obj_open(w, NULL);
	xr_jw_u64(w, "id", id);
	xr_jw_str(w, "state", state_str(c->state, st, sizeof(st)));
	xr_jw_u64(w, "domain", c->domain);
	xr_jw_u64(w, "pd", c->pd);
	xr_jw_u64(w, "peer_conn", c->peer_conn);
	xr_jw_u64(w, "family", c->family);
	xr_jw_arr_open(w, "peer_addrs");
	for (i = 0; i < npeers(c); i++) {
		peer_str(c, i, addr, sizeof(addr));
		xr_jw_str(w, NULL, addr);
	}
	xr_jw_arr_close(w);
	xr_jw_u64(w, "peer_sport_lo", c->peer_sport_lo);
	xr_jw_u64(w, "peer_sport_n", c->peer_sport_n);
	xr_jw_u64(w, "flags", c->flags);
	xr_jw_obj_close(w);
}

static uint32_t map_id(int fd)
{
	struct bpf_map_info mi;
	uint32_t len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.id;
}

/* Map ids, for bpftool and debugging. */
static void json_maps(struct xr_jw *w, const struct xr_maps *m)
{
	xr_jw_obj_open(w, "map_ids");
	xr_jw_u64(w, XR_MAP_CFG, map_id(m->cfg));
	xr_jw_u64(w, XR_MAP_DOMAINS, map_id(m->domains));
	xr_jw_u64(w, XR_MAP_MEM, map_id(m->mem));
	xr_jw_u64(w, XR_MAP_EVQ, map_id(m->evq));
	xr_jw_u64(w, XR_MAP_MRS, map_id(m->mrs));
	xr_jw_u64(w, XR_MAP_CONNS, map_id(m->conns));
	xr_jw_u64(w, XR_MAP_RX, map_id(m->rx));
	xr_jw_u64(w, XR_MAP_MSGS, map_id(m->msgs));
	xr_jw_u64(w, XR_MAP_STATS, map_id(m->stats));
	xr_jw_obj_close(w);
}

static void json_prog(struct xr_jw *w, const struct prog_view *v,
		      const struct xr_ifxdp *all, size_t n)
{
	unsigned int k, bit;
	size_t i;

	xr_jw_obj_open(w, NULL);
	xr_jw_u64(w, "prog_id", v->prog_id);
	xr_jw_str(w, "name", v->name);
	xr_jw_arr_open(w, "interfaces");
	for (i = 0; i < n; i++)
		if (all[i].xroce_id == v->prog_id)
			xr_jw_str(w, NULL, all[i].name);
	xr_jw_arr_close(w);

	xr_jw_obj_open(w, "config");
	xr_jw_bool(w, "port_set", v->cfg.udp_port != 0);
	xr_jw_u64(w, "udp_port", v->cfg.udp_port);
	xr_jw_u64(w, "flags_raw", v->cfg.flags);
	xr_jw_arr_open(w, "flags");
	for (bit = 0; bit < 16; bit++)
		if (v->cfg.flags & (1u << bit) && xr_cfg_flag_name(bit))
			xr_jw_str(w, NULL, xr_cfg_flag_name(bit));
	xr_jw_arr_close(w);
	xr_jw_u64(w, "rate_capacity_mbps", v->cfg.rate_capacity_mbps);
	xr_jw_u64(w, "active_window_us", v->cfg.active_window_us);
	xr_jw_obj_close(w);

	json_maps(w, &v->m);

	xr_jw_obj_open(w, "limits");
	xr_jw_u64(w, "max_conns", v->m.max_conns);
	xr_jw_u64(w, "max_domains", v->m.max_domains);
	xr_jw_u64(w, "max_mrs", v->m.max_mrs);
	xr_jw_obj_close(w);

	xr_jw_obj_open(w, "stats");
	for (k = 0; k < XR_STAT_MAX; k++)
		xr_jw_u64(w, xr_stat_name(k), v->stats[k]);
	xr_jw_obj_close(w);

	xr_jw_u64(w, "domains", v->ndomains);
	xr_jw_u64(w, "mrs", v->nmrs);
	xr_jw_arr_open(w, "connections");
	for (i = 0; i < v->nconns; i++) {
		struct xr_conn c;

		if (!bpf_map_lookup_elem(v->m.conns, &v->conn_ids[i], &c))
			json_conn(w, v->conn_ids[i], &c);
	}
	xr_jw_arr_close(w);
	xr_jw_obj_close(w);
}

/* ---- the command ------------------------------------------------------- */

/* Ids of the xroce programs of the selected interfaces, each once. */
static size_t unique_progs(const struct xr_ifxdp *sel, size_t n, uint32_t *ids)
{
	size_t i, j, k = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < k && ids[j] != sel[i].xroce_id; j++)
			;
		if (j == k)
			ids[k++] = sel[i].xroce_id;
	}
	return k;
}

/* What the command found: the interfaces, the selected ones (running
 * xroce), and a view of each of their programs. */
struct status {
	struct xr_ifxdp *all, *sel;
	size_t n, nsel;
	struct prog_view *views;
	size_t nviews;
	struct xr_domview *dv;   /* the processes using xroce here */
	int ndv;
};

/* [IF] [--json]: XR_CONTINUE, or an exit status. */
static int parse(int argc, char **argv, const char **ifname, bool *json)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*ifname = NULL;
	*json = false;
	while ((c = getopt_long(argc, argv, ":jh", lopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			*json = true;
			break;
		case 'h':
			usage(stdout);
			return XR_EXIT_OK;
		default:
			return xr_opt_err(CMD, c, argv);
		}
	}
	if (optind + 1 < argc)
		return xr_usage_err(CMD, "at most one interface ('%s' is extra)",
				    argv[optind + 1]);
	if (optind < argc)
		*ifname = argv[optind];
	return XR_CONTINUE;
}

/* IF runs no xroce: say what it runs instead. */
static void not_attached(const char *ifname, const struct xr_ifxdp *i)
{
	char name[64];

	if (!i->prog_id) {
		xr_err(CMD, 0, "%s: xroce is not attached (no XDP program)", ifname);
		return;
	}
	if (xr_prog_describe(i->prog_id, name, sizeof(name), NULL))
		snprintf(name, sizeof(name), "?");
	xr_err(CMD, 0, "%s: xroce is not attached (XDP program '%s', prog %u, is)",
	       ifname, name, i->prog_id);
}

/* List the interfaces and select those running xroce (ifindex: only that
 * one, which must).  0, or -1 after a message. */
static int select_ifaces(struct status *st, const char *ifname, int ifindex)
{
	size_t i;
	int rc;

	rc = xr_ifxdp_list(&st->all, &st->n);
	if (rc) {
		xr_err(CMD, rc, "cannot query the interfaces of this namespace");
		return -1;
	}
	st->sel = calloc(st->n ? st->n : 1, sizeof(*st->sel));
	if (!st->sel) {
		xr_err(CMD, -ENOMEM, "out of memory");
		return -1;
	}
	for (i = 0; i < st->n; i++) {
		if (ifindex && st->all[i].ifindex != ifindex)
			continue;
		if (ifindex && !st->all[i].xroce_id) {
			not_attached(ifname, &st->all[i]);
			return -1;
		}
		if (st->all[i].xroce_id)
			st->sel[st->nsel++] = st->all[i];
	}
	if (ifindex && !st->nsel) {
		xr_err(CMD, 0, "%s: interface vanished", ifname);
		return -1;
	}
	return 0;
}

/* A view of each program of the selected interfaces.  0, or -1 after a
 * message. */
static int load_views(struct status *st)
{
	uint32_t *ids = calloc(st->nsel ? st->nsel : 1, sizeof(*ids));
	size_t nprog;
	int rc = -1;

	if (!ids) {
		xr_err(CMD, -ENOMEM, "out of memory");
		return -1;
	}
	nprog = unique_progs(st->sel, st->nsel, ids);
	st->views = calloc(nprog ? nprog : 1, sizeof(*st->views));
	if (!st->views) {
		xr_err(CMD, -ENOMEM, "out of memory");
		goto out;
	}
	for (st->nviews = 0; st->nviews < nprog; st->nviews++)
		if (view_load(ids[st->nviews], &st->views[st->nviews]))
			goto out;
	rc = 0;
out:
	free(ids);
	return rc;
}

static const struct prog_view *view_of(const struct status *st, uint32_t prog_id)
{
	size_t j;

	for (j = 0; j < st->nviews; j++)
		if (st->views[j].prog_id == prog_id)
			return &st->views[j];
	return NULL;
}

/* The telemetry pages of the processes using the selected interfaces
 * (their transmit engines); none is no error. */
static void load_domviews(struct status *st, const char *ifname)
{
	st->dv = calloc(MAX_DOMVIEWS, sizeof(*st->dv));
	if (st->dv && st->nsel &&
	    xr_domviews_open(ifname, st->dv, MAX_DOMVIEWS, &st->ndv))
		st->ndv = 0;
}

static void print_json(const struct status *st)
{
	struct xr_jw w;
	size_t i;

	xr_jw_init(&w, stdout);
	xr_jw_obj_open(&w, NULL);
	xr_jw_arr_open(&w, "interfaces");
	for (i = 0; i < st->nsel; i++)
		json_iface(&w, &st->sel[i], view_of(st, st->sel[i].xroce_id),
			   st->dv, st->ndv);
	xr_jw_arr_close(&w);
	xr_jw_arr_open(&w, "programs");
	for (i = 0; i < st->nviews; i++)
		json_prog(&w, &st->views[i], st->all, st->n);
	xr_jw_arr_close(&w);
	xr_jw_obj_close(&w);
	xr_jw_finish(&w);
}

static void print_text(const struct status *st)
{
	size_t i, j;

	if (!st->nsel) {
		printf("xroce is not attached to any interface in this network namespace\n");
		return;
	}
	for (i = 0; i < st->nsel; i++)
		for (j = 0; j < st->nviews; j++)
			if (st->views[j].prog_id == st->sel[i].xroce_id)
				text_iface(&st->sel[i], &st->views[j], st->dv, st->ndv);
	for (j = 0; j < st->nviews; j++)
		text_prog(&st->views[j], st->all, st->n);
}

int cmd_status(int argc, char **argv)
{
	struct status st = { 0 };
	const char *ifname;
	bool json;
	int rc, ifindex = 0;
	size_t j;

	rc = parse(argc, argv, &ifname, &json);
	if (rc != XR_CONTINUE)
		return rc;
	if (ifname) {
		ifindex = xr_ifindex(ifname);
		if (ifindex < 0)
			return xr_err(CMD, 0, "%s: no such interface in this network namespace",
				      ifname);
	}
	rc = XR_EXIT_FAIL;
	if (!select_ifaces(&st, ifname, ifindex) && !load_views(&st)) {
		load_domviews(&st, ifname);
		if (json)
			print_json(&st);
		else
			print_text(&st);
		rc = XR_EXIT_OK;
	}
	for (j = 0; st.views && j < st.nviews; j++)
		view_free(&st.views[j]);
	free(st.views);
	if (st.dv)
		xr_domviews_close(st.dv, st.ndv);
	free(st.dv);
	free(st.sel);
	free(st.all);
	return rc;
}
