/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What `xroce status` says about one plane (an interface running xroce)
 * beyond the attachment: the NIC (driver, RX queues, MTU) and how data
 * leaves through it: the transmit engine each process using the plane
 * chose (from its telemetry header) and the one a new process would choose.
 */
#ifndef XR_LOADER_PLANEINFO_H
#define XR_LOADER_PLANEINFO_H

#include <stdbool.h>
#include <stdint.h>

#include "domview.h"
#include "nicinfo.h"
#include "xdpif.h"

#define XR_PLANE_MAX_USERS 16

struct xr_planeinfo {
	struct xr_nic nic;
	uint32_t rx_queues;
	int mtu;                       /* 0 if unknown */
	/* A new process's choice with the default policy (user/device.c):
	 * the test-run engine where the program runs natively on its own
	 * and a frame fits it, else AF_XDP, in zero-copy mode if the driver
	 * takes it (which only trying tells; not tried here). */
	const char *engine_default;
	uint32_t nusers;               /* processes with this plane */
	struct {
		uint32_t pid;
		uint8_t engine;        /* enum xr_telem_engine */
	} users[XR_PLANE_MAX_USERS];
};

/* has_txq: the program's object has the test-run engine's rings. */
int xr_planeinfo_get(const struct xr_ifxdp *i, bool has_txq,
		     const struct xr_domview *dv, int ndv, struct xr_planeinfo *pi);
/* "af_xdp_copy", "af_xdp_zc", "test_run", "?" */
const char *xr_telem_engine_name(uint8_t engine);
/* The engine in use: the users' common one, "mixed", or "none". */
const char *xr_planeinfo_engine(const struct xr_planeinfo *pi);

#endif /* XR_LOADER_PLANEINFO_H */
