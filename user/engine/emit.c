// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Putting one packet on a plane's transmit engine: the path's template
 * (Ethernet/IP/UDP), the xroce header, and the payload where it lies in
 * the memory map (which is the UMEM, and what the XDP frame builder reads),
 * copied into a frame of the plane only where it has to be.
 */
#include <errno.h>
#include <string.h>

#include "emit.h"
#include "plane.h"
#include "trace.h"
#include "xdptx.h"
#include "xsk.h"

/* A packet larger than one transmit frame: its headers (hlen bytes) are in
 * the frame at hdr_addr, the payload goes from where it lies in the memory
 * map (which is the UMEM) in pieces that do not cross a 4 KiB chunk.  If it
 * is in too many pieces, it is copied into frames of its own (bounce). */
static int push_multi(struct xroce_device *dev, struct xr_plane *pl,
		      uint64_t hdr_addr, size_t hlen, const struct xr_iov *iov,
		      int niov)
{
	struct xr_xsk_seg segs[XR_XSK_MAX_SEGS];
	int n = 0, i, rc;

	segs[n++] = (struct xr_xsk_seg){ hdr_addr, (uint32_t)hlen };
	for (i = 0; i < niov; i++) {
		const uint8_t *b = iov[i].base;
		uint64_t a = (uint64_t)(b - dev->mem);
		size_t len = iov[i].len;

		if (b < dev->mem || len > dev->mem_len || a > dev->mem_len - len)
			break; /* not in the UMEM: copied below */
		while (len && n < XR_XSK_MAX_SEGS) {
			uint32_t room = XR_XSK_FRAME_SIZE - (uint32_t)(a % XR_XSK_FRAME_SIZE);
			uint32_t take = len < room ? (uint32_t)len : room;

			segs[n++] = (struct xr_xsk_seg){ a, take };
			a += take;
			len -= take;
		}
		if (len)
			break;
	}
	if (i < niov) {
		/* Bounce: the payload gathered into whole frames. */
		size_t off = 0;

		n = 1;
		for (i = 0; i < niov; i++) {
			size_t done = 0;

			while (done < iov[i].len) {
				uint32_t in = (uint32_t)(off % XR_XSK_FRAME_SIZE);
				size_t take;

				if (!in) {
					if (n == XR_XSK_MAX_SEGS ||
					    xr_plane_frame_get(pl, &segs[n].addr))
						goto fail;
					segs[n++].len = 0;
				}
				take = XR_XSK_FRAME_SIZE - in;
				if (take > iov[i].len - done)
					take = iov[i].len - done;
				memcpy(dev->mem + segs[n - 1].addr + in,
				       (const uint8_t *)iov[i].base + done, take);
				segs[n - 1].len += (uint32_t)take;
				done += take;
				off += take;
			}
		}
	}
	rc = xr_xsk_tx_push_sg(pl->xsk, segs, n);
	if (!rc)
		return 0;
fail:
	for (i = 1; i < n; i++)
		if (segs[i].addr >= pl->frame_base &&
		    segs[i].addr < pl->frame_base + (uint64_t)XR_TX_FRAMES * XR_PAGE_SIZE)
			xr_plane_frame_put(pl, segs[i].addr);
	return -ENOSPC;
}

/* Does [base, base + len) lie in the device's memory map (the UMEM)? */
static bool in_umem(const struct xroce_device *dev, const void *base, size_t len)
{
	const uint8_t *b = base;

	return b >= dev->mem && len <= dev->mem_len &&
	       (size_t)(b - dev->mem) <= dev->mem_len - len;
}

/* The test-run engine: one descriptor.  Small frames are written whole into
 * it; otherwise its headers (checksums over the payload where it lies) and
 * up to XR_TXR_SEGS payload pieces of the memory map; payload in more
 * pieces, or outside the map, is gathered into a frame of the plane first
 * (freed after the next flush). */
static int emit_txr(struct xroce_device *dev, struct xr_plane *pl,
		    const struct xr_tmpl *t, const void *hdr, size_t hdr_len,
		    const struct xr_iov *iov, int niov)
{
	struct xr_txr_desc *d;
	struct xr_iov one;
	size_t plen = 0;
	bool direct = niov <= (int)XR_TXR_SEGS;
	int i;

	if (!xr_xdptx_room(pl->txr))
		return -ENOSPC;
	for (i = 0; i < niov; i++) {
		plen += iov[i].len;
		if (!in_umem(dev, iov[i].base, iov[i].len))
			direct = false;
	}
	if (t->len + hdr_len + plen > XR_TXR_MAX_FRAME)
		return -EMSGSIZE; /* cannot happen: seg_max keeps below it */
	d = xr_xdptx_slot(pl->txr);
	d->tr_on = 0;
	if (__builtin_expect(dev->trace != NULL, 0))
		xr_trace_emitted(dev, (int)(pl - dev->plane), d);
	if (t->len + hdr_len + plen <= XR_TXR_HDR_MAX) {
		d->hdr_len = (uint16_t)xr_build_frame_v(d->hdr, t, hdr, hdr_len,
							iov, niov);
		d->nseg = 0;
		d->plen = 0;
		xr_xdptx_commit(pl->txr);
		return 0;
	}
	if (!direct) {
		uint64_t addr;
		size_t off = 0;

		if (pl->nbounce == XR_TXR_RING || xr_plane_frame_get(pl, &addr))
			return -ENOSPC;
		for (i = 0; i < niov; i++) {
			memcpy(dev->mem + addr + off, iov[i].base, iov[i].len);
			off += iov[i].len;
		}
		pl->bounce[pl->nbounce++] = addr;
		one.base = dev->mem + addr;
		one.len = plen;
		iov = &one;
		niov = 1;
	}
	d->hdr_len = (uint16_t)xr_build_hdr_v(d->hdr, t, hdr, hdr_len, iov, niov);
	d->nseg = 0;
	for (i = 0; i < niov; i++) {
		if (!iov[i].len)
			continue;
		d->seg[d->nseg].off = (uint64_t)((const uint8_t *)iov[i].base - dev->mem);
		d->seg[d->nseg].len = (uint32_t)iov[i].len;
		d->nseg++;
	}
	d->plen = (uint32_t)plen;
	xr_xdptx_commit(pl->txr);
	return 0;
}

/* Put one packet on the plane's engine: template, header, payload. */
int xr_emit(struct xroce_device *dev, struct xr_plane *pl,
	    const struct xr_tmpl *t, const void *hdr, size_t hdr_len,
	    const struct xr_iov *iov, int niov)
{
	uint64_t addr;
	size_t plen = 0, len;
	int i, rc;

	if (pl->txr)
		rc = emit_txr(dev, pl, t, hdr, hdr_len, iov, niov);
	else {
		for (i = 0; i < niov; i++)
			plen += iov[i].len;
		if (xr_plane_frame_get(pl, &addr))
			return -ENOSPC;
		if (t->len + hdr_len + plen <= XR_PAGE_SIZE) {
			len = xr_build_frame_v(dev->mem + addr, t, hdr, hdr_len,
					       iov, niov);
			rc = xr_xsk_tx_push(pl->xsk, addr, (uint32_t)len);
		} else {
			len = xr_build_hdr_v(dev->mem + addr, t, hdr, hdr_len,
					     iov, niov);
			rc = push_multi(dev, pl, addr, len, iov, niov);
		}
		if (rc)
			xr_plane_frame_put(pl, addr);
		else if (__builtin_expect(dev->trace != NULL, 0))
			xr_trace_emitted(dev, (int)(pl - dev->plane), NULL);
	}
	if (!rc)
		pl->need_kick = true;
	return rc;
}
