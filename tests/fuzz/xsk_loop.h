/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Controls of the in-process transmit engine (xsk_loop.c). */
#ifndef XR_FUZZ_XSK_LOOP_H
#define XR_FUZZ_XSK_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct xr_xsk;

/* A stalled engine accepts pushes but completes nothing (a NIC that
 * stopped sending): the library runs out of slots and frames. */
void xsk_loop_stall(struct xr_xsk *x, bool stalled);
/* Complete everything pushed so far, even when stalled. */
void xsk_loop_flush(struct xr_xsk *x);
/* Descriptors pushed and not yet reaped by the library. */
uint32_t xsk_loop_in_flight(const struct xr_xsk *x);

#endif /* XR_FUZZ_XSK_LOOP_H */
