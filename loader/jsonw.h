/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small streaming JSON writer for the --json output of `xroce` commands:
 * it tracks nesting and commas and escapes strings, so commands only say
 * what to write.  Keys are given for members of objects and are NULL for
 * array elements and the top-level value.  Pretty-printed, two spaces.
 */
#ifndef XR_LOADER_JSONW_H
#define XR_LOADER_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define XR_JW_MAX_DEPTH 16

struct xr_jw {
	FILE *f;
	int depth;
	bool has_items[XR_JW_MAX_DEPTH]; /* a comma is due at this level */
};

void xr_jw_init(struct xr_jw *w, FILE *f);
void xr_jw_obj_open(struct xr_jw *w, const char *key);
void xr_jw_obj_close(struct xr_jw *w);
void xr_jw_arr_open(struct xr_jw *w, const char *key);
void xr_jw_arr_close(struct xr_jw *w);
void xr_jw_str(struct xr_jw *w, const char *key, const char *val);
void xr_jw_u64(struct xr_jw *w, const char *key, uint64_t val);
void xr_jw_bool(struct xr_jw *w, const char *key, bool val);
/* Ends the document with a newline. */
void xr_jw_finish(struct xr_jw *w);

#endif /* XR_LOADER_JSONW_H */
