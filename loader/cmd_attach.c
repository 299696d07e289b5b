// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce attach IF: put xroce's XDP program on an interface and configure
 * it (map xr_cfg).
 *
 *  - IF already runs xroce (however it got there: xroce, ip link,
 *    xdp-loader): configure that program in place.
 *  - Another interface of this network namespace runs xroce: attach THAT
 *    program to IF too, so every plane of the host shares one set of maps
 *    (connections, memory, rings).  --separate loads a new object instead.
 *  - Otherwise load a fresh object from the embedded skeleton.
 *
 * Nothing is pinned: the interface's attachment keeps the program and its
 * maps alive, and user/util/bpfmaps.c finds them again through the interface.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfmaps.h"
#include "cli.h"
#include "cmds.h"
#include "ifflags.h"
#include "nativeprep.h"
#include "xdpif.h"
#include "xrcfg.h"
#include "xroce.skel.h"
#include "contract/abi.h"

#define CMD "attach"
/* xr_msgs has max_conns * XR_MSG_SLOTS entries: keep that below 2^32. */
#define MAX_CONNS_LIMIT (1u << 22)

struct attach_opts {
	const char *ifname;
	uint32_t mode;           /* 0 = auto, XDP_FLAGS_DRV_MODE, _SKB_MODE */
	uint32_t port;           /* 0 = not given */
	int csum;                /* -1 not given, 0 --no-csum, 1 --csum */
	uint32_t max_conns;      /* 0 = not given */
	int64_t rate_mbps;       /* -1 = not given; 0 = no rate hints */
	int64_t active_us;       /* -1 = not given */
	bool force;
	bool separate;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: xroce attach IF [--mode auto|native|generic] [--port N] [--no-csum]\n"
"                       [--max-conns N] [--rate-capacity MBPS] [--separate]\n"
"                       [--force]\n"
"\n"
"Attach xroce's XDP program to interface IF, or configure the one already\n"
"there (also when it was attached by 'ip link' or 'xdp-loader').  When\n"
"another interface of this network namespace runs xroce, IF gets that same\n"
"program, so all planes share connections and memory.\n"
"\n"
"Before a native attach, LRO and hardware GRO are switched off, and on\n"
"virtio_net the combined channels may be lowered so that XDP transmission\n"
"has a queue on every CPU; each change is said.\n"
"\n"
"  -m, --mode M       auto (default: native, else generic), native, generic\n"
"  -p, --port N       UDP port of xroce data (default %u; kept if already set)\n"
"      --no-csum      do not verify UDP checksums of received data\n"
"      --csum         verify them (default for a new program)\n"
"  -c, --max-conns N  connections the maps hold (default %u; new object only)\n"
"      --separate     load a new object even if another interface runs xroce\n"
"      --rate-capacity MBPS  inbound capacity shared among senders: every ACK\n"
"                     carries MBPS / active senders as a rate hint (0 = off)\n"
"      --active-window US  a sender counts as active this long (default 50000)\n"
"  -f, --force        replace another XDP program attached to IF\n"
"  -h, --help         this help\n"
"\n"
"The port and checksum setting live in the program: changing them on one\n"
"plane changes them on all planes that share it.\n",
		(unsigned int)XR_DEFAULT_UDP_PORT,
		(unsigned int)XR_DEFAULT_MAX_CONNS);
}

enum { OPT_NO_CSUM = 256, OPT_CSUM, OPT_SEPARATE, OPT_RATE, OPT_ACTIVE };

/* --mode M: 0 (auto), XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE. */
static int parse_mode(const char *arg, uint32_t *mode)
{
	if (!strcmp(arg, "auto"))
		*mode = 0;
	else if (!strcmp(arg, "native") || !strcmp(arg, "drv"))
		*mode = XDP_FLAGS_DRV_MODE;
	else if (!strcmp(arg, "generic") || !strcmp(arg, "skb"))
		*mode = XDP_FLAGS_SKB_MODE;
	else
		return xr_usage_err(CMD, "--mode must be auto, native or generic, not '%s'",
				    arg);
	return XR_CONTINUE;
}

