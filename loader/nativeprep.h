/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What `xroce attach` changes on a NIC before attaching in native mode, so
 * that the driver takes the program and runs it safely, and undoing it if
 * the attach fails after all.  Each change is said on stdout.
 *
 *  - LRO and hardware GRO ("rx-lro", "rx-gro-hw") off when they are on and
 *    can be switched: XDP must see frames as they came off the wire, and
 *    some drivers refuse a program while the NIC merges frames.  (Generic
 *    mode: the kernel switches them off itself.)
 *  - virtio_net: XDP transmits (XDP_TX, which carries xroce's ACKs, and
 *    the test-run engine's frames) on the queue pair after the stack's for
 *    the current CPU, from curr_queue_pairs - xdp_queue_pairs on, whenever
 *    the stack uses more queue pairs than there are CPUs.  When the device
 *    has too few pairs left for one per CPU the driver shares the stack's
 *    queues instead (xdp_queue_pairs = 0) but still picks from that index
 *    on: past the last queue pair, a NULL virtqueue, a kernel crash (seen
 *    on 6.1 with 8 pairs in use on 2 CPUs).  So the stack's channels are
 *    lowered until either every CPU gets its own XDP pair or the stack uses
 *    no more pairs than CPUs.
 *  - virtio_net, once the program is in: the RSS indirection table, when
 *    it is the default even spread, spread again over the pairs in use.
 */
#ifndef XR_LOADER_NATIVEPREP_H
#define XR_LOADER_NATIVEPREP_H

#include <stdbool.h>
#include <stdint.h>

struct xr_prep {
	uint32_t old_combined;    /* != 0: the channels were lowered from it */
	bool lro_off, gro_hw_off; /* switched off here */
};

/* Apply the changes; 0, or a negative errno when one failed (the ones
 * already made are undone). */
int xr_native_prepare(const char *ifname, struct xr_prep *p);
/* Undo what xr_native_prepare changed (the native attach failed). */
void xr_native_undo(const char *ifname, const struct xr_prep *p);
/* After a native attach or detach went through: virtio_net's RSS table
 * spread over the queue pairs now in use (the driver adds one per CPU for
 * XDP and drops them again, and qemu's device stops steering by hash
 * whenever the count changes). */
void xr_native_attached(const char *ifname);

/* The combined channel count a virtio_net NIC with `max` queue pairs may
 * keep on `ncpu` CPUs; `combined` itself when it is safe. */
uint32_t xr_virtio_safe_combined(uint32_t combined, uint32_t max, uint32_t ncpu);

#endif /* XR_LOADER_NATIVEPREP_H */
