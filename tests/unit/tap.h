/*
 * tap.h - a tiny TAP producer for the unit tests.
 *
 * Each check prints "ok N - name" or "not ok N - name"; done_testing()
 * prints the plan and returns the exit status (1 when anything failed).
 * tests/run counts the lines.  Use:
 *
 *	ok(cond, "name %d", i);
 *	is_near(got, want, rel_tol, "name");   relative |got-want| <= tol*max(1,|want|)
 *	is_int(got, want, "name");
 *	is_str(got, want, "name");
 *	return done_testing();
 */
#ifndef TAP_H
#define TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_fail;

static int __attribute__((format(printf, 2, 3), unused))
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_fail++;
	fflush(stdout);
	return cond;
}

static int __attribute__((unused))
is_near(double got, double want, double tol, const char *name)
{
	double scale = fabs(want) > 1 ? fabs(want) : 1;
	int c = isfinite(got) && fabs(got - want) <= tol * scale;

	if (!ok(c, "%s", name))
		printf("#   got %.17g\n#  want %.17g (tol %g)\n", got, want, tol);
	return c;
}

static int __attribute__((unused))
is_int(long got, long want, const char *name)
{
	int c = got == want;

	if (!ok(c, "%s", name))
		printf("#   got %ld\n#  want %ld\n", got, want);
	return c;
}

static int __attribute__((unused))
is_str(const char *got, const char *want, const char *name)
{
	int c = got && want && strcmp(got, want) == 0;

	if (!ok(c, "%s", name))
		printf("#   got '%s'\n#  want '%s'\n", got ? got : "(null)",
		    want ? want : "(null)");
	return c;
}

static int __attribute__((unused))
done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_fail ? 1 : 0;
}

#endif