/* Apply option c with value arg: XR_CONTINUE, an exit status, or
 * XR_NOT_MINE. */
static int parse_opt(int c, const char *arg, struct attach_opts *o)
{
	uint32_t v;

	switch (c) {
	case 'm':
		return parse_mode(arg, &o->mode);
	case 'p':
		if (xr_parse_u32(arg, 1, 65535, &o->port))
			return xr_usage_err(CMD, "--port must be 1..65535, not '%s'", arg);
		return XR_CONTINUE;
	case OPT_NO_CSUM:
	case OPT_CSUM:
		o->csum = c == OPT_CSUM;
		return XR_CONTINUE;
	case 'c':
		if (xr_parse_u32(arg, 1, MAX_CONNS_LIMIT, &o->max_conns))
			return xr_usage_err(CMD, "--max-conns must be 1..%u, not '%s'",
					    MAX_CONNS_LIMIT, arg);
		return XR_CONTINUE;
	case OPT_SEPARATE:
		o->separate = true;
		return XR_CONTINUE;
	case OPT_RATE:
		if (xr_parse_u32(arg, 0, 10000000, &v))
			return xr_usage_err(CMD, "--rate-capacity is Mbit/s, 0..10000000");
		o->rate_mbps = v;
		return XR_CONTINUE;
	case OPT_ACTIVE:
		if (xr_parse_u32(arg, 1, 10000000, &v))
			return xr_usage_err(CMD, "--active-window is microseconds");
		o->active_us = v;
		return XR_CONTINUE;
	case 'f':
		o->force = true;
		return XR_CONTINUE;
	}
	return XR_NOT_MINE;
}

static int parse(int argc, char **argv, struct attach_opts *o)
{
	static const struct option lopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "port", required_argument, NULL, 'p' },
		{ "no-csum", no_argument, NULL, OPT_NO_CSUM },
		{ "csum", no_argument, NULL, OPT_CSUM },
		{ "max-conns", required_argument, NULL, 'c' },
		{ "separate", no_argument, NULL, OPT_SEPARATE },
		{ "rate-capacity", required_argument, NULL, OPT_RATE },
		{ "active-window", required_argument, NULL, OPT_ACTIVE },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->csum = -1;
	o->rate_mbps = -1;
	o->active_us = -1;
	while ((c = getopt_long(argc, argv, ":m:p:c:fh", lopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return XR_EXIT_OK;
		}
		rc = parse_opt(c, optarg, o);
		if (rc == XR_NOT_MINE)
			return xr_opt_err(CMD, c, argv);
		if (rc != XR_CONTINUE)
			return rc;
	}
	if (optind >= argc)
		return xr_usage_err(CMD, "which interface?");
	if (optind + 1 < argc)
		return xr_usage_err(CMD, "one interface at a time ('%s' is extra)",
				    argv[optind + 1]);
	o->ifname = argv[optind];
	return XR_CONTINUE;
}

/* Apply the options to c.  A program nobody configured yet (port 0, e.g.
 * loaded by ip link) gets the defaults for what was not given; a
 * configured one changes only what was given, so adding a plane never
 * resets a port chosen earlier.  True if c changed. */
static bool cfg_apply(struct xr_cfg *c, const struct attach_opts *o)
{
	struct xr_cfg old = *c;
	bool fresh = !c->udp_port;

	if (o->port)
		c->udp_port = (__u16)o->port;
	else if (fresh)
		c->udp_port = XR_DEFAULT_UDP_PORT;
	if (o->csum == 0)
		c->flags &= (__u16)~XR_CFG_VERIFY_CSUM;
	else if (o->csum == 1 || fresh)
		c->flags |= XR_CFG_VERIFY_CSUM;
	if (o->rate_mbps >= 0)
		c->rate_capacity_mbps = (__u32)o->rate_mbps;
	if (o->active_us >= 0)
		c->active_window_us = (__u32)o->active_us;
	return memcmp(&old, c, sizeof(old)) != 0;
}

