/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internet checksum fixup, one job: update a 16-bit ones'-complement
 * checksum after one 16-bit word of the data it covers changed (RFC 1624,
 * eqn. 3: HC' = ~(~HC + ~m + m')).  Byte order does not matter as long as
 * checksum and words are taken from the packet alike.  Pure code, no
 * helpers: usable from XDP, TC and userspace tests.
 */
#ifndef XR_LIB_CSUM_H
#define XR_LIB_CSUM_H

#include <linux/types.h>

#include "contract/inline.h"

XR_INLINE void xr_csum_replace2(__u16 *csum, __u16 old_word, __u16 new_word)
{
	__u32 sum = (__u16)~*csum;

	sum += (__u16)~old_word;
	sum += new_word;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	*csum = (__u16)~sum;
}

#endif /* XR_LIB_CSUM_H */
