# Front door. `make run` and `make test` work on a fresh Debian machine: they install what is missing.
BUILD ?= build
CC_NAME ?= g++
CGOV_WERROR ?= OFF
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: all deps configure build run test bench clang-build format clean

all: build

deps:
	@scripts/install-deps

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_CXX_COMPILER=$(CC_NAME) \
	  -DCGOV_WERROR=$(CGOV_WERROR) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Until `cgov demo` exists, `make run` shows what this machine offers and then the same
# check against the fake driver with 8 simulated H100s, so a GPU-less laptop sees something real.
run: build
	@$(BUILD)/cgov doctor || true
	@echo
	@echo "== the same, against the fake NVML driver (8 simulated GPUs) =="
	@CGOV_FAKE_NVML_SCENARIO=tests/fake_nvml/scenarios/h100x8.json \
	  $(BUILD)/cgov doctor --nvml-lib $(BUILD)/fake_nvml/full/libnvidia-ml.so.1

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@$(BUILD)/cgov_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

# The same tree built with clang++ (sanitizer and fuzz builds use it).
clang-build:
	@$(MAKE) --no-print-directory build BUILD=build-clang CC_NAME=clang++

format:
	@clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) build-clang