/* Configure the running program prog_id.  *changed says whether xr_cfg
 * changes (is written, unless dry_run); before/after describe it. */
static int configure(uint32_t prog_id, const struct attach_opts *o,
		     bool dry_run, bool *changed, char *before, char *after,
		     size_t len)
{
	struct xr_maps m;
	struct xr_cfg c;
	int rc;

	*changed = false;
	rc = xr_maps_open_prog(prog_id, &m);
	if (rc) {
		xr_err(CMD, rc, "cannot open the maps of xroce program %u", prog_id);
		return rc;
	}
	if (o->max_conns && o->max_conns != m.max_conns) {
		rc = -EINVAL;
		xr_err(CMD, 0, "xroce program %u holds %u connections; --max-conns %u needs a new object (detach it everywhere first, or --separate)",
		       prog_id, m.max_conns, o->max_conns);
		goto cleanup;
	}
	rc = xr_cfg_read(m.cfg, &c);
	if (rc) {
		xr_err(CMD, rc, "cannot read the config of program %u", prog_id);
		goto cleanup;
	}
	xr_cfg_str(&c, before, len);
	*changed = cfg_apply(&c, o);
	if (*changed && !dry_run) {
		rc = xr_cfg_write(m.cfg, &c);
		if (rc) {
			xr_err(CMD, rc, "cannot write the config of program %u", prog_id);
			goto cleanup;
		}
	}
	xr_cfg_str(&c, after, len);
cleanup:
	xr_maps_close(&m);
	return rc;
}

/* Record IF's per-interface flags for mode (ifflags.h) and say what they
 * mean.  An object without the flags map needs none. */
static int record_flags(const char *ifname, uint32_t prog_id, int ifindex,
			uint32_t mode)
{
	int rc = xr_ifflags_update(prog_id, ifindex, mode);

	if (rc == -ENOENT)
		return 0;
	if (rc) {
		xr_err(CMD, rc, "%s: cannot record its flags in prog %u", ifname,
		       prog_id);
		return rc;
	}
	if (mode == XDP_FLAGS_SKB_MODE)
		printf("%s: generic mode: frames this host or its hypervisor left "
		       "partially checksummed pass the checksum check\n", ifname);
	return 0;
}

/* IF already runs xroce: configure it, do not touch the attachment. */
static int attach_existing(const struct attach_opts *o,
			   const struct xr_ifxdp *cur)
{
	char before[256], after[256], where[64] = "";
	bool changed;
	int rc;

	if (o->mode && o->mode != cur->mode)
		return xr_err(CMD, 0, "%s: xroce (prog %u) is attached in %s mode; 'xroce detach %s' first to attach it in %s mode",
			      o->ifname, cur->xroce_id,
			      xr_xdp_mode_name(cur->mode), o->ifname,
			      xr_xdp_mode_name(o->mode));
	rc = configure(cur->xroce_id, o, false, &changed, before, after,
		       sizeof(before));
	if (rc)
		return XR_EXIT_FAIL;
	if (cur->prog_id != cur->xroce_id)
		snprintf(where, sizeof(where), " inside libxdp dispatcher %u",
			 cur->prog_id);
	printf("%s: xroce already attached: prog %u%s, %s mode, %s\n",
	       o->ifname, cur->xroce_id, where, xr_xdp_mode_name(cur->mode),
	       after);
	if (changed)
		printf("%s: config of prog %u changed (was: %s)\n", o->ifname,
		       cur->xroce_id, before);
	if (record_flags(o->ifname, cur->xroce_id, cur->ifindex, cur->mode))
		return XR_EXIT_FAIL;
	return XR_EXIT_OK;
}

/* Another interface of the namespace running xroce as a plain XDP program
 * (one inside a libxdp dispatcher is an freplace program and cannot be
 * attached elsewhere).  0 and *found filled, or -ENOENT. */
