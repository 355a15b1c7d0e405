# The project's front door. `make run` and `make test` do all set-up on a fresh Debian 12 machine
# (`make run` installs the build's packages only, `make test` everything it uses); every other
# target is listed by `make help`.
BUILD   ?= build
JOBS    ?= $(shell nproc)
# Tests at a time: two per CPU. Most tests wait on their ranks' messages more than they compute,
# and a CPU kept busy is cheaper than one woken for every message: on the 2-core VM, make test's
# ctest took 384 s at -j 2 and 192 s at -j 4, with half the CPU time in all.
TEST_JOBS ?= $(shell echo $$(( 2 * $(JOBS) )))
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
CTEST   := ctest --test-dir $(BUILD) --output-on-failure -j $(TEST_JOBS)
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan

.PHONY: help deps deps-build configure build test check doxygen test-full test-gpu test-stress test-asan test-tsan fuzz docs notebooks figures cli-doc bench run clean format
.DEFAULT_GOAL := help

help:
	@echo "make run          train the default model on the embedded dataset (installs and builds only what it needs)"
	@echo "make test         install, build, run every test, build the docs, execute the notebooks; ends with a"
	@echo "                  table of where the time went (scripts/test_all.sh)"
	@echo "make check        a contributor's loop on a built tree: rebuild, the tests of the labels the change"
	@echo "                  touches, the layout and docs checks (CHECK_BASE=REV compares with REV; DEVELOPMENT.md)"
	@echo "make test-chN     run only chapter N's tests (e.g. make test-ch1)"
	@echo "make test-full    the larger test matrix"
	@echo "make test-gpu     the GPU tests on a machine with a CUDA device (a skip is a failure)"
	@echo "make test-stress  the tests that start processes, 10x each on one core beside a CPU hog (~45 min)"
	@echo "make test-asan    make test's tests (less the docs replay) under AddressSanitizer + UBSan, in $(ASAN_BUILD)/"
	@echo "make test-tsan    the threaded tests under ThreadSanitizer, in $(TSAN_BUILD)/"
	@echo "make fuzz         clang + libFuzzer build in build-fuzz/, each reader of untrusted bytes fuzzed for"
	@echo "                  FUZZ_SECONDS (default 60) s; FUZZ_TARGETS=\"cli ...\" picks some (tests/fuzz/README.md)"
	@echo "make chapter-N    build (quietly: one line, the log in $(BUILD)/chapter-build.log) and run chapter N's"
	@echo "                  program (e.g. make chapter-1)"
	@echo "make deps         install missing Debian packages (apt-get as root); make deps-build: only the build's"
	@echo "make build        configure and build into $(BUILD)/ (Release)"
	@echo "make docs         Doxygen API docs into $(BUILD)/docs (warnings are errors)"
	@echo "make notebooks    execute notebooks/ headlessly; plots go to $(BUILD)/notebooks"
	@echo "make figures      rerun the programs behind the chapters' figures and redraw them (chapters/*/figures/,"
	@echo "                  scripts/figures/; FIGURES_FLAGS=--retime also replaces the committed trace times)"
	@echo "make cli-doc      regenerate docs/cli.md from the programs' flag declarations (--help-markdown)"
	@echo "make bench        GEMM, model (fp32/bf16/fp16 at 1 and all threads), ZeRO stages and, when installed,"
	@echo "                  PyTorch side by side: one table and $(BUILD)/bench/summary.json (BENCH_FLAGS=--quick)"
	@echo "make format       lay out the C++ sources as .clang-format says (clang-format 14)"
	@echo "make clean        remove $(BUILD)/"

deps:
	@scripts/deps.sh

deps-build:
	@scripts/deps.sh build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Every phase timed, and a table of them at the end (also on failure); CI runs exactly this.
