/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * xrfabric: attach the fabric emulator (bpf/fabric.bpf.c) to the ports of a
 * switch namespace, set its impairments at run time and read its counters.
 *
 *   xrfabric attach --netns NS --port IF [--to IF2] [--tc]
 *   xrfabric attach --netns NS --host-pass IF
 *   xrfabric detach --netns NS --port IF [--tc] | --host-pass IF
 *   xrfabric set    --netns NS --port IF [--tc] key=value ...
 *   xrfabric show   --netns NS [--port IF] [--json]
 *   xrfabric reset  --netns NS [--port IF] [--tc]       (counters to zero)
 *
 * --port without --tc means the XDP (ingress) side of IF, with --tc its TC
 * egress side.  All ports of one namespace share one set of maps: attach
 * finds the maps of a fabric program already attached in the namespace and
 * loads the new program on top of them.  Maps are always found through the
 * programs attached to interfaces (XDP query / TC query -> program id -> map
 * ids -> names), never through pins, so nothing needs cleaning up but the
 * namespace itself.  Errors: a message on stderr and exit status 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fabric.skel.h"
#include "lib/fabric_maps.h"
#include "fab_kv.h"

#define FAB_TC_HANDLE 0xfab
#define FAB_TC_PRIO 1
#define FAB_PROG_PREFIX "fabric_"
#define FAB_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-@"

_Static_assert(sizeof(struct fab_port) == 14 * 4, "fab_port layout");
_Static_assert(sizeof(struct fab_stats) == 8 * 8, "fab_stats layout");

struct fab_opts {
	const char *netns, *port, *to, *host_pass;
	int tc, json, verbose;
	char **words; /* key=value settings */
	int nwords;
};

struct fab_maps {
	int ports, state, stats; /* fds, -1 when not open */
	int cpus;                /* only held by fabric_xdp: may stay -1 */
};

static int libbpf_quiet; /* while probing, libbpf's warnings are expected */
static int libbpf_verbose;

static int fab_libbpf_print(enum libbpf_print_level lvl, const char *fmt,
			    va_list ap)
{
	if (lvl == LIBBPF_DEBUG && !libbpf_verbose)
		return 0;
	if (libbpf_quiet && !libbpf_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Print "xrfabric: msg: strerror" and return rc (a negative errno). */
static int fab_err(int rc, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xrfabric: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(-rc));
	return rc;
}

static int fab_enter_netns(const char *name)
{
	char path[256];
	int fd, rc = 0;

	if (!name || !*name || strlen(name) > 200 ||
	    strspn(name, FAB_NAME_CHARS) != strlen(name) || name[0] == '.')
		return fab_err(-EINVAL, "bad or missing --netns '%s'", name ? name : "");
	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fab_err(-errno, "open %s", path);
	if (setns(fd, CLONE_NEWNET))
		rc = fab_err(-errno, "setns %s", path);
	close(fd);
	return rc;
}

static int fab_ifindex(const char *name, int *ifindex)
{
	if (!name || !*name || strlen(name) >= IF_NAMESIZE)
		return fab_err(-EINVAL, "bad interface name '%s'", name ? name : "");
	*ifindex = (int)if_nametoindex(name);
	if (!*ifindex)
		return fab_err(-ENODEV, "no interface %s in this namespace", name);
	return 0;
}

/* The interface's name, with odd characters replaced so that text and
 * JSON output stay well-formed. */
static const char *fab_ifname(__u32 ifindex, char *buf)
{
	size_t i;

	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	for (i = 0; buf[i]; i++)
		if (!strchr(FAB_NAME_CHARS, buf[i]))
			buf[i] = '?';
	return buf;
}

static void fab_maps_close(struct fab_maps *m)
{
	if (m->ports >= 0)
		close(m->ports);
	if (m->state >= 0)
		close(m->state);
	if (m->stats >= 0)
		close(m->stats);
	if (m->cpus >= 0)
		close(m->cpus);
	m->ports = m->state = m->stats = m->cpus = -1;
}

/* The fabric maps used by program prog_id.  Returns 0 when the program is a
 * fabric program holding all three maps, -ENOENT otherwise. */
static int fab_maps_of_prog(__u32 prog_id, struct fab_maps *m)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[16], nr, i;
	int fd, rc = -ENOENT;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    strncmp(info.name, FAB_PROG_PREFIX, strlen(FAB_PROG_PREFIX)) != 0 ||
	    info.nr_map_ids == 0 || info.nr_map_ids > 16)
		goto out;
	nr = info.nr_map_ids;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = nr;
	info.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		goto out;
	for (i = 0; i < nr && i < info.nr_map_ids; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int mfd = bpf_map_get_fd_by_id(ids[i]), *slot = NULL;

		if (mfd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(mfd, &mi, &mlen)) {
			if (!strcmp(mi.name, FAB_MAP_PORTS))
				slot = &m->ports;
			else if (!strcmp(mi.name, FAB_MAP_STATE))
				slot = &m->state;
			else if (!strcmp(mi.name, FAB_MAP_STATS))
				slot = &m->stats;
			else if (!strcmp(mi.name, FAB_MAP_CPUS))
				slot = &m->cpus;
		}
		if (slot && *slot < 0)
			*slot = mfd;
		else
			close(mfd);
	}
	if (m->ports >= 0 && m->state >= 0 && m->stats >= 0)
		rc = 0;
	else
		fab_maps_close(m);
