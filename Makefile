# Front door. `make run` and `make test` work on a fresh Debian machine: they install what is missing.
BUILD ?= build
CC_NAME ?= g++
CGOV_WERROR ?= OFF
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
# Tests at once: four times the cores, as many end-to-end tests wait on a daemon's ticks, a
# server or a job rather than compute: at -j 8 on 2 cores both suites keep the cores busy
# (96-99 %, from /proc/stat; docs/benchmarks.md: the suite's wall time at -j 2, -j 4 and -j 8).
TEST_JOBS ?= $(shell echo $$(( $$(nproc) * 4 )))
# What scripts/install-deps installs (empty: everything; --run: what `make run` needs) and which
# parts are configured: `make run` builds only cgov and the fake driver, without the test tools.
DEPS ?=
PARTS ?= -DCGOV_BUILD_TESTS=ON -DCGOV_BUILD_BENCH=ON

.PHONY: all deps configure build run test install deb dist portable san-build sanitize fuzz bench clang-build format include-check clean

all: build

deps:
	@scripts/install-deps $(DEPS)

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_CXX_COMPILER=$(CC_NAME) \
	  -DCGOV_WERROR=$(CGOV_WERROR) $(PARTS) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# `make run` shows what this machine offers, wraps a 6-second job on 8 simulated H100s (the fake
# NVML driver), reports a simulated week of a shared box (with deploy/budgets' example budgets),
# and shows the daemon's /metrics: a GPU-less laptop sees every part. It installs and builds only
# what that needs (the binary and the fake driver; README has the time on a fresh 2-core machine);
# `make test` installs and builds the rest in the same tree.
run:
	@$(MAKE) --no-print-directory configure DEPS=--run \
	  PARTS="-DCGOV_BUILD_TESTS=OFF -DCGOV_BUILD_BENCH=OFF"
	@cmake --build $(BUILD) -j $(JOBS) --target cgov fake_nvml_all
	@$(BUILD)/cgov doctor || true
	@echo
	@echo "== cgov run -- sleep 6, on 8 simulated H100s (a starved data loader, a held notebook GPU) =="
	@CGOV_FAKE_NVML_SCENARIO=tests/fake_nvml/scenarios/h100x8_fast.json \
	  $(BUILD)/cgov run --nvml-lib $(BUILD)/fake_nvml/full/libnvidia-ml.so.1 \
	    --out $(BUILD)/make-run --force --interval 200ms --tag project=demo -- sleep 6
	@echo
	@echo "== cgov demo: a shared 8-GPU box, a simulated week at 1 Hz, then cgov report --since 7d --plan =="
	@$(BUILD)/cgov demo --db $(BUILD)/demo.db --force --duration 7d
	@$(BUILD)/cgov report --db $(BUILD)/demo.db --since 7d --budgets deploy/budgets/budgets.example.toml --plan
	@$(BUILD)/cgov report --db $(BUILD)/demo.db --since 7d --budgets deploy/budgets/budgets.example.toml --plan \
	  --format html --out $(BUILD)/demo-week.html
	@echo
	@echo "HTML reports (open in a browser; one self-contained file each, docs/html-report.md):"
	@echo "  the demo week: $(BUILD)/demo-week.html"
	@echo "  the run:       $(BUILD)/make-run/report.html"
	@echo
	@echo "== cgov daemon --listen: what Prometheus scrapes from a shared 4-GPU box (3 s; docs/metrics.md) =="
	@rm -f $(BUILD)/make-run-daemon.db*; \
	  CGOV_FAKE_NVML_SCENARIO=tests/fake_nvml/scenarios/shared_box.json $(BUILD)/cgov daemon \
	    --db $(BUILD)/make-run-daemon.db --interval 1s --nvml-lib $(BUILD)/fake_nvml/full/libnvidia-ml.so.1 \
	    --host-root tests/fixtures/proc/shared-box --hostname demo-box --price-per-gpu-hour 2.50 \
	    --listen 127.0.0.1:19400 2>/dev/null & pid=$$!; sleep 3.5; \
	  curl -s 127.0.0.1:19400/metrics | grep -E '^(DCGM_FI_DEV_GPU_UTIL|cgov_gpu_phase_seconds_total.*phase="idle_held"|cgov_identity_cost_usd_total)' \
	    | sed -E 's/,(device|modelName|pci_bus_id|UUID)="[^"]*"//g'; \
	  kill $$pid; wait $$pid 2>/dev/null || true

test: build
	@cd $(BUILD) && ctest --output-on-failure --no-tests=error -j $(TEST_JOBS)

# The binary (stripped), its man page and shell completions, the systemd unit, docs and deploy/
# files under PREFIX, staged under DESTDIR when given.
PREFIX ?= /usr/local
install: build
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX) --strip

# The Debian package, Depends from dpkg-shlibdeps: $(BUILD)/cgov_VERSION_ARCH.deb.
deb: build
	@scripts/make-deb $(BUILD)

# The release archive with install.sh and checksums: $(BUILD)/cgov-VERSION-linux-ARCH.tar.gz.
dist: build
	@scripts/make-dist $(BUILD)

# The portable build (glibc 2.31+: Debian 11, Ubuntu 20.04/22.04, RHEL 9), compiled in a Debian 11
# root (debootstrap; root needed), its archive and .deb in $(PORTABLE)/dist, then checked there:
# glibc floor, apt install on a fresh Debian 11, cgov run, daemon --listen and report on the
# fake driver (docs/install.md). Run it before a release (too long for CI: docs/install.md).
PORTABLE ?= build-portable
portable:
	@scripts/make-portable $(PORTABLE)
	@scripts/check-portable $(PORTABLE)

