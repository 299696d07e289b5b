/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * XR_INLINE: the one definition of "always inline" for code that runs both
 * in the XDP programs and in userspace.  The BPF helpers must be inlined
 * (the verifier then sees each call site's bounds); userspace gets the same
 * code, compiled the same way.
 */
#ifndef XR_CONTRACT_INLINE_H
#define XR_CONTRACT_INLINE_H

#define XR_INLINE static inline __attribute__((always_inline))

#endif /* XR_CONTRACT_INLINE_H */
