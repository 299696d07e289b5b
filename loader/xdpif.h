/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What XDP program an interface runs, and putting one on or taking it off.
 * Works in the caller's network namespace.  xroce's own program is
 * recognised through user/bpfmaps.c (also inside a libxdp dispatcher).
 * Attach and detach go through netlink with the expected old program named
 * (XDP_FLAGS_REPLACE / UPDATE_IF_NOEXIST), so a program someone else
 * attached in the meantime is never replaced by accident.
 */
#ifndef XR_LOADER_XDPIF_H
#define XR_LOADER_XDPIF_H

#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

struct xr_ifxdp {
	int ifindex;
	char name[IF_NAMESIZE];
	uint32_t prog_id;   /* program attached, 0 = none (xroce's, a libxdp
			     * dispatcher, or anything else) */
	uint32_t mode;      /* its XDP_FLAGS_{DRV,SKB,HW}_MODE */
	uint32_t xroce_id;  /* xroce's program: prog_id, or a program inside
			     * the dispatcher prog_id; 0 = xroce not there */
};

/* Fill st for ifindex.  Negative errno on failure (-ENODEV: gone). */
int xr_ifxdp_query(int ifindex, struct xr_ifxdp *st);
/* Every interface of the namespace, queried; interfaces that vanish while
 * listing are skipped.  *out is malloc'ed (free it), sorted by ifindex. */
int xr_ifxdp_list(struct xr_ifxdp **out, size_t *n);

/* "native", "generic", "offload" or "none". */
const char *xr_xdp_mode_name(uint32_t mode);
/* Name and type (BPF_PROG_TYPE_*) of program id; either may be NULL. */
int xr_prog_describe(uint32_t id, char *name, size_t len, uint32_t *type);

/* Attach prog_fd to ifindex in `mode` (XDP_FLAGS_DRV_MODE or SKB_MODE).
 * If cur->prog_id is set, that program is replaced: atomically when it is
 * attached in the same mode, otherwise it is detached first (the kernel
 * allows only one of native and generic), and cur is updated to say so. */
int xr_xdp_attach(int ifindex, int prog_fd, uint32_t mode,
		  struct xr_ifxdp *cur);
/* Detach program prog_id, attached in `mode`, from ifindex; fails if
 * another program is attached by then. */
int xr_xdp_detach(int ifindex, uint32_t prog_id, uint32_t mode);

#endif /* XR_LOADER_XDPIF_H */
