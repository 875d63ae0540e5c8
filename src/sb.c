/*
 * sb.c - the growable string (see sb.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb.h"
#include "util.h"

void
sb_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void
sb_add(struct strbuf *sb, const char *s, size_t n)
{
	sb->buf = xgrow(sb->buf, &sb->cap, sb->len + n + 1, 1);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void
sb_adds(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void
sb_addc(struct strbuf *sb, int c)
{
	char ch = (char)c;

	sb_add(sb, &ch, 1);
}

void
sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb->buf = xgrow(sb->buf, &sb->cap, sb->len + (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void
sb_adddbl(struct strbuf *sb, double v)
{
	char b[DL_DBL_BUFSZ];

	sb_adds(sb, fmt_double(b, v));
}

void
sb_addshq(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sb_adds(sb, "'\\''");
		else
			sb_addc(sb, *s);
	}
	sb_addc(sb, '\'');
}

void
sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void
sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}

char *
sb_detach(struct strbuf *sb)
{
	char *p = sb->buf ? sb->buf : xstrdup("");

	sb_init(sb);
	return p;
}
