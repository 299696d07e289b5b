/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding xroce's BPF maps, one job: from an interface, through the XDP
 * program attached to it (program id -> map ids -> names), open a file
 * descriptor for every map the library and the `xroce` command use.  No pin
 * path is involved, so the object may have been attached by `xroce attach`,
 * `ip link set dev IF xdp obj ...` or `xdp-loader load IF ...` (in libxdp's
 * multi-program mode the dispatcher's sub-programs are searched too).
 */
#ifndef XR_USER_BPFMAPS_H
#define XR_USER_BPFMAPS_H

#include <stdint.h>

struct xr_maps {
	uint32_t prog_id;     /* the xroce program (not a dispatcher) */
	int attach_mode;      /* XDP_FLAGS_DRV_MODE / SKB_MODE / HW_MODE */
	int cfg, domains, mem, evq, mrs, conns, rx, msgs, stats, rq, reads;
	int txq;              /* -1 if the object predates the test-run engine */
	int trace;            /* -1 if the object predates latency breakdowns */
	int ifs;              /* xr_ifs; -1 if the object predates it */
	int evb;              /* -1 if it predates fair shares of event rings */
	uint32_t max_conns;   /* entries of xr_conns / xr_rx */
	uint32_t max_domains;
	uint32_t max_mrs;
	/* -EPROTO from xr_maps_open*: the program is another build's (its
	 * maps have other layouts); what differs, for the message. */
	char mismatch[96];
};

/* Fill m with fresh fds for the maps of the xroce program on ifindex.
 * -ENOENT: no XDP program, or none of them is xroce's.  -EPROTO: xroce's
 * program of another build, whose maps' layouts differ from this build's
 * (include/contract/abi.h): m->mismatch says which; nothing is open. */
int xr_maps_open(int ifindex, struct xr_maps *m);
/* Same, from a program id. */
int xr_maps_open_prog(uint32_t prog_id, struct xr_maps *m);
void xr_maps_close(struct xr_maps *m);
/* Id of the xroce XDP program attached to ifindex (searching libxdp
 * dispatchers), or a negative errno; *mode gets the attach mode. */
int xr_maps_find_prog(int ifindex, uint32_t *prog_id, int *mode);

#endif /* XR_USER_BPFMAPS_H */