out:
	close(fd);
	return rc;
}

static __u32 fab_tc_prog_id(int ifindex, enum bpf_tc_attach_point where)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = where);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = FAB_TC_HANDLE,
			    .priority = FAB_TC_PRIO);

	return bpf_tc_query(&hook, &opts) ? 0 : opts.prog_id;
}

/* The maps through the programs attached to ifindex (XDP, TC egress, TC
 * ingress), or through any interface of the namespace when ifindex is 0. */
static int fab_maps_find(int ifindex, struct fab_maps *m)
{
	struct if_nameindex *ifs = NULL, one[2] = { { (unsigned)ifindex, NULL }, { 0, NULL } };
	int rc = -ENOENT, k;

	m->ports = m->state = m->stats = m->cpus = -1;
	if (!ifindex) {
		ifs = if_nameindex();
		if (!ifs)
			return -errno;
	}
	libbpf_quiet = 1;
	for (struct if_nameindex *it = ifs ? ifs : one; it->if_index && rc; it++) {
		__u32 ids[3] = { 0 };

		bpf_xdp_query_id(it->if_index, 0, &ids[0]);
		ids[1] = fab_tc_prog_id(it->if_index, BPF_TC_EGRESS);
		ids[2] = fab_tc_prog_id(it->if_index, BPF_TC_INGRESS);
		for (k = 0; k < 3 && rc; k++)
			if (ids[k])
				rc = fab_maps_of_prog(ids[k], m);
	}
	libbpf_quiet = 0;
	if (ifs)
		if_freenameindex(ifs);
	return rc;
}

static int fab_xdp_attach(int ifindex, int prog_fd, const char *ifname)
{
	int rc = bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE, NULL);

	if (rc) {
		/* Not a veth/native-XDP device: generic XDP still impairs,
		 * but redirected frames then take the skb path. */
		rc = bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_SKB_MODE, NULL);
		if (!rc)
			fprintf(stderr, "xrfabric: %s: native XDP refused, using generic XDP\n",
				ifname);
	}
	return rc ? fab_err(rc, "attach XDP to %s", ifname) : 0;
}

static int fab_tc_attach(int ifindex, enum bpf_tc_attach_point where,
			 int prog_fd, const char *ifname)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = where);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = FAB_TC_HANDLE,
			    .priority = FAB_TC_PRIO, .prog_fd = prog_fd,
			    .flags = BPF_TC_F_REPLACE);
	int rc;

	libbpf_quiet = 1; /* EEXIST is the normal case */
	rc = bpf_tc_hook_create(&hook);
	libbpf_quiet = 0;
	if (rc && rc != -EEXIST)
		return fab_err(rc, "create clsact on %s", ifname);
	rc = bpf_tc_attach(&hook, &opts);
	return rc ? fab_err(rc, "attach TC program to %s", ifname) : 0;
}

/* Remove our filter only: the clsact qdisc may carry other programs. */
static void fab_tc_detach(int ifindex, enum bpf_tc_attach_point where)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = where);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = FAB_TC_HANDLE,
			    .priority = FAB_TC_PRIO);

	libbpf_quiet = 1;
	bpf_tc_detach(&hook, &opts);
	libbpf_quiet = 0;
}