bench: build
	@$(BUILD)/cgov_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
	@python3 bench/daemon_overhead.py $(BUILD)
	@python3 bench/daemon_overhead.py $(BUILD) --ratio --ticks 20 --runs 3
	@python3 bench/run_overhead.py $(BUILD)
	@bash bench/history_bench.sh $(BUILD)/cgov
	@bash bench/kube_overhead.sh $(BUILD)
	@/usr/bin/python3 bench/fleet_scale.py $(BUILD)
	@if command -v nvidia-smi >/dev/null 2>&1; then \
	  echo "== what each NVML call costs on this driver, back to back and once a second (docs/validation.md) =="; \
	  $(BUILD)/cgov_nvml_calls --paced 1000:10; \
	  echo "== cgov daemon and cgov run on this driver, from outside the process =="; \
	  python3 bench/real_driver_overhead.py $(BUILD) $(BUILD)/real-overhead; fi
	@echo "== /metrics under load (cgov daemon --listen, 8 simulated H100s) =="
	@$(BUILD)/cgov_scrape_load $(BUILD)/cgov $(BUILD)/fake_nvml/full/libnvidia-ml.so.1 \
	  tests/fake_nvml/scenarios/h100x8.json

# Unit and e2e tests under AddressSanitizer + UndefinedBehaviorSanitizer (clang++).
# -fno-sanitize=function: the fake NVML is C++ with its own declarations, so calls through
# dlsym'd pointers differ in C++ type identity (not in ABI); the real driver is C and has none.
# CGOV_BUILD_FUZZ: the libFuzzer targets are built in the same tree (make fuzz), and cgov_core
# gets their coverage instrumentation (CMakeLists.txt).
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize=function -fno-omit-frame-pointer
# Line tables are what a sanitizer's report symbolizes (function, file, line); lld links the
# tree's ~20 instrumented executables several times faster than ld (docs/benchmarks.md).
SAN_DEBUG = -gline-tables-only
SAN_LINK = -fuse-ld=lld
san-build:
	@$(MAKE) --no-print-directory build BUILD=build-asan CC_NAME=clang++ \
	  CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Debug -DCGOV_BUILD_BENCH=OFF -DCGOV_STATIC_LIBSTDCXX=OFF \
	    -DCGOV_UNIT_TEST_SHARDS=16 -DCGOV_PIE=OFF \
	    -DCGOV_LINK_SQLITE=ON \
	    -DCGOV_BUILD_FUZZ=ON -DCMAKE_CXX_FLAGS='$(SAN_FLAGS)' \
	    -DCMAKE_CXX_FLAGS_DEBUG='$(SAN_DEBUG)' \
	    -DCMAKE_EXE_LINKER_FLAGS='$(SAN_FLAGS) $(SAN_LINK)' \
	    -DCMAKE_SHARED_LINKER_FLAGS='$(SAN_FLAGS) $(SAN_LINK)'"

# The suite runs every test but those tests/sanitizer-skip.txt lists, each with its reason (a
# measurement, or an outside program's work whose cgov code paths other tests run under the
# sanitizers; docs/benchmarks.md, "CI"). The
# demo weeks the reports read are written by the optimized tree's cgov (CGOV_DEMO_WRITER: the
# same bytes, 45 times faster than the instrumented -O0 binary); every
# test's timeouts are 4 times as long (CGOV_TEST_TIME_SCALE, tests/e2e/process_runner.h).
SAN_SKIP := ^($(shell sed -e 's/[[:space:]]*\#.*//' -e '/^$$/d' -e 's/\./\\./g' \
  tests/sanitizer-skip.txt | paste -sd'|' -))$$
sanitize: build san-build
	@cd build-asan && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ASAN_OPTIONS=detect_leaks=1 CGOV_DEMO_WRITER=$(CURDIR)/$(BUILD)/cgov CGOV_TEST_TIME_SCALE=4 \
	  ctest --output-on-failure --no-tests=error -j $(TEST_JOBS) -E '$(SAN_SKIP)'

# Every libFuzzer target for FUZZ_SECONDS each (60 by default; CI runs a short smoke), from the
# seed corpora in fuzz/corpus; a finding fails the run and is kept (docs/fuzzing.md). Then the
# ledger's generated boxes, LEDGER_BOXES of them (50 a fuzz second: 3,000 by default;
# docs/analysis.md). CI runs scripts/fuzz alone, 10 s a target beside the sanitizer suite
# (.ci/run), the boxes being its two suites' (200 each).
FUZZ_SECONDS ?= 60
LEDGER_BOXES ?= $(shell echo $$(( $(FUZZ_SECONDS) * 50 )))
fuzz: san-build
	@scripts/fuzz build-asan $(FUZZ_SECONDS)
	@if [ "$(LEDGER_BOXES)" -gt 0 ]; then CGOV_LEDGER_BOXES=$(LEDGER_BOXES) \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  build-asan/cgov_unit_tests --gtest_filter='LedgerProperties.*' --gtest_brief=1; fi

# The same tree built with clang++ (sanitizer and fuzz builds use it).
clang-build:
	@$(MAKE) --no-print-directory build BUILD=build-clang CC_NAME=clang++

format:
	@$$(command -v clang-format-14 || echo clang-format) -i $$(git ls-files '*.cc' '*.h')

# Each C++ file compiled on its own (the unity batches hide a missing #include): by default the
# files changed since .ci/include-check-base and their includers; INCLUDE_CHECK=--all for all.
include-check:
	@scripts/check-includes $(INCLUDE_CHECK)

clean:
	rm -rf $(BUILD) build-clang build-asan
