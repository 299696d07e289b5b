/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The library objects one end of `xroce send` / `xroce recv` uses, set up
 * in the order the README shows (device, protection domain, completion
 * queues, registered memory, queue pair), and the few verbs both ends
 * post (loader/endpoint.h has the posting itself).  Every function that can fail prints one line and returns an exit
 * status (loader/cli.h), or a negative errno where it says so.
 */
#ifndef XR_LOADER_XFER_CONN_H
#define XR_LOADER_XFER_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "xfer_opts.h"
#include "xroce/xroce.h"

struct xf_ctx {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *scq, *rcq;  /* send and receive completions */
	struct xroce_qp *qp;
	struct xroce_mr *mr;         /* covers buf */
	uint8_t *buf;
};

/* Device (control port ctrl_port, 0: any), PD, CQs, a registered buffer of
 * buflen bytes with `access`, a QP with XF_RECVS receives posted. */
int xf_open(const char *cmd, const struct xf_common *c, uint16_t ctrl_port,
	    uint64_t buflen, int access, struct xf_ctx *x);
/* Destroy what xf_open made (any part of it); x is zeroed. */
void xf_close(struct xf_ctx *x);

/* Wait up to timeout_ms for one successful completion on cq: 0 and *wc,
 * or an exit status (what names the awaited thing in the message). */
int xf_wait_one(const char *cmd, struct xroce_cq *cq, struct xroce_wc *wc,
		int timeout_ms, const char *what);

#endif /* XR_LOADER_XFER_CONN_H */
