/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the ethtool interface says about a NIC, and the few settings
 * `xroce attach` changes so that native XDP works on it: the driver's
 * name, its queues (channels), and offload features by their ethtool
 * names ("rx-lro", "rx-gro-hw").  Everything goes through SIOCETHTOOL on
 * a socket of the caller's network namespace (sysfs would show the
 * namespace it was mounted in).  Negative errno on failure; -EOPNOTSUPP
 * when the driver does not implement the request.
 */
#ifndef XR_LOADER_NICINFO_H
#define XR_LOADER_NICINFO_H

#include <stdbool.h>
#include <stdint.h>

struct xr_nic {
	char driver[32];          /* "virtio_net", "e1000e", "veth"; "" if unknown */
	bool has_channels;        /* ETHTOOL_GCHANNELS works */
	uint32_t combined, max_combined;
	uint32_t rx, max_rx, tx, max_tx;
	uint32_t num_rx_queues;   /* the kernel's RX queues (netlink) */
};

int xr_nic_query(const char *ifname, struct xr_nic *n);
/* RX queues in use: the channels when the driver reports them (combined +
 * rx-only), else the kernel's RX queue count. */
uint32_t xr_nic_rx_queues(const struct xr_nic *n);
int xr_nic_set_combined(const char *ifname, uint32_t combined);

/* After a change of the channel count: if the RSS indirection table
 * spreads flows evenly over its first n queues (the driver's default, i
 * -> i % n), spread it over the queues now in use again, so that the
 * device's steering, which some reset with the queue count (virtio-net in
 * qemu, with a 6.1 guest), holds.  A table the user set otherwise is left
 * as it is.  1: spread again over *nq queues; 0: nothing to do (no RSS, a
 * custom table); negative errno. */
int xr_nic_rss_respread(const char *ifname, uint32_t *nq);

/* Feature `name`: 1 on, 0 off; *changeable says whether it can be switched.
 * -ENOENT: the kernel knows no such feature. */
int xr_nic_feature(const char *ifname, const char *name, bool *changeable);
int xr_nic_feature_set(const char *ifname, const char *name, bool on);

#endif /* XR_LOADER_NICINFO_H */
