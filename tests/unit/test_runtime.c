/*
 * test_runtime.c - what plan --runtime and the framework launchers take
 * from the frameworks: runtime_megatron_split() against an oracle that
 * tries every setting of Megatron-LM's split arguments, and
 * mg_arch_parse() on the lines "dlplan model" writes.
 *
 * The oracle follows Megatron-LM d98e8a64ddf3 (2026-08-22):
 * get_num_layers_to_build() (megatron/core/transformer/
 * transformer_block.py:76-204) for the layers a pipeline rank builds, and
 * the checks of TransformerConfig.__post_init__ (transformer_config.py:
 * 2229-2239: first/last not with the account-for flags; 2301-2357: first
 * and last at least 1, middle layers exactly when middle stages, evenly
 * split) and validate_args() (arguments.py:985-998: the even split).
 */
#include <stdlib.h>

#include "modelgen.h"
#include "runtime.h"
#include "tap.h"

#define MAXS 5

/*
 * What Megatron builds per pipeline rank for N layers over S stages with
 * first/last (0: not given) and the flags em, lo; 0 when it refuses.
 */
static int
megatron_builds(int N, int S, int first, int last, int em, int lo, int *b)
{
	if (first || last) {
		int left = N, stages = S, per = 0;

		if (em || lo)
			return 0;
		if (first) {
			if (first <= 0)
				return 0;
			left -= first;
			stages--;
		}
		if (last) {
			if (last <= 0)
				return 0;
			left -= last;
			stages--;
		}
		if ((left != 0) != (stages != 0) || left < 0)
			return 0;
		if (stages > 0) {
			if (left % stages != 0)
				return 0;
			per = left / stages;
		}
		for (int r = 0; r < S; r++) {
			b[r] = per;
			if (r == 0 && first)
				b[r] = first;
			if (r == S - 1 && last)
				b[r] = last;
		}
		return 1;
	}
	if ((N + em + lo) % S != 0)
		return 0;
	for (int r = 0; r < S; r++) {
		b[r] = (N + em + lo) / S - (r == 0 && em) -
		    (r == S - 1 && lo);
		if (b[r] < 0)
			return 0;
	}
	return 1;
}

static int
same(const int *a, const int *b, int S)
{
	for (int j = 0; j < S; j++)
		if (a[j] != b[j])
			return 0;
	return 1;
}

/* Whether some setting of the arguments builds b exactly. */
static int
oracle(const int *b, int S)
{
	int N = 0, got[MAXS];

	for (int j = 0; j < S; j++)
		N += b[j];
	for (int f = 0; f <= N; f++)
		for (int l = 0; l <= N; l++)
			for (int fl = 0; fl < 4; fl++)
				if ((S > 1 || (f == 0 && l == 0 && fl == 0)) &&
				    megatron_builds(N, S, f, l, fl & 1, fl >> 1,
				    got) && same(got, b, S))
					return 1;
	return 0;
}

static void
test_split(void)
{
	long tried = 0, agree = 0, built = 0, yes = 0;

	for (int S = 1; S <= MAXS; S++) {
		int b[MAXS] = { 0 };

		for (;;) {
			struct mt_split ms;
			int got[MAXS], N = 0, mine, want, j;

			for (j = 0; j < S; j++)
				N += b[j];
			if (N > 0) {
				mine = runtime_megatron_split(b, S, &ms);
				want = oracle(b, S);
				tried++;
				agree += mine == want;
				if (mine != want)
					printf("# S %d blocks %d %d %d %d %d: "
					    "dlplan %d, megatron %d\n", S, b[0],
					    b[1], b[2], b[3], b[4], mine, want);
				if (mine) {
					yes++;
					built += megatron_builds(N, S,
					    ms.first, ms.last, ms.embed,
					    ms.loss, got) && same(got, b, S);
				}
			}
			/* The next vector of S counts in 0 .. 7. */
			j = 0;
			while (j < S && ++b[j] > 7)
				b[j++] = 0;
			if (j == S)
				break;
		}
	}
	ok(agree == tried, "runtime_megatron_split() accepts exactly what "
	    "Megatron builds (%ld splits)", tried);
	ok(built == yes, "the arguments it gives build the split (%ld "
	    "splits)", yes);
}

static void
test_arch(void)
{
	struct mg_arch a;

	ok(mg_arch_parse("dlplan model llama --preset llama2-7b --layers 32 "
	    "--hidden 4096 --heads 32 --kv-heads 32 --ffn 11008 --vocab "
	    "32000 --seq 4096 --dtype-bytes 2 --tied no", &a) &&
	    a.family == MG_LLAMA && a.layers == 32 && a.ffn == 11008 &&
	    !a.tied, "a llama2-7b line");
	ok(mg_arch_parse("dlplan model gpt --layers 2 --hidden 64 --heads 4 "
	    "--vocab 100 --seq 16", &a) && a.kv_heads == 4 && a.ffn == 256 &&
	    a.positions == 16 && a.tied, "defaults filled in");
	ok(mg_arch_parse("dlplan model --preset gpt2-xl", &a) &&
	    a.heads == 25, "a preset alone");
	ok(!mg_arch_parse("dlplan model gpt --layers 2", &a),
	    "a missing field");
	ok(!mg_arch_parse("dlplan model gpt --preset llama2-7b", &a),
	    "a preset of another family");
	ok(!mg_arch_parse("profiled on 8 A100s", &a), "another comment");
	ok(!mg_arch_parse(NULL, &a), "no comment");
	ok(!mg_arch_parse("dlplan model gpt --layers x --hidden 64 --heads 4 "
	    "--vocab 100 --seq 16", &a), "a word for a number");
}

int
main(void)
{
	test_split();
	test_arch();
	return done_testing();
}