/* Give every CPU a slow-lane queue (a kthread each; filling again replaces
 * them).  CPUs that cannot take one only lose their slow lane: fabric_xdp
 * falls back to XDP_PASS. */
static void fab_cpus_fill(int cpus_fd)
{
	struct bpf_cpumap_val val = { .qsize = 1024 };
	int ncpu = libbpf_num_possible_cpus();

	for (__u32 cpu = 0; ncpu > 0 && cpu < (__u32)ncpu; cpu++)
		bpf_map_update_elem(cpus_fd, &cpu, &val, BPF_ANY);
}

/* Zero the port's run-time state and counters. */
static int fab_port_reset(const struct fab_maps *m, const struct fab_key *key)
{
	int ncpu = libbpf_num_possible_cpus();
	struct fab_state zero_state = {};
	struct fab_stats *zero;
	int rc;

	if (ncpu < 0)
		return ncpu;
	zero = calloc(ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	rc = bpf_map_update_elem(m->stats, key, zero, BPF_ANY);
	free(zero);
	if (!rc)
		rc = bpf_map_update_elem(m->state, key, &zero_state, BPF_ANY);
	return rc ? -errno : 0;
}

/* Create or rewire the port's config; impairments already set are kept. */
static int fab_port_wire(const struct fab_maps *m, const struct fab_key *key,
			 __u32 out_ifindex)
{
	struct fab_port cfg = {};

	if (bpf_map_lookup_elem(m->ports, key, &cfg))
		memset(&cfg, 0, sizeof(cfg));
	cfg.out_ifindex = out_ifindex;
	if (!out_ifindex)
		cfg.reorder_ppm = 0; /* no slow lane without a wire */
	if (bpf_map_update_elem(m->ports, key, &cfg, BPF_ANY))
		return -errno;
	return fab_port_reset(m, key);
}

/* Open and load the programs.  With share, on top of the maps of a fabric
 * program already attached in the namespace (so all ports of a switch see
 * one config), and m receives the maps in use either way. */
static struct fabric *fab_load(int share, struct fab_maps *m)
{
	struct fabric *skel = fabric__open();
	int rc;

	if (!skel) {
		fab_err(-errno, "open BPF skeleton");
		return NULL;
	}
	if (share && !fab_maps_find(0, m) &&
	    (bpf_map__reuse_fd(skel->maps.fab_ports, m->ports) ||
	     bpf_map__reuse_fd(skel->maps.fab_state, m->state) ||
	     bpf_map__reuse_fd(skel->maps.fab_stats, m->stats) ||
	     (m->cpus >= 0 && bpf_map__reuse_fd(skel->maps.fab_cpus, m->cpus)))) {
		fab_err(-errno, "reuse the namespace's fabric maps");
		goto fail;
	}
	if (m->cpus < 0 &&
	    bpf_map__set_max_entries(skel->maps.fab_cpus, libbpf_num_possible_cpus())) {
		fab_err(-EINVAL, "size the slow-lane cpumap");
		goto fail;
	}
	rc = fabric__load(skel);
	if (rc) {
		fab_err(rc, "load BPF programs");
		goto fail;
	}
	if (m->ports < 0) {
		m->ports = dup(bpf_map__fd(skel->maps.fab_ports));
		m->state = dup(bpf_map__fd(skel->maps.fab_state));
		m->stats = dup(bpf_map__fd(skel->maps.fab_stats));
	}
	if (m->cpus < 0)
		m->cpus = dup(bpf_map__fd(skel->maps.fab_cpus));
	return skel;
fail:
	fab_maps_close(m);
	fabric__destroy(skel);
	return NULL;
}

static int cmd_attach(const struct fab_opts *o)
{
	struct fab_maps m = { -1, -1, -1, -1 };
	const char *ifname = o->host_pass ? o->host_pass : o->port;
	int ifindex = 0, out = 0, rc;
	struct fab_key key;
	struct fabric *skel;

	if (!!o->host_pass == !!o->port)
		return fab_err(-EINVAL, "attach needs exactly one of --port, --host-pass");
	if (o->to && (o->tc || o->host_pass))
		return fab_err(-EINVAL, "--to goes with an XDP --port only");
	rc = fab_ifindex(ifname, &ifindex);
	if (!rc && o->to)
		rc = fab_ifindex(o->to, &out);
	if (rc)
		return rc;
	if (out == ifindex)
		return fab_err(-EINVAL, "--to %s is the port itself", o->to);

	skel = fab_load(!o->host_pass, &m);
	if (!skel)
		return -EINVAL;
	if (o->host_pass) {
		rc = fab_xdp_attach(ifindex, bpf_program__fd(skel->progs.fabric_pass),
				    ifname);
		goto out;
	}
	key.ifindex = ifindex;
	key.dir = o->tc ? FAB_DIR_EGRESS : FAB_DIR_INGRESS;
	rc = fab_port_wire(&m, &key, out);
	if (rc) {
		rc = fab_err(rc, "write the config of %s", ifname);
		goto out;
	}
	if (o->tc) {
		rc = fab_tc_attach(ifindex, BPF_TC_EGRESS,
				   bpf_program__fd(skel->progs.fabric_tc), ifname);
		goto out;
	}
	if (out) /* only wire ports have a slow lane: no idle kthreads else */
		fab_cpus_fill(m.cpus);
	rc = fab_xdp_attach(ifindex, bpf_program__fd(skel->progs.fabric_xdp), ifname);
	if (!rc && out)
		rc = fab_tc_attach(ifindex, BPF_TC_INGRESS,
				   bpf_program__fd(skel->progs.fabric_slow), ifname);
	else if (!rc)
		fab_tc_detach(ifindex, BPF_TC_INGRESS);
out:
	fab_maps_close(&m);
	fabric__destroy(skel); /* attached programs stay */
	return rc;
}

static int cmd_detach(const struct fab_opts *o)
{
	struct fab_maps m;
	int ifindex = 0, rc;
	const char *ifname = o->host_pass ? o->host_pass : o->port;

	if (!!o->host_pass == !!o->port)
		return fab_err(-EINVAL, "detach needs exactly one of --port, --host-pass");
	rc = fab_ifindex(ifname, &ifindex);
	if (rc)
		return rc;
	rc = fab_maps_find(ifindex, &m);
	if (o->tc) {
		fab_tc_detach(ifindex, BPF_TC_EGRESS);
	} else {
		bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
		bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL);
		fab_tc_detach(ifindex, BPF_TC_INGRESS);
	}
	if (!rc) {
		struct fab_key key = { .ifindex = ifindex,
				       .dir = o->tc ? FAB_DIR_EGRESS : FAB_DIR_INGRESS };

		bpf_map_delete_elem(m.ports, &key);
		bpf_map_delete_elem(m.state, &key);
		bpf_map_delete_elem(m.stats, &key);
		fab_maps_close(&m);
	}
	return 0;
}