static int find_plane(int ifindex, struct xr_ifxdp *found)
{
	struct xr_ifxdp *all = NULL;
	size_t n = 0, i;
	uint32_t first = 0;
	int rc;

	rc = xr_ifxdp_list(&all, &n);
	if (rc)
		return rc;
	rc = -ENOENT;
	for (i = 0; i < n; i++) {
		uint32_t type = 0;

		if (all[i].ifindex == ifindex || !all[i].xroce_id)
			continue;
		if (xr_prog_describe(all[i].xroce_id, NULL, 0, &type) ||
		    type != BPF_PROG_TYPE_XDP) {
			xr_note(CMD, "%s runs xroce inside a libxdp dispatcher: its program cannot be shared",
				all[i].name);
			continue;
		}
		if (!first) {
			first = all[i].xroce_id;
			*found = all[i];
			rc = 0;
		} else if (all[i].xroce_id != first) {
			xr_note(CMD, "several xroce programs run in this namespace; sharing prog %u of %s",
				first, found->name);
			break;
		}
	}
	free(all);
	return rc;
}

/* A new object from the embedded skeleton, sized and configured. */
static int load_new(const struct attach_opts *o, struct xroce **out)
{
	struct xroce *skel;
	struct xr_cfg c;
	int rc;

	*out = NULL;
	skel = xroce__open();
	if (!skel) {
		rc = -errno;
		xr_err(CMD, rc, "cannot open the embedded BPF object");
		return rc;
	}
	if (o->max_conns) {
		rc = bpf_map__set_max_entries(skel->maps.xr_conns, o->max_conns);
		if (!rc)
			rc = bpf_map__set_max_entries(skel->maps.xr_rx, o->max_conns);
		if (!rc)
			rc = bpf_map__set_max_entries(skel->maps.xr_evb, o->max_conns);
		if (!rc)
			rc = bpf_map__set_max_entries(skel->maps.xr_msgs,
						      o->max_conns * XR_MSG_SLOTS);
		if (rc) {
			xr_err(CMD, rc, "cannot size the maps for %u connections",
			       o->max_conns);
			goto cleanup;
		}
	}
	rc = xroce__load(skel);
	if (rc) {
		xr_err(CMD, rc, "cannot load the BPF program (run 'xroce -v attach ...' for libbpf's log)");
		goto cleanup;
	}
	/* Configured before it is attached: it never sees traffic with an
	 * unset port. */
	memset(&c, 0, sizeof(c));
	cfg_apply(&c, o);
	rc = xr_cfg_write(bpf_map__fd(skel->maps.xr_cfg), &c);
	if (rc) {
		xr_err(CMD, rc, "cannot write the config");
		goto cleanup;
	}
	*out = skel;
	skel = NULL;
cleanup:
	xroce__destroy(skel);
	return rc;
}

/* Native mode, after what the NIC needs for it (nativeprep.h), undone if
 * the driver refuses the program after all.  A native program already on
 * IF (being replaced) means the driver's queues are laid out for XDP. */
static int attach_native(const struct attach_opts *o, int ifindex, int prog_fd,
			 struct xr_ifxdp *cur)
{
	struct xr_prep prep;
	bool prepared = false;
	int rc;

	if (!(cur->prog_id && cur->mode == XDP_FLAGS_DRV_MODE)) {
		rc = xr_native_prepare(o->ifname, &prep);
		if (rc)
			return rc;
		prepared = true;
	}
	xr_cli_kmsg_clear();
	rc = xr_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE, cur);
	if (rc && prepared)
		xr_native_undo(o->ifname, &prep);
	else if (!rc)
		xr_native_attached(o->ifname);
	return rc;
}

/* Attach in the mode asked for; auto tries native, then generic. */
static int attach_prog(const struct attach_opts *o, int ifindex, int prog_fd,
		       struct xr_ifxdp *cur, uint32_t *mode)
{
	int rc;

