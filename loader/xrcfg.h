/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The XDP program's configuration (map xr_cfg, struct xr_cfg in abi.h):
 * read, write, and say it in words.  A program loaded by other tools
 * (ip link, xdp-loader) starts with it all zero: no data port, so it
 * passes every packet until `xroce attach` sets one.
 */
#ifndef XR_LOADER_XRCFG_H
#define XR_LOADER_XRCFG_H

#include <stddef.h>
#include "contract/abi.h"

int xr_cfg_read(int cfg_fd, struct xr_cfg *c);
int xr_cfg_write(int cfg_fd, const struct xr_cfg *c);
/* Flag names joined by ',' ("verify_csum"), "none" for no flag, unknown
 * bits as hex. */
void xr_cfg_flags_str(unsigned int flags, char *buf, size_t len);
/* "data port 4793/udp, flags verify_csum", or a sentence saying the port
 * is unset. */
void xr_cfg_str(const struct xr_cfg *c, char *buf, size_t len);

#endif /* XR_LOADER_XRCFG_H */