test:
	@BUILD=$(BUILD) JOBS=$(JOBS) TEST_JOBS=$(TEST_JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" scripts/test_all.sh

# CHECK_BASE: the revision the change is measured against (default: HEAD, i.e. the uncommitted
# work; with none, the last commit). CHECK_LABELS="5 7" chooses the chapters instead.
CHECK_BASE ?=
CHECK_LABELS ?=
check:
	@BUILD=$(BUILD) JOBS=$(JOBS) TEST_JOBS=$(TEST_JOBS) CHECK_BASE="$(CHECK_BASE)" CHECK_LABELS="$(CHECK_LABELS)" scripts/check.sh

test-full: build
	$(CTEST)

test-gpu: build
	scripts/test_gpu.sh $(BUILD)

# REPEAT=N to change the 10 repetitions (scripts/test_stress.sh says what runs and why).
REPEAT ?= 10
test-stress: build
	scripts/test_stress.sh $(BUILD) $(REPEAT)

# Sanitizer builds: each in its own folder, RelWithDebInfo (-O2 -g) plus cmake/ZtSanitize.cmake's
# flags; scripts/test_sanitizer.sh sets the sanitizer options and fails on any report file, also
# one written by a child process whose exit status the test did not see.
$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZT_SANITIZE=address,undefined $(CMAKE_FLAGS)

$(TSAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZT_SANITIZE=thread $(CMAKE_FLAGS)

# make test's selection (-LE full) less the docs replay, which runs every command the chapters
# quote one after another (over 20 minutes under ASan on the 2-core machine; the labelled tests
# start the same programs).
test-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	scripts/check_gpu_build.sh $(ASAN_BUILD)
	scripts/test_sanitizer.sh address $(ASAN_BUILD) -j $(JOBS) -LE 'full|docs'

# The threaded code: chapters 4-14, where ranks are threads, the collectives' work threads run,
# the offload tiers' transfer threads move bytes and the TCP store server answers. Chapters
# 1-3 run one thread per program (OpenBLAS's own threads are not instrumented); the docs replay
# starts the same programs as the labelled tests; the two-host tests time a partition against
# --timeout-s, which ThreadSanitizer's 5-15x slowdown would stretch, and need root.
test-tsan: deps $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	scripts/test_sanitizer.sh thread $(TSAN_BUILD) -j $(JOBS) -L 'ch([4-9]|1[0-4])' -LE 'full|docs|fuzz|multihost'

fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) scripts/fuzz.sh $(FUZZ_TARGETS)

test-ch%: build
	$(CTEST) -L 'ch$*$$'

# deps as `make build` runs it (silent when nothing is missing); the script configures and builds
# quietly into $(BUILD)/chapter-build.log and prints one line about it before the chapter's output.
chapter-%: deps
	@JOBS=$(JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" scripts/run_chapter.sh $(BUILD) $*

docs: deps
	@$(MAKE) --no-print-directory doxygen

doxygen:
	@mkdir -p $(BUILD)/docs
	doxygen docs/Doxyfile
	@echo "docs: $(BUILD)/docs/html/index.html (zero warnings)"

notebooks: build
	JOBS=$(TEST_JOBS) scripts/run_notebooks.sh $(BUILD)

# Each figure's data (NAME.json) from runs of the programs or a closed form, its SVG drawn from that
# data alone; the `docs` test tests/figures checks that both are current.
FIGURES_FLAGS ?=
bench: build
	/usr/bin/python3 bench/summary.py $(BUILD) $(BENCH_FLAGS)

cli-doc: build
	/usr/bin/python3 scripts/cli_doc.py $(BUILD) --write .

figures: build
	/usr/bin/python3 scripts/figures/figlib.py make $(BUILD) $(FIGURES_FLAGS)

# Only what the main job needs: the build's packages and zero-train with the libraries it links.
run: deps-build
	@$(MAKE) --no-print-directory $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target zero-train
	scripts/run_main.sh $(BUILD)

format: deps
	find src tests chapters bench -type f \( -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print0 | xargs -0 clang-format -i

clean:
	rm -rf $(BUILD)