static int cmd_set(const struct fab_opts *o)
{
	struct fab_port cfg;
	struct fab_maps m;
	char err[160];
	int ifindex = 0, rc, i;

	if (!o->port || !o->nwords)
		return fab_err(-EINVAL, "set needs --port and at least one key=value");
	rc = fab_ifindex(o->port, &ifindex);
	if (rc)
		return rc;
	rc = fab_maps_find(ifindex, &m);
	if (rc)
		return fab_err(rc, "no fabric program attached to %s", o->port);

	struct fab_key key = { .ifindex = ifindex,
			       .dir = o->tc ? FAB_DIR_EGRESS : FAB_DIR_INGRESS };

	if (bpf_map_lookup_elem(m.ports, &key, &cfg)) {
		rc = fab_err(-ENOENT, "%s has no %s port (attach%s first)", o->port,
			     o->tc ? "TC egress" : "XDP ingress", o->tc ? " --tc" : "");
		goto out;
	}
	for (i = 0; i < o->nwords; i++) {
		rc = fab_kv_apply(&cfg, o->words[i], err, sizeof(err));
		if (rc) {
			fprintf(stderr, "xrfabric: %s\n", err);
			goto out;
		}
	}
	if (cfg.reorder_ppm && !cfg.out_ifindex) {
		rc = fab_err(-EINVAL, "reorder needs a wire port (attach --to)");
		goto out;
	}
	if (bpf_map_update_elem(m.ports, &key, &cfg, BPF_EXIST))
		rc = fab_err(-errno, "update the config of %s", o->port);
out:
	fab_maps_close(&m);
	return rc;
}

