# dlplan - offline planner for distributed deep-learning training.
# See README.md; configuration in config.mk.

include config.mk

CPPFLAGS_ALL = -D_POSIX_C_SOURCE=200809L -DDLPLAN_VERSION=\"$(VERSION)\" \
	$(GLPK_CFLAGS) $(CSV_CFLAGS) $(JSON_CFLAGS) $(NETTLE_CFLAGS) \
	$(CPPFLAGS)
CFLAGS_ALL = $(WARNFLAGS) $(THREAD_FLAGS) $(CFLAGS)
LDFLAGS_ALL = $(THREAD_FLAGS) $(LDFLAGS)
ifeq ($(DEVELOPER),1)
CFLAGS_ALL += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS_ALL += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_ALL += -fsanitize=$(SANITIZE)
BUILD = build/san
else
BUILD = build/std
endif
LIBS = $(GLPK_LIBS) $(CSV_LIBS) $(JSON_LIBS) $(NETTLE_LIBS) $(LDLIBS_EXTRA)

SRC = $(filter-out src/main.c,$(wildcard src/*.c))
OBJ = $(SRC:src/%.c=$(BUILD)/%.o)
HDR = $(wildcard src/*.h)
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BIN = $(BUILD)/dlplan

all: dlplan

dlplan: $(BIN)
	ln -sf $(BIN) dlplan

$(BUILD)/%.o: src/%.c $(HDR) config.mk
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/libdlplan.a: $(OBJ)
	rm -f $@
	ar rcs $@ $(OBJ)

$(BIN): $(BUILD)/main.o $(BUILD)/libdlplan.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(BUILD)/main.o $(BUILD)/libdlplan.a $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/tap.h $(BUILD)/libdlplan.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) -Isrc $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< \
		$(BUILD)/libdlplan.a $(LIBS)

unit: $(UNIT_BIN)

# The whole test suite; installs missing build and test dependencies first.
# JOBS tests at once (default: $DLPLAN_JOBS, else one per online CPU); see
# tests/run for the order and the tests that run one at a time.
JOBS =
check:
	@sh tests/deps.sh
	@$(MAKE) --no-print-directory dlplan unit
	@DLPLAN=$(CURDIR)/$(BIN) BUILD=$(CURDIR)/$(BUILD) \
		sh tests/run $(if $(JOBS),-j $(JOBS))

# Benchmarks (not part of check): one table on stdout; CSV and SVG in
# tests/bench/out/.  BENCH_RUNS, BENCH_LIMIT, BENCH_SCALES, BENCH_LAYERS,
# BENCH_SCHED_JOBS: see tests/bench/run.sh.  Always the optimised build,
# never SANITIZE.
bench:
	@$(MAKE) --no-print-directory SANITIZE= dlplan build/std/tests/test_balanced
	@DLPLAN=$(CURDIR)/build/std/dlplan BUILD=$(CURDIR)/build/std \
		sh tests/bench/run.sh

# Predicted against measured step time of plans/dlplan_train.py on this
# machine's cores (see tests/bench/train-fidelity.py: it refuses under
# load and says when two series disagree by more than 3 %).
bench-train:
	@$(MAKE) --no-print-directory SANITIZE= dlplan
	@DLPLAN=$(CURDIR)/build/std/dlplan /usr/bin/python3 \
		tests/bench/train-fidelity.py

# libFuzzer targets built with clang (ASan + UBSan), each run for
# FUZZ_SECONDS; see tests/fuzz/run.sh.
FUZZ_SECONDS = 60
FUZZ_CC = clang
fuzz:
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_CC=$(FUZZ_CC) sh tests/fuzz/run.sh

# Build and run the main job on the bundled default dataset.
demo:
	@sh tests/deps.sh
	@$(MAKE) --no-print-directory dlplan
	./$(BIN) check -c datasets/clusters/hetero-lab -m datasets/models/gpt2-xl.csv
	./$(BIN) plan -c datasets/clusters/hetero-lab -m datasets/models/gpt2-xl.csv \
		--global-batch 64 --micro-batch 2

# Regenerate the model presets in datasets/models (tests/cli/model.sh
# checks them).
datasets: dlplan
	DLPLAN=$(CURDIR)/$(BIN) sh datasets/models/regen.sh

# Regenerate the example plans in plans/ (tests/cli/plan.sh checks them).
plans: dlplan
	DLPLAN=$(CURDIR)/$(BIN) sh plans/regen.sh

# The plan reader and the reference executor, installed under
# $(PREFIX)/share/dlplan (dlplan(1), FILES).
PYFILES = plans/__init__.py plans/dlplan_plan.py plans/dlplan_train.py \
	plans/dlplan_exec.py plans/dlplan_config.py plans/dlplan_reference.py \
	plans/dlplan_profile.py \
	plans/dlplan_model.py plans/dlplan_arch.py plans/dlplan_pipe.py

install: dlplan
	mkdir -p $(DESTDIR)$(BINPREFIX) $(DESTDIR)$(MANPREFIX)/man1 \
		$(DESTDIR)$(MANPREFIX)/man5 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	cp -f $(BIN) $(DESTDIR)$(BINPREFIX)/dlplan
	chmod 755 $(DESTDIR)$(BINPREFIX)/dlplan
	for m in man/*.1; do [ -f "$$m" ] && cp -f "$$m" $(DESTDIR)$(MANPREFIX)/man1/; done; true
	for m in man/*.5; do [ -f "$$m" ] && cp -f "$$m" $(DESTDIR)$(MANPREFIX)/man5/; done; true
	[ ! -f completions/dlplan.bash ] || cp -f completions/dlplan.bash $(DESTDIR)$(BASHCOMPDIR)/dlplan
	[ ! -f completions/_dlplan ] || cp -f completions/_dlplan $(DESTDIR)$(ZSHCOMPDIR)/_dlplan
	[ ! -f completions/dlplan.fish ] || cp -f completions/dlplan.fish $(DESTDIR)$(FISHCOMPDIR)/dlplan.fish
	mkdir -p $(DESTDIR)$(PREFIX)/share/dlplan
	cp -f $(PYFILES) $(DESTDIR)$(PREFIX)/share/dlplan/

uninstall:
	rm -f $(DESTDIR)$(BINPREFIX)/dlplan
	for m in man/*.1; do rm -f $(DESTDIR)$(MANPREFIX)/man1/$${m#man/}; done
	for m in man/*.5; do rm -f $(DESTDIR)$(MANPREFIX)/man5/$${m#man/}; done
	rm -f $(DESTDIR)$(BASHCOMPDIR)/dlplan $(DESTDIR)$(ZSHCOMPDIR)/_dlplan \
		$(DESTDIR)$(FISHCOMPDIR)/dlplan.fish
	for f in $(PYFILES); do rm -f $(DESTDIR)$(PREFIX)/share/dlplan/$${f#plans/}; done

clean:
	rm -rf build dlplan tests/out

.PHONY: all dlplan unit check demo datasets plans install uninstall clean \
	bench bench-train
