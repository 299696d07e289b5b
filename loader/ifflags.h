/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-interface flags of an xroce program (map xr_ifs, abi.h), kept by
 * attach and detach: XR_IF_CSUM_PARTIAL where the program runs in generic
 * mode, the one place the kernel hands XDP partially checksummed frames.
 */
#ifndef XR_LOADER_IFFLAGS_H
#define XR_LOADER_IFFLAGS_H

#include <stdint.h>

/* The flags ifindex gets when prog_id is attached there in mode (an
 * XDP_FLAGS_*_MODE); mode 0 = detached: the entry goes.  -ENOENT: an
 * object without xr_ifs (older), which needs nothing. */
int xr_ifflags_update(uint32_t prog_id, int ifindex, uint32_t mode);
/* The flags of ifindex (0 when none), or a negative errno. */
int xr_ifflags_get(uint32_t prog_id, int ifindex, uint32_t *flags);

#endif /* XR_LOADER_IFFLAGS_H */