	*mode = o->mode ? o->mode : XDP_FLAGS_DRV_MODE;
	if (*mode == XDP_FLAGS_DRV_MODE) {
		rc = attach_native(o, ifindex, prog_fd, cur);
	} else {
		xr_cli_kmsg_clear();
		rc = xr_xdp_attach(ifindex, prog_fd, *mode, cur);
	}
	if (!rc || o->mode)
		return rc;
	/* Busy/exists means someone attached a program meanwhile; a
	 * permission error will not go away in generic mode either. */
	if (rc == -EBUSY || rc == -EEXIST || rc == -EPERM || rc == -EACCES)
		return rc;
	xr_note(CMD, "%s: native XDP refused (%s%s%s); falling back to generic (SKB) mode",
		o->ifname, strerror(-rc), xr_cli_kmsg() ? ": " : "",
		xr_cli_kmsg() ? xr_cli_kmsg() : "");
	*mode = XDP_FLAGS_SKB_MODE;
	xr_cli_kmsg_clear();
	return xr_xdp_attach(ifindex, prog_fd, *mode, cur);
}

/* The program IF gets: the one another plane runs, or a new object. */
struct attach_plan {
	uint32_t prog_id;
	int prog_fd;
	struct xroce *skel;      /* the new object, or NULL */
	struct xr_ifxdp plane;   /* the plane shared, when have_plane */
	bool have_plane;
	bool changed;            /* the shared program's config changes */
	char cfgs[256];          /* its config, in words */
	char before[256];        /* and before the change */
	char shared[128];        /* " (shared with IF: ...)" or "" */
};

/* Share the program of p->plane: check the options against it now, write
 * them once IF is attached, so a failed attach leaves the other planes as
 * they were.  0, or -1 after a message. */
static int share_plane(const struct attach_opts *o, struct attach_plan *p)
{
	p->prog_id = p->plane.xroce_id;
	if (configure(p->prog_id, o, true, &p->changed, p->before, p->cfgs,
		      sizeof(p->cfgs)))
		return -1;
	p->prog_fd = bpf_prog_get_fd_by_id(p->prog_id);
	if (p->prog_fd < 0) {
		xr_err(CMD, -errno, "cannot open xroce program %u of %s",
		       p->prog_id, p->plane.name);
		return -1;
	}
	snprintf(p->shared, sizeof(p->shared),
		 " (shared with %s: all planes use the same maps)", p->plane.name);
	return 0;
}

/* Load a new object, configured.  0, or -1 after a message. */
static int load_fresh(const struct attach_opts *o, struct attach_plan *p)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	struct xr_cfg c;
	int rc;

	rc = load_new(o, &p->skel);
	if (rc || !p->skel)
		return -1;
	p->prog_fd = bpf_program__fd(p->skel->progs.xroce_xdp);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(p->prog_fd, &info, &len)) {
		xr_err(CMD, -errno, "cannot read the id of the new program");
		return -1;
	}
	p->prog_id = info.id;
	rc = xr_cfg_read(bpf_map__fd(p->skel->maps.xr_cfg), &c);
	if (rc) {
		xr_err(CMD, rc, "cannot read the config back");
		return -1;
	}
	xr_cfg_str(&c, p->cfgs, sizeof(p->cfgs));
	return 0;
}

/* Share another plane's program unless --separate or there is none, else
 * load a new one.  0, or -1 after a message. */
static int plan(const struct attach_opts *o, int ifindex, struct attach_plan *p)
{
	int rc;

	if (!o->separate) {
		rc = find_plane(ifindex, &p->plane);
		if (rc && rc != -ENOENT) {
			xr_err(CMD, rc, "cannot list the interfaces of this namespace");
			return -1;
		}
		p->have_plane = !rc;
	}
	return p->have_plane ? share_plane(o, p) : load_fresh(o, p);
}

/* Attach p's program to IF (replacing cur's, if any) and, when shared,
 * write its config.  0, or -1 after a message. */
