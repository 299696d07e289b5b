/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One packet onto a plane's transmit engine. */
#ifndef XR_ENGINE_EMIT_H
#define XR_ENGINE_EMIT_H

#include <stddef.h>

#include "device.h"
#include "pktbuild.h"

/* Template t, header hdr (hdr_len bytes), payload pieces iov.  0, or
 * -ENOSPC when the engine has no room (nothing was queued). */
int xr_emit(struct xroce_device *dev, struct xr_plane *pl,
	    const struct xr_tmpl *t, const void *hdr, size_t hdr_len,
	    const struct xr_iov *iov, int niov);

#endif /* XR_ENGINE_EMIT_H */
