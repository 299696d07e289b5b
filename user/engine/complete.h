/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Send completions, in stream order, into the send CQ. */
#ifndef XR_ENGINE_COMPLETE_H
#define XR_ENGINE_COMPLETE_H

#include "qp.h"

/* Complete finished work requests and deliver receives, if anything
 * changed since the last call (qp->complete_dirty). */
void xr_qp_complete(struct xroce_qp *qp);

#endif /* XR_ENGINE_COMPLETE_H */
