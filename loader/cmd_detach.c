// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce detach IF: take xroce's XDP program off an interface.  Only
 * xroce's own program, unless --force.  The program and its maps live on
 * while another interface (plane) or a process still holds them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>

#include "cli.h"
#include "cmds.h"
#include "ifflags.h"
#include "nativeprep.h"
#include "xdpif.h"

#define CMD "detach"

static void usage(FILE *f)
{
	fprintf(f,
"usage: xroce detach IF [--force]\n"
"\n"
"Detach xroce's XDP program from interface IF (however it was attached).\n"
"Other interfaces sharing the program keep it.\n"
"\n"
"  -f, --force  detach whatever XDP program IF runs, also if it is not\n"
"               xroce's or is a libxdp dispatcher holding other programs\n"
"  -h, --help   this help\n");
}

/* Names of the other interfaces still running prog_id, space separated. */
static int other_planes(uint32_t prog_id, int ifindex, char *buf, size_t len)
{
	struct xr_ifxdp *all;
	size_t n, i, off = 0;
	int rc;

	buf[0] = '\0';
	rc = xr_ifxdp_list(&all, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		if (all[i].ifindex != ifindex && all[i].xroce_id == prog_id)
			off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
						"%s%s", off ? " " : "",
						all[i].name);
	free(all);
	return 0;
}

/* IF [--force]: XR_CONTINUE, or an exit status. */
static int parse(int argc, char **argv, const char **ifname, bool *force)
{
	static const struct option lopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*force = false;
	while ((c = getopt_long(argc, argv, ":fh", lopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			*force = true;
			break;
		case 'h':
			usage(stdout);
			return XR_EXIT_OK;
		default:
			return xr_opt_err(CMD, c, argv);
		}
	}
	if (optind >= argc)
		return xr_usage_err(CMD, "which interface?");
	if (optind + 1 < argc)
		return xr_usage_err(CMD, "one interface at a time ('%s' is extra)",
				    argv[optind + 1]);
	*ifname = argv[optind];
	return XR_CONTINUE;
}

/* Refuse a program that is not xroce's alone, unless --force:
 * XR_CONTINUE, or an exit status. */
static int check_detachable(const char *ifname, const struct xr_ifxdp *cur,
			    const char *name, bool force)
{
	if (!cur->prog_id)
		return xr_err(CMD, 0, "%s: no XDP program is attached", ifname);
	if (!cur->xroce_id && !force)
		return xr_err(CMD, 0, "%s: the XDP program attached is not xroce's ('%s', prog %u); --force detaches it anyway",
			      ifname, name, cur->prog_id);
	if (cur->xroce_id && cur->xroce_id != cur->prog_id && !force)
		return xr_err(CMD, 0, "%s: xroce (prog %u) runs inside libxdp dispatcher %u, which may hold other programs; use 'xdp-loader unload %s -i %u', or --force to detach the whole dispatcher",
			      ifname, cur->xroce_id, cur->prog_id, ifname,
			      cur->xroce_id);
	return XR_CONTINUE;
}

/* xroce's program left IF: say where it still runs. */
static int report_xroce(const char *ifname, int ifindex,
			const struct xr_ifxdp *cur)
{
	char others[256];
	int rc;

	printf("%s: detached xroce prog %u (%s mode)\n", ifname, cur->xroce_id,
	       xr_xdp_mode_name(cur->mode));
	if (cur->mode == XDP_FLAGS_DRV_MODE)
		xr_native_attached(ifname); /* the driver dropped its XDP pairs */
	/* Its flags go with it (gone anyway once nothing holds the maps). */
	xr_ifflags_update(cur->xroce_id, ifindex, 0);
	rc = other_planes(cur->xroce_id, ifindex, others, sizeof(others));
	if (rc)
		return xr_err(CMD, rc, "cannot list the interfaces of this namespace");
	if (others[0])
		printf("prog %u is still attached to: %s\n", cur->xroce_id, others);
	else
		printf("prog %u is attached nowhere else in this namespace; it and its maps are freed once no process holds them\n",
		       cur->xroce_id);
	return XR_EXIT_OK;
}

int cmd_detach(int argc, char **argv)
{
	struct xr_ifxdp cur;
	char name[64] = "?";
	const char *ifname = NULL;
	bool force;
	int ifindex, rc;

	rc = parse(argc, argv, &ifname, &force);
	if (rc != XR_CONTINUE)
		return rc;
	ifindex = xr_ifindex(ifname);
	if (ifindex < 0)
		return xr_err(CMD, 0, "%s: no such interface in this network namespace",
			      ifname);
	rc = xr_ifxdp_query(ifindex, &cur);
	if (rc)
		return xr_err(CMD, rc, "%s: cannot query its XDP program", ifname);
	if (cur.prog_id && xr_prog_describe(cur.prog_id, name, sizeof(name), NULL))
		snprintf(name, sizeof(name), "?");
	rc = check_detachable(ifname, &cur, name, force);
	if (rc != XR_CONTINUE)
		return rc;
	xr_cli_kmsg_clear();
	rc = xr_xdp_detach(ifindex, cur.prog_id, cur.mode);
	if (rc)
		return xr_err(CMD, rc, "%s: cannot detach prog %u", ifname,
			      cur.prog_id);
	if (cur.xroce_id)
		return report_xroce(ifname, ifindex, &cur);
	printf("%s: detached XDP program '%s' (prog %u, %s mode)\n",
	       ifname, name, cur.prog_id, xr_xdp_mode_name(cur.mode));
	return XR_EXIT_OK;
}
