/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Header MACs of keyed connections, one job: check the MAC a packet carries
 * in place of the token, sign the answers XDP builds, and read the key
 * epoch state that answers report (include/contract/wire.h, "Keyed
 * connections"; docs/PROTOCOL.md).  The keys are the connection entry's
 * (struct xr_conn: kpeer for the peer's stream, kown for ours), one slot
 * per epoch parity; the library installs them.
 */
#ifndef XR_LIB_MAC_H
#define XR_LIB_MAC_H

#include <linux/types.h>
#include "contract/abi.h"
#include "contract/inline.h"
#include "contract/siphash.h"

/* The key slot a header's epoch flag names. */
XR_INLINE __u32 xr_mac_slot(const __u8 *x, __u8 epoch_flag)
{
	return (x[1] & epoch_flag) ? 1 : 0;
}

/* Does header x (hdr_len bytes) leave its sack words out of its MAC: an
 * ACK or NAK (the only 80-byte header; hdr_len is a constant wherever this
 * is inlined) without XR_AF_SACK?  (wire.h, "Keyed connections".) */
XR_INLINE int xr_mac_gap(const __u8 *x, __u32 hdr_len)
{
	return hdr_len == sizeof(struct xr_ack_hdr) && !(x[1] & XR_AF_SACK);
}

/* The MAC of header x (hdr_len bytes, inside the packet) under k. */
XR_INLINE __u64 xr_mac_of(const __u64 *k, const __u8 *x, __u32 hdr_len)
{
	return xr_mac_hdr_gap(k[0], k[1], x, hdr_len, XR_ACK_SACK_LO,
			      XR_ACK_SACK_HI, xr_mac_gap(x, hdr_len));
}

/* Is the MAC of header x (hdr_len bytes, inside the packet: the caller
 * checked) right for connection c?  reply: an ACK, NAK or PROBE_REPLY
 * (an answer to our stream, under the peer's reply key of that epoch);
 * otherwise a DATA or PROBE of the peer's stream. */
XR_INLINE int xr_mac_ok(const struct xr_conn *c, const __u8 *x,
			__u32 hdr_len, int reply, __u8 epoch_flag)
{
	__u32 s = xr_mac_slot(x, epoch_flag);
	const __u64 *k = reply ? c->kown[s].reply : c->kpeer[s].data;

	return xr_mac_of(k, x, hdr_len) == xr_le64_load(x + 8);
}

/* Write the MAC of header x (hdr_len bytes, inside the frame, its flags
 * final) under k. */
XR_INLINE void xr_mac_sign(const __u64 *k, __u8 *x, __u32 hdr_len)
{
	xr_le64_store(x + 8, xr_mac_of(k, x, hdr_len));
}

/* Do we hold the keys of the epoch after the one in slot s of the peer's
 * stream?  Then the peer may move on to it (XR_AF_KNEXT, XR_PF_KNEXT). */
XR_INLINE int xr_mac_knext(const struct xr_conn *c, __u32 s)
{
	return c->kpeer[s ^ 1].epoch == c->kpeer[s].epoch + 1;
}

/* Is slot s the newer of the two and not yet reported?  Then the peer's
 * stream just moved to it and the other slot holds a spent epoch, which
 * the library replaces with the next one (the caller marks it reported
 * once the library was told). */
XR_INLINE int xr_mac_new_epoch(const struct xr_conn *c, __u32 s)
{
	return c->kpeer[s ^ 1].epoch + 1 == c->kpeer[s].epoch &&
	       !c->kpeer[s].noted;
}

#endif /* XR_LIB_MAC_H */
