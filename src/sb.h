/*
 * sb.h - strbuf, the growable string of the project (sb_*).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_SB_H
#define DL_SB_H

#include <stddef.h>

/*
 * A growable string buffer.  buf is NULL until the first append (after
 * sb_init(), STRBUF_INIT and sb_free()), and from then on NUL-terminated;
 * read it through sb_detach(), which never returns NULL, or check it.
 */
struct strbuf {
	char *buf;
	size_t len, cap;
};
#define STRBUF_INIT { NULL, 0, 0 }
void sb_init(struct strbuf *sb);
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addc(struct strbuf *sb, int c);
void sb_addf(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append a double via fmt_double. */
void sb_adddbl(struct strbuf *sb, double v);
/* Append s as one POSIX shell word in single quotes. */
void sb_addshq(struct strbuf *sb, const char *s);
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);
/* Give up ownership of the buffer (never NULL). */
char *sb_detach(struct strbuf *sb);

#endif
