# Converge — the two commands a new user needs are `make run` and `make test`.
# Everything else here is a convenience around CMake + Ninja.

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
# The release tests mostly wait on servers and timers (a -j2 run keeps about a quarter of two
# cores busy): twice as many at a time as there are cores. Sanitizer tests are CPU-bound: -j JOBS.
TEST_JOBS  ?= $(shell echo $$(( $$(nproc) * 2 )))
DATA_DIR   ?= data
LISTEN     ?= 127.0.0.1:6443
NODES      ?= 3
FUZZ_SECONDS ?= 5
# UNITY=ON compiles $(BUILD) in unity batches (CONVERGE_UNITY): a cold build takes about a third
# less compile CPU, but an edit recompiles its whole batch. .ci/run sets it; the default keeps
# incremental rebuilds file by file (docs/PERFORMANCE.md, "Build and CI time").
UNITY      ?= OFF

.PHONY: all deps configure build run test test-unit test-sanitizers build-asan build-tsan test-asan test-tsan bench fuzz format clean

all: build

deps:
	@./scripts/install-deps.sh

# Configures $(BUILD) when it has no build.ninja yet, and again when its CONVERGE_UNITY differs
# from UNITY: a build directory configured with the other setting must not silently keep it.
CONFIGURE = cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCONVERGE_UNITY=$(UNITY)
configure:
	@if [ ! -f $(BUILD)/build.ninja ] || \
	    ! grep -qx 'CONVERGE_UNITY:BOOL=$(UNITY)' $(BUILD)/CMakeCache.txt; then \
	  echo '$(CONFIGURE)' && $(CONFIGURE); \
	fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Starts the all-in-one server with its data in ./data and prints how to point kubectl at it.
run: deps build
	@./scripts/run.sh $(BUILD)/converge $(DATA_DIR) $(LISTEN) $(NODES)

# Builds and runs every test (unit, integration, e2e with the real kubectl).
test: deps build
	ctest --test-dir $(BUILD) --output-on-failure -j $(TEST_JOBS) --timeout 900

# The store and the client library's concurrent pieces under ASan/UBSan and TSan.
test-sanitizers: test-asan test-tsan

# Line tables (-g1) are all a sanitizer report needs for file:line and inlined frames.
# Both compile in unity batches (CONVERGE_UNITY; docs/PERFORMANCE.md, "Build and CI time").
ASAN_CONFIGURE = cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCONVERGE_SANITIZE=address -DCONVERGE_BUILD_BENCH=OFF -DCONVERGE_DEBUG_INFO=lines -DCONVERGE_UNITY=ON
TSAN_CONFIGURE = cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVERGE_SANITIZE=thread -DCONVERGE_BUILD_BENCH=OFF -DCONVERGE_DEBUG_INFO=lines -DCONVERGE_UNITY=ON

# build-asan and build-tsan only build (.ci/run compiles one while the release tests run).
build-asan: deps
	$(ASAN_CONFIGURE)
	cmake --build build-asan -j $(JOBS) --target sanitizer_tests

build-tsan: deps
	$(TSAN_CONFIGURE)
	cmake --build build-tsan -j $(JOBS) --target sanitizer_tests

test-asan: build-asan
	ctest --test-dir build-asan --output-on-failure -j $(JOBS) -L sanitize --timeout 900

test-tsan: build-tsan
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --test-dir build-tsan --output-on-failure -j $(JOBS) -L sanitize --timeout 900

# Every libFuzzer target (src/*/*_fuzz.cc), built with clang in build-fuzz/, FUZZ_SECONDS each.
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(JOBS) ./scripts/fuzz-smoke.sh

bench: deps build
	./scripts/bench.sh $(BUILD)

format:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan build-tsan