/* Sum a port's per-CPU counters into c[FAB_NR_COUNTERS]. */
static int fab_counters(int stats_fd, const struct fab_key *key, __u64 *c)
{
	int ncpu = libbpf_num_possible_cpus(), cpu, i, rc = 0;
	struct fab_stats *per;

	memset(c, 0, FAB_NR_COUNTERS * sizeof(*c));
	if (ncpu < 0)
		return ncpu;
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(stats_fd, key, per))
		rc = -errno; /* no traffic yet: all zero */
	for (cpu = 0; !rc && cpu < ncpu; cpu++)
		for (i = 0; i < (int)FAB_NR_COUNTERS; i++)
			c[i] += ((__u64 *)&per[cpu])[i];
	free(per);
	return rc == -ENOENT ? 0 : rc;
}

static const char *const fab_counter_names[FAB_NR_COUNTERS] = {
	"rx", "fwd", "drop_loss", "drop_ge", "blackholed", "ce_marked",
	"corrupted", "reordered",
};

static int fab_key_cmp(const void *a, const void *b)
{
	const struct fab_key *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	return (int)x->dir - (int)y->dir;
}

static void fab_print_port(const struct fab_opts *o, const struct fab_maps *m,
			   const struct fab_key *key, int first)
{
	char name[IF_NAMESIZE], to[IF_NAMESIZE], words[512];
	struct fab_state st = {};
	struct fab_port cfg;
	__u64 c[FAB_NR_COUNTERS];
	const char *mode;
	int i;

	if (bpf_map_lookup_elem(m->ports, key, &cfg))
		return; /* detached meanwhile */
	bpf_map_lookup_elem(m->state, key, &st);
	fab_counters(m->stats, key, c);
	fab_kv_format(&cfg, words, sizeof(words));
	fab_ifname(key->ifindex, name);
	mode = cfg.out_ifindex ? "wire" : "routed";
	if (cfg.out_ifindex)
		fab_ifname(cfg.out_ifindex, to);

	if (!o->json) {
		printf("%s %s %s%s%s: %s\n  vq_bytes %llu ge_state %s\n ", name,
		       key->dir == FAB_DIR_EGRESS ? "egress(tc)" : "ingress(xdp)",
		       mode, cfg.out_ifindex ? " -> " : "",
		       cfg.out_ifindex ? to : "", words,
		       (unsigned long long)st.vq_bits / 8, st.ge_bad ? "bad" : "good");
		for (i = 0; i < (int)FAB_NR_COUNTERS; i++)
			printf(" %s %llu", fab_counter_names[i], (unsigned long long)c[i]);
		printf("\n");
		return;
	}
	printf("%s\n  {\"port\": \"%s\", \"ifindex\": %u, \"dir\": \"%s\", "
	       "\"mode\": \"%s\", \"to\": \"%s\", \"settings\": \"%s\",\n"
	       "   \"config\": {\"loss\": %g, \"ge_on\": %u, \"ge\": [%g, %g, %g, %g], "
	       "\"blackhole\": %u, \"blackhole_port\": %u, \"ecn_rate_mbps\": %u, "
	       "\"ecn_thresh_bytes\": %u, \"ecn_sport\": %u, \"corrupt\": %g, "
	       "\"reorder\": %g},\n   \"state\": {\"vq_bytes\": %llu, \"ge_bad\": %u},\n"
	       "   \"counters\": {",
	       first ? "" : ",", name, key->ifindex,
	       key->dir == FAB_DIR_EGRESS ? "egress" : "ingress", mode,
	       cfg.out_ifindex ? to : "", words, fab_prob(cfg.loss_ppm), cfg.ge_on,
	       fab_prob(cfg.ge_gb_ppm), fab_prob(cfg.ge_bg_ppm),
	       fab_prob(cfg.ge_loss_good_ppm), fab_prob(cfg.ge_loss_bad_ppm),
	       cfg.bh_mode, cfg.bh_port, cfg.ecn_rate_mbps, cfg.ecn_thresh_bytes,
	       cfg.ecn_sport, fab_prob(cfg.corrupt_ppm), fab_prob(cfg.reorder_ppm),
	       (unsigned long long)st.vq_bits / 8, st.ge_bad);
	for (i = 0; i < (int)FAB_NR_COUNTERS; i++)
		printf("%s\"%s\": %llu", i ? ", " : "", fab_counter_names[i],
		       (unsigned long long)c[i]);
	printf("}}");
}

