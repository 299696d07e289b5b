// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <inttypes.h>

#include "jsonw.h"

void xr_jw_init(struct xr_jw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->has_items[0] = false;
}

static void put_escaped(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* Slot of has_items for the current level: levels past the limit share
 * the last one, which only risks a missing comma in absurdly deep output. */
static bool *items(struct xr_jw *w)
{
	return &w->has_items[w->depth < XR_JW_MAX_DEPTH ? w->depth :
							  XR_JW_MAX_DEPTH - 1];
}

/* Comma, newline and indent before a value, then its key if any. */
static void begin_value(struct xr_jw *w, const char *key)
{
	if (w->depth > 0) {
		if (*items(w))
			fputc(',', w->f);
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	}
	*items(w) = true;
	if (key) {
		put_escaped(w->f, key);
		fputs(": ", w->f);
	}
}

static void open_container(struct xr_jw *w, const char *key, char c)
{
	begin_value(w, key);
	fputc(c, w->f);
	w->depth++;
	*items(w) = false;
}

static void close_container(struct xr_jw *w, char c)
{
	bool had = *items(w);

	if (w->depth > 0)
		w->depth--;
	if (had)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	fputc(c, w->f);
}

void xr_jw_obj_open(struct xr_jw *w, const char *key)
{
	open_container(w, key, '{');
}

void xr_jw_obj_close(struct xr_jw *w)
{
	close_container(w, '}');
}

void xr_jw_arr_open(struct xr_jw *w, const char *key)
{
	open_container(w, key, '[');
}

void xr_jw_arr_close(struct xr_jw *w)
{
	close_container(w, ']');
}

void xr_jw_str(struct xr_jw *w, const char *key, const char *val)
{
	begin_value(w, key);
	put_escaped(w->f, val);
}

void xr_jw_u64(struct xr_jw *w, const char *key, uint64_t val)
{
	begin_value(w, key);
	fprintf(w->f, "%" PRIu64, val);
}

void xr_jw_bool(struct xr_jw *w, const char *key, bool val)
{
	begin_value(w, key);
	fputs(val ? "true" : "false", w->f);
}

void xr_jw_finish(struct xr_jw *w)
{
	fputc('\n', w->f);
	fflush(w->f);
}
