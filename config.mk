# dlplan build configuration; every variable may be overridden on the
# make command line (make PREFIX=/usr GLPK_LIBS=-L/opt/glpk/lib\ -lglpk).

VERSION = 0.1.0

PREFIX = /usr/local
BINPREFIX = $(PREFIX)/bin
MANPREFIX = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
# zsh searches $prefix/share/zsh/site-functions (Debian adds vendor-completions
# for its own packages: make install PREFIX=/usr ZSHCOMPDIR=/usr/share/zsh/vendor-completions).
ZSHCOMPDIR = $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR = $(PREFIX)/share/fish/vendor_completions.d

CC = cc
CFLAGS = -O2 -g
WARNFLAGS = -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wpointer-arith -Wformat=2
# Developer mode (make DEVELOPER=1): warnings are errors.
DEVELOPER = 0

GLPK_CFLAGS =
GLPK_LIBS = -lglpk
CSV_CFLAGS =
CSV_LIBS = -lcsv
JSON_CFLAGS =
JSON_LIBS = -ljansson
# SHA-256 of the input files (the digests that decide what a plan may read).
NETTLE_CFLAGS =
NETTLE_LIBS = -lnettle
LDLIBS_EXTRA = -lm
# The search runs on several threads (plan --jobs).
THREAD_FLAGS = -pthread

# make check SANITIZE=address,undefined
SANITIZE =
