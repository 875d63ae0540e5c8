/*
 * path.c - path names (see path.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
/* realpath(3) is an X/Open function. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "path.h"
#include "sb.h"
#include "util.h"

char *
path_abs(const char *path, int resolve_links, struct dl_err *e)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = path;
	char *cwd;

	if (resolve_links && (cwd = realpath(path, NULL)) != NULL)
		return cwd;
	if (p[0] == '/')
		return xstrdup(p);
	if ((cwd = getcwd(NULL, 0)) == NULL) {
		dl_seterr(e, DL_ESYS, NULL, 0, 0, "cannot get the current "
		    "directory: %s", strerror(errno));
		return NULL;
	}
	while (p[0] == '.' && p[1] == '/') {
		p += 2;
		while (*p == '/')
			p++;
	}
	sb_adds(&sb, cwd);
	free(cwd);
	if (strcmp(p, ".") != 0 && p[0] != '\0') {
		if (sb.len == 0 || sb.buf[sb.len - 1] != '/')
			sb_addc(&sb, '/');
		sb_adds(&sb, p);
	}
	/* A trailing "/" or "/." adds nothing. */
	while (sb.len > 1 && sb.buf[sb.len - 1] == '/')
		sb.buf[--sb.len] = '\0';
	if (sb.len > 2 && strcmp(sb.buf + sb.len - 2, "/.") == 0)
		sb.buf[sb.len -= 2] = '\0';
	return sb_detach(&sb);
}

char *
path_dir(const char *path)
{
	const char *sl = strrchr(path, '/');

	if (sl == NULL)
		return xstrdup(".");
	if (sl == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(sl - path));
}