/* show and reset: every port of the namespace, or both sides of --port
 * (reset: only the side --tc selects). */
static int cmd_show_reset(const struct fab_opts *o, int reset)
{
	struct fab_key keys[FAB_MAX_PORTS], k, *prev = NULL;
	int ifindex = 0, rc, n = 0, i;
	struct fab_maps m;

	if (o->port && (rc = fab_ifindex(o->port, &ifindex)))
		return rc;
	rc = fab_maps_find(ifindex, &m);
	if (rc)
		return fab_err(rc, "no fabric program attached %s%s", o->port ? "to " : "in --netns ",
			       o->port ? o->port : o->netns);
	while (n < FAB_MAX_PORTS && !bpf_map_get_next_key(m.ports, prev, &k)) {
		keys[n] = k;
		prev = &keys[n];
		if (!ifindex || k.ifindex == (__u32)ifindex)
			n++;
	}
	qsort(keys, n, sizeof(keys[0]), fab_key_cmp);
	if (o->json && !reset)
		printf("{\"netns\": \"%s\", \"ports\": [", o->netns);
	for (i = 0; i < n; i++) {
		if (!reset)
			fab_print_port(o, &m, &keys[i], i == 0);
		else if (!ifindex || keys[i].dir == (o->tc ? FAB_DIR_EGRESS : FAB_DIR_INGRESS))
			if ((rc = fab_port_reset(&m, &keys[i])))
				break;
	}
	if (o->json && !reset)
		printf("\n]}\n");
	fab_maps_close(&m);
	return rc ? fab_err(rc, "reset counters") : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: xrfabric attach --netns NS --port IF [--to IF2] [--tc]\n"
		"       xrfabric attach --netns NS --host-pass IF\n"
		"       xrfabric detach --netns NS (--port IF [--tc] | --host-pass IF)\n"
		"       xrfabric set    --netns NS --port IF [--tc] key=value ...\n"
		"       xrfabric show   --netns NS [--port IF] [--json]\n"
		"       xrfabric reset  --netns NS [--port IF [--tc]]\n"
		"settings: loss=P  ge=PGB,PBG,LOSSGOOD,LOSSBAD|off\n"
		"          blackhole=all|off|sport:N|dport:N  ecn=RATE_MBPS,THRESH_BYTES|off\n"
		"          ecn-sport=N|off  corrupt=P  reorder=P (wire ports)  clear\n"
		"--port IF is the XDP (ingress) side of IF, with --tc its TC egress side;\n"
		"--to IF2 makes IF a wire port redirecting to IF2.  P: probability 0..1\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "netns", required_argument, NULL, 'n' },
		{ "port", required_argument, NULL, 'p' },
		{ "to", required_argument, NULL, 't' },
		{ "host-pass", required_argument, NULL, 'H' },
		{ "tc", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fab_opts o = {};
	const char *cmd;
	int c, rc;

	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2;
	}
	cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "n:p:t:H:cjvh", lopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.netns = optarg; break;
		case 'p': o.port = optarg; break;
		case 't': o.to = optarg; break;
		case 'H': o.host_pass = optarg; break;
		case 'c': o.tc = 1; break;
		case 'j': o.json = 1; break;
		case 'v': o.verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	o.words = argv + optind;
	o.nwords = argc - optind;
	libbpf_verbose = o.verbose;
	libbpf_set_print(fab_libbpf_print);

	if (strcmp(cmd, "set") != 0 && o.nwords) {
		fab_err(-EINVAL, "unexpected argument '%s'", o.words[0]);
		return 1;
	}
	rc = fab_enter_netns(o.netns);
	if (rc)
		return 1;
	if (!strcmp(cmd, "attach"))
		rc = cmd_attach(&o);
	else if (!strcmp(cmd, "detach"))
		rc = cmd_detach(&o);
	else if (!strcmp(cmd, "set"))
		rc = cmd_set(&o);
	else if (!strcmp(cmd, "show"))
		rc = cmd_show_reset(&o, 0);
	else if (!strcmp(cmd, "reset"))
		rc = cmd_show_reset(&o, 1);
	else
		rc = fab_err(-EINVAL, "unknown command '%s'", cmd);
	return rc ? 1 : 0;
}
