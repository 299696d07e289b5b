/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The device's domain in the XDP program's maps: its memory map and event
 * ring, registered under a domain id; and the removal of domains whose
 * process died without closing.
 */
#ifndef XR_ENGINE_DOMAIN_H
#define XR_ENGINE_DOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

int xr_domain_create(struct xroce_device *dev, size_t mem_len);
void xr_domain_destroy(struct xroce_device *dev);
/* The device has nconns connections: each one's share of the ring. */
void xr_domain_set_share(struct xroce_device *dev, uint32_t nconns);
/* A connection set up under conn_id starts with its whole share. */
void xr_domain_conn_reset(struct xroce_device *dev, uint32_t conn_id);
/* Purge the domains of dead processes; returns how many. */
int xr_domain_gc(const struct xr_logger *lg, const struct xr_maps *m);

#endif /* XR_ENGINE_DOMAIN_H */
