# agent-sandbox: `make` builds build/agent-sandbox.
#
#   make              build/agent-sandbox (dynamic, -Werror)
#   make static       build/static/agent-sandbox (fully static)
#   make asan         build/asan/ binary and unit tests (AddressSanitizer + UBSan);
#                     WITH_UNIT=1 also runs the unit tests
#   make unit         build and run the cmocka unit tests
#   make check        the whole suite: unit and end-to-end, normal and sanitized
#   make fuzz         build the libFuzzer targets into build/fuzz/
#   make bench        start-up against raw bwrap; secret scan against find;
#                     start-up with and without the masked-file watch;
#                     preparing and loading the seccomp filters
#   make deps         install the Debian packages needed to build and test
#   make format       apply .clang-format; make format-check fails on drift

VERSION := 0.1.0
CC ?= cc
PKG_CONFIG ?= pkg-config
BUILD ?= build
PKGS := json-c libmd openssl yaml-0.1
# libseccomp is needed at build time only: src/gen/seccomp_gen compiles the
# seccomp filters into C that the library carries (see "Generated" below).
SECCOMP_PKG := libseccomp

WARNINGS := -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Wno-unused-parameter
CFLAGS ?= -O2 -g -D_FORTIFY_SOURCE=2
ALL_CPPFLAGS := -D_GNU_SOURCE -DAGENT_SANDBOX_VERSION='"$(VERSION)"' -Isrc/lib -Isrc $(CPPFLAGS)
ALL_CFLAGS := -std=gnu17 $(WARNINGS) -fstack-protector-strong \
	$(shell $(PKG_CONFIG) --cflags $(PKGS) $(SECCOMP_PKG)) $(CFLAGS)
LDLIBS ?= $(shell $(PKG_CONFIG) --libs $(PKGS))
SECCOMP_LDLIBS ?= $(shell $(PKG_CONFIG) --libs $(SECCOMP_PKG))

# libagent-sandbox.a holds everything but the command line; the binary is
# src/cli/ linked against it, and so are the tests, fuzzers and benchmarks.
LIB_SRC := $(sort $(wildcard src/lib/*.c src/lib/*/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_A := $(BUILD)/libagent-sandbox.a
CLI_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(filter-out src/cli/main.c,$(CLI_SRC)))
LIB_OBJ := $(CLI_OBJ) $(LIB_A)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRC))
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))

.PHONY: all static asan unit unit-build check fuzz bench deps format format-check clean

all: $(BUILD)/agent-sandbox

$(BUILD)/agent-sandbox: $(BUILD)/obj/cli/main.o $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LIB_A): $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/gen/seccomp_programs.o
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# Generated: the seccomp filters' BPF programs, from the rules in
# src/gen/seccomp_rules.c. The generator is built with $(CC), like the
# binary, so the programs are for the architecture agent-sandbox runs on (a
# cross build needs an emulator to run it, and fails loudly without one).
SECCOMP_RULES_OBJ := $(BUILD)/obj/gen/seccomp_rules.o

$(BUILD)/gen/seccomp_gen: $(BUILD)/obj/gen/seccomp_gen.o $(SECCOMP_RULES_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(SECCOMP_LDLIBS)

$(BUILD)/gen/seccomp_programs.c: $(BUILD)/gen/seccomp_gen
	$(BUILD)/gen/seccomp_gen >$@.tmp
	mv $@.tmp $@

$(BUILD)/gen/seccomp_programs.o: $(BUILD)/gen/seccomp_programs.c
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/unit:
	mkdir -p $@

$(BUILD)/unit/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJ) | $(BUILD)/unit
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJ) $(UNIT_EXTRA) $(LDLIBS) -lcmocka

# The seccomp test compiles the rules again to compare with what was built.
$(BUILD)/unit/test_seccomp: $(SECCOMP_RULES_OBJ)
$(BUILD)/unit/test_seccomp: UNIT_EXTRA = $(SECCOMP_RULES_OBJ) $(SECCOMP_LDLIBS)

unit-build: $(UNIT_BIN)

unit: unit-build
	@set -e; for t in $(UNIT_BIN); do $$t; done

# Not the default: it starts 0.25 ms faster per exec (the host side and the
# init inside each exec it), but static glibc serves getaddrinfo (the proxy's
# resolver) and getpwuid (the home directory) by loading the host's NSS
# modules of the glibc it was linked against, which a later glibc upgrade
# can break.
static:
	$(MAKE) BUILD=build/static LDFLAGS=-static \
		LDLIBS="$$($(PKG_CONFIG) --static --libs $(PKGS))" \
		SECCOMP_LDLIBS="$$($(PKG_CONFIG) --static --libs $(SECCOMP_PKG))" \
		build/static/agent-sandbox

ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
asan:
	$(MAKE) BUILD=build/asan CFLAGS="$(ASAN_CFLAGS)" LDFLAGS="-fsanitize=address,undefined" \
		build/asan/agent-sandbox unit-build $(if $(WITH_UNIT),unit)

check:
	tests/run

FUZZ_CFLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined
fuzz:
	$(MAKE) BUILD=build/fuzz CC=clang CFLAGS="$(FUZZ_CFLAGS)" $(patsubst fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))

build/fuzz/fuzz_%: fuzz/fuzz_%.c $(LIB_OBJ)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< $(LIB_OBJ) $(LDLIBS)

bench: all $(BUILD)/bench/seccomp
	bench/run
	bench/secret-scan
	bench/secret-watch
	$(BUILD)/bench/seccomp
	bench/serve-api
	bench/serve-agent

$(BUILD)/bench/secret_scan: bench/secret_scan.c $(LIB_OBJ)
	mkdir -p $(BUILD)/bench
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJ) $(LDLIBS)

$(BUILD)/bench/serve: bench/serve.c $(LIB_OBJ)
	mkdir -p $(BUILD)/bench
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJ) $(LDLIBS)

# The seccomp filters' cost per run: build/bench/seccomp [RUNS].
$(BUILD)/bench/seccomp: bench/seccomp.c $(LIB_OBJ)
	mkdir -p $(BUILD)/bench
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJ) $(LDLIBS)

deps:
	tests/install-deps

format:
	clang-format -i src/*/*.[ch] src/lib/*/*.[ch] tests/unit/*.[ch] fuzz/*.c bench/*.c

format-check:
	clang-format --dry-run --Werror src/*/*.[ch] src/lib/*/*.[ch] tests/unit/*.[ch] fuzz/*.c bench/*.c

clean:
	rm -rf build

-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d $(BUILD)/gen/*.d)
