// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Public calls that queue work: post_send, post_recv, and recall_recv,
 * which takes a receive back. */
#include <stddef.h>

#include "xroce/xroce.h"
#include "engine.h"

int xroce_post_send(struct xroce_qp *qp, struct xroce_send_wr *wr,
		    struct xroce_send_wr **bad_wr)
{
	struct xroce_send_wr *bad = wr;
	struct xroce_device *dev;
	int rc;

	if (bad_wr)
		*bad_wr = wr;
	if (!qp || !wr)
		return xr_bad_arg("xroce_post_send", "NULL QP or work request");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_post_send(qp, wr, &bad);
	xr_device_unlock(dev);
	if (bad_wr)
		*bad_wr = bad;
	return rc;
}

int xroce_post_recv(struct xroce_qp *qp, struct xroce_recv_wr *wr,
		    struct xroce_recv_wr **bad_wr)
{
	struct xroce_recv_wr *bad = wr;
	struct xroce_device *dev;
	int rc;

	if (bad_wr)
		*bad_wr = wr;
	if (!qp || !wr)
		return xr_bad_arg("xroce_post_recv", "NULL QP or work request");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_post_recv(qp, wr, &bad);
	xr_device_unlock(dev);
	if (bad_wr)
		*bad_wr = bad;
	return rc;
}

int xroce_recall_recv(struct xroce_qp *qp, uint16_t stream, uint64_t *wr_id)
{
	struct xroce_device *dev;
	int rc;

	if (!qp || !wr_id)
		return xr_bad_arg("xroce_recall_recv", "NULL QP or wr_id");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_recall_recv(qp, stream, wr_id);
	xr_device_unlock(dev);
	return rc;
}