static int attach_planned(const struct attach_opts *o, int ifindex,
			  struct xr_ifxdp *cur, struct attach_plan *p,
			  uint32_t *mode)
{
	int rc;

	rc = attach_prog(o, ifindex, p->prog_fd, cur, mode);
	if (rc) {
		xr_err(CMD, rc, "%s: cannot attach in %s mode", o->ifname,
		       xr_xdp_mode_name(*mode));
		return -1;
	}
	/* Attached, but not as configured, is a failure. */
	if (p->have_plane &&
	    configure(p->prog_id, o, false, &p->changed, p->before, p->cfgs,
		      sizeof(p->cfgs)))
		return -1;
	return record_flags(o->ifname, p->prog_id, ifindex, *mode) ? -1 : 0;
}

/* IF runs xroce: XR_CONTINUE if it is this build's (configure it in
 * place), 0 if it is another build's and --force lets it be replaced, or
 * an exit status. */
static int other_build(const struct attach_opts *o, const struct xr_ifxdp *cur)
{
	struct xr_maps m;
	int rc = xr_maps_open_prog(cur->xroce_id, &m);

	if (rc != -EPROTO) {
		if (!rc)
			xr_maps_close(&m);
		return XR_CONTINUE; /* other errors: attach_existing says */
	}
	if (!o->force)
		return xr_err(CMD, 0, "%s: the xroce program attached (prog %u) is another build's (%s); --force replaces it",
			      o->ifname, cur->xroce_id, m.mismatch);
	if (cur->prog_id != cur->xroce_id)
		return xr_err(CMD, 0, "%s: the xroce program (prog %u) inside libxdp dispatcher %u is another build's (%s); remove it with xdp-loader first",
			      o->ifname, cur->xroce_id, cur->prog_id, m.mismatch);
	printf("%s: replacing xroce prog %u of another build (%s)\n", o->ifname,
	       cur->xroce_id, m.mismatch);
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o;
	struct attach_plan p = { .prog_fd = -1 };
	struct xr_ifxdp cur;
	char replaced[64] = "";
	uint32_t mode, old_id;
	int ifindex, rc, ret = XR_EXIT_FAIL;

	rc = parse(argc, argv, &o);
	if (rc != XR_CONTINUE)
		return rc;
	ifindex = xr_ifindex(o.ifname);
	if (ifindex < 0)
		return xr_err(CMD, 0, "%s: no such interface in this network namespace",
			      o.ifname);
	rc = xr_ifxdp_query(ifindex, &cur);
	if (rc)
		return xr_err(CMD, rc, "%s: cannot query its XDP program", o.ifname);
	if (cur.xroce_id) {
		rc = other_build(&o, &cur);
		if (rc)
			return rc == XR_CONTINUE ? attach_existing(&o, &cur) : rc;
		/* --force: replaced below like any other program */
		cur.xroce_id = 0;
	}
	if (cur.prog_id) {
		if (xr_prog_describe(cur.prog_id, replaced, sizeof(replaced), NULL))
			snprintf(replaced, sizeof(replaced), "?");
		if (!o.force)
			return xr_err(CMD, 0, "%s: another XDP program is attached ('%s', prog %u, %s mode); --force replaces it",
				      o.ifname, replaced, cur.prog_id,
				      xr_xdp_mode_name(cur.mode));
	}
	old_id = cur.prog_id;
	if (!plan(&o, ifindex, &p) && !attach_planned(&o, ifindex, &cur, &p, &mode)) {
		printf("%s: attached xroce prog %u in %s mode%s, %s\n", o.ifname,
		       p.prog_id, xr_xdp_mode_name(mode), p.shared, p.cfgs);
		if (p.changed)
			printf("%s: config of prog %u changed on all its planes (was: %s)\n",
			       o.ifname, p.prog_id, p.before);
		if (old_id)
			printf("%s: replaced XDP program '%s' (prog %u)\n", o.ifname,
			       replaced, old_id);
		ret = XR_EXIT_OK;
	}
	/* The attachment holds the program now; our references can go. */
	if (p.skel)
		xroce__destroy(p.skel);
	else if (p.prog_fd >= 0)
		close(p.prog_fd);
	return ret;
}
