# showdown — build, test, benchmark and report.
# `make report` and `make test` are the two entry points (README.md); both install missing Debian
# packages first (`make deps`). Optional back-ends are detected by scripts/detect.sh into build/config.mk.

CC      ?= cc
CU      ?= /usr/local/cuda
PYTHON  ?= /usr/bin/python3
SANITIZE ?= 0
# Build lines are short (`CC src/nn/model.c`); V=1 prints the commands.
V ?= 0
ifeq ($(V),1)
Q :=
say =
else
Q := @
say = printf '  %-5s %s\n' $(1) $(2);
endif

ifeq ($(SANITIZE),1)
BUILD   := build/san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD   := build/rel
SANFLAGS :=
endif

# oneDNN: Debian's (2.6, found by scripts/detect.sh) unless DNNL_PREFIX names another install (its include/ and
# lib/; or DNNL_INC and DNNL_LIB apart, as PyPI's onednn wheels lay them out), e.g. a 3.x one: src/be_dnnl builds
# against both (be_dnnl/dnnl_compat.h). That build goes to $(BUILD)-dnnl, its binary too, the library's directory
# in its rpath.
DNNL_PREFIX ?=
DNNL_INC ?= $(if $(DNNL_PREFIX),$(DNNL_PREFIX)/include)
DNNL_LIB ?= $(if $(DNNL_PREFIX),$(DNNL_PREFIX)/lib)
ifneq ($(DNNL_INC),)
BUILD   := $(BUILD)-dnnl
endif

# Everything a fresh Debian 12 needs beyond make itself: the compiler, the libraries, the test tools, Debian's
# PyTorch (the framework measured on every machine) and Fashion-MNIST (the real data of the mnist workloads).
DEB_PKGS := gcc libc6-dev git python3 pkg-config libdnnl-dev libcurl4-openssl-dev libgit2-dev libcairo2-dev libpango1.0-dev \
            libjansson-dev libsqlite3-dev zlib1g-dev libcriterion-dev poppler-utils python3-torch \
            libopenblas0-pthread python3-venv slurm-wlm munge clang libclang-rt-14-dev libomp-14-dev \
            dataset-fashion-mnist libxml2-utils procps

PKGS    := libcurl libgit2 jansson sqlite3 zlib pangocairo cairo-pdf cairo-svg fontconfig
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# Set-up order: the Debian packages are installed first (scripts/deps.sh), then features (oneDNN, CUDA+cuDNN,
# PyTorch) are detected into build/config.mk, so the first build has what the install brought. Both run while
# make reads this file (build/config.mk is an included makefile), before any target. The detection is redone
# whenever build/deps.sig changes: a package installed or removed, the CUDA toolkit appearing or going.
# make report/test/deps (and the other jobs) install what is missing every time; plain `make` only on the
# first build, afterwards it builds with what is there and says what is missing. Sub-makes only look.
CONFIG_MK := build/config.mk
DEPS_SIG  := build/deps.sig
NOCONFIG_GOALS := clean fresh-check help
INSTALL_GOALS  := deps test report bench bench-cpu accuracy-parity gpu-check deps-frameworks
DEPS_MODE := $(if $(filter-out 0,$(MAKELEVEL)),check,$(if $(filter $(INSTALL_GOALS),$(MAKECMDGOALS)),install,first))
ifneq ($(filter-out $(NOCONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
-include $(CONFIG_MK)
endif
HAVE_DNNL  ?= 0
ifneq ($(DNNL_INC),)
HAVE_DNNL  := 1
endif
HAVE_CUDNN ?= 0
HAVE_TORCH ?= 0

GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
GIT_DIRTY  := $(shell test -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo 1 || echo 0)
VERSION    := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

CFLAGS_BASE := -std=c11 -fvisibility=hidden -fno-math-errno -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -O3 -g -march=native \
               -Wall -Wextra -Werror -Wno-format-truncation -fopenmp -MMD -MP -Isrc $(PKG_CFLAGS) $(SANFLAGS)
CFLAGS_BASE += -DSD_VERSION='"$(VERSION)"' -DSD_GIT_COMMIT='"$(GIT_COMMIT)"' -DSD_GIT_DIRTY=$(GIT_DIRTY)
CFLAGS_BASE += -DSD_HAVE_DNNL=$(HAVE_DNNL) -DSD_HAVE_CUDNN=$(HAVE_CUDNN)
LDLIBS_BASE := $(PKG_LIBS) -lm -fopenmp $(SANFLAGS)

OPT_DIRS := src/be_dnnl src/be_cudnn src/nccl
SRC      := $(filter-out src/main.c $(addsuffix /%,$(OPT_DIRS)),$(wildcard src/*.c src/*/*.c))
ifeq ($(HAVE_DNNL),1)
SRC      += $(wildcard src/be_dnnl/*.c)
ifneq ($(DNNL_INC),)
CFLAGS_BASE += -I$(DNNL_INC)
LDLIBS_BASE += -L$(DNNL_LIB) -Wl,-rpath,$(abspath $(DNNL_LIB))
endif
LDLIBS_BASE += -ldnnl
endif
CU_OBJ   :=
ifeq ($(HAVE_CUDNN),1)
SRC      += $(wildcard src/be_cudnn/*.c)
CFLAGS_BASE += -I$(CU)/include
CU_SRC   := $(wildcard src/be_cudnn/*.cu)
CU_OBJ   := $(patsubst src/%.cu,$(BUILD)/%.cu.o,$(CU_SRC))
NVCC     ?= $(CU)/bin/nvcc
# -fmad=false: the element kernels round like the host code the tests check (nn/kernels.h); -ftz=true: they
# flush denormals as the CPU back-ends do. SASS for sm_75 (T4, RTX 20xx: the oldest CUDA 13 supports) through
# sm_100, and PTX of the lowest so any newer GPU JIT-compiles them (tests/test_gencode.sh checks the objects).
CU_GENCODE := -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
              -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100 \
              -gencode arch=compute_75,code=compute_75
NVCCFLAGS := -O2 -std=c++17 -Isrc -Xcompiler -fPIC -fmad=false -ftz=true -MMD -MP $(CU_GENCODE)
# Never -lcuda (the driver stub): the binary must start on machines without a driver. The CUDA runtime is
# linked statically (it loads the driver on the first CUDA call); cuDNN, cuBLAS and NCCL are loaded on first
# use (src/be_cudnn/cu_dl.h), so none of them is NEEDED and CPU runs never map them. rpath: where dlopen looks.
LDLIBS_BASE += -L$(CU)/lib64 -Wl,-rpath,$(CU)/lib64 -lcudart_static -ldl -lrt -lpthread -lstdc++
# NCCL (data-parallel --gpus N) ships with CUDA here; its stubs are built when the header is found.
HAVE_NCCL := $(shell test -f $(CU)/include/nccl.h && echo 1 || echo 0)
endif
HAVE_NCCL ?= 0
CFLAGS_BASE += -DSD_HAVE_NCCL=$(HAVE_NCCL)
ifeq ($(HAVE_NCCL),1)
SRC      += $(wildcard src/nccl/*.c)
endif

OBJ      := $(patsubst src/%.c,$(BUILD)/%.o,$(SRC)) $(CU_OBJ)
LIB      := $(BUILD)/libshowdown.a
ifeq ($(SANITIZE),1)
BIN      := $(BUILD)/showdown
else ifneq ($(DNNL_INC),)
BIN      := $(BUILD)/showdown
else
BIN      := showdown
endif

TEST_C   := $(wildcard tests/test_*.c)
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_C))
TEST_SH  := $(wildcard tests/test_*.sh)
CRIT_LIBS := $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)

.PHONY: FORCE all deps config fresh-check test bench bench-cpu report clean fuzz fuzz-smoke fuzz-corpus gpu-check accuracy-parity deps-frameworks
all: $(BIN)

# ---- dependencies -----------------------------------------------------------------------------
deps: $(CONFIG_MK)
	@:

# Framework runners: TensorFlow, Keras 3 (TensorFlow, JAX, PyTorch backends), JAX, PaddlePaddle,
# MindSpore, tinygrad, Chainer from PyPI, one git-ignored virtual environment per framework under
# .venv-frameworks/ (pins: workloads/runners/requirements-frameworks.txt; what pip installed:
# .venv-frameworks/<venv>/installed.txt). `make test` does not need them; `showdown bench --impl all` uses them.
deps-frameworks: deps
	@$(MAKE) --no-print-directory $(BIN)
	@PYTHON=$(PYTHON) SHOWDOWN=./$(BIN) sh scripts/deps-frameworks.sh

$(DEPS_SIG): FORCE
	@mkdir -p build
	@CU="$(CU)" QUIET=$(if $(MAKE_RESTARTS),1,0) sh scripts/deps.sh $(DEPS_MODE) $@ $(DEB_PKGS)

$(CONFIG_MK): scripts/detect.sh $(DEPS_SIG)
	@mkdir -p build
	@CC="$(CC)" CU="$(CU)" PYTHON="$(PYTHON)" sh scripts/detect.sh $@

config:
	@rm -f $(CONFIG_MK); $(MAKE) --no-print-directory $(CONFIG_MK)

# ---- build ------------------------------------------------------------------------------------
# Objects depend on the flags they were built with (a changed -D or HAVE_* rebuilds them).
FLAGS_FILE := $(BUILD)/.flags
$(FLAGS_FILE): FORCE
	@mkdir -p $(BUILD)
	@echo '$(CC) $(CFLAGS_BASE) $(CFLAGS) $(NVCCFLAGS) $(LDLIBS_BASE)' > $@.new
	@cmp -s $@.new $@ && rm -f $@.new || mv $@.new $@
FORCE:

$(BUILD)/%.o: src/%.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(Q)$(call say,CC,$<)$(CC) $(CFLAGS_BASE) $(CFLAGS) -c $< -o $@

# The host RNN's gate loops vectorise only when GCC may evaluate their comparisons (exp's clamps) in every lane:
# with the default -ftrapping-math the LSTM backward's ran scalar. Nothing here reads the FP exception flags.
$(BUILD)/be_dnnl/dnnl_rnn.o: CFLAGS += -fno-trapping-math

$(BUILD)/%.cu.o: src/%.cu $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(Q)$(call say,NVCC,$<)$(NVCC) $(NVCCFLAGS) -MF $(@:.o=.d) -c $< -o $@

$(LIB): $(OBJ)
	@rm -f $@
	$(Q)$(call say,AR,$@)ar rcs $@ $^

$(BUILD)/main.o: src/main.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(Q)$(call say,CC,$<)$(CC) $(CFLAGS_BASE) $(CFLAGS) -c $< -o $@

$(BIN): $(BUILD)/main.o $(LIB)
	$(Q)$(call say,LD,$@)$(CC) -o $@ $^ $(LDLIBS_BASE) $(LDFLAGS)

# ---- tests ------------------------------------------------------------------------------------
$(BUILD)/tests/%: tests/%.c $(LIB) tests/testutil.h
	@mkdir -p $(dir $@)
	$(Q)$(call say,CC,$<)$(CC) $(CFLAGS_BASE) -Wno-missing-field-initializers $(CFLAGS) -Itests -o $@ $< $(LIB) $(CRIT_LIBS) $(LDLIBS_BASE) -Wl,--exclude-libs,ALL

test: deps
	@$(MAKE) --no-print-directory $(BIN) $(TEST_BIN) $(FUZZ_REPLAY)
	@if [ "$(FUZZ_OK)" = 1 ]; then $(MAKE) --no-print-directory fuzz; else echo "test: no $(FUZZ_CC) with libFuzzer: the fuzz smoke run will be skipped"; fi
	@SHOWDOWN_HOST_REF= LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 SHOWDOWN=$(abspath $(BIN)) BUILD=$(BUILD) CU=$(CU) PYTHON=$(PYTHON) FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/run-tests.sh $(TEST_BIN) $(TEST_SH)

# ---- fuzzing ------------------------------------------------------------------------------------
# One libFuzzer target per parser of outside bytes (fuzz/fuzz_<target>.c) over the library compiled again
# with clang, ASan and UBSan into build/fuzz. `make fuzz-smoke` runs each for FUZZ_SECONDS after replaying
# fuzz/regress/<target>/ (part of `make test`); longer runs: docs/reliability.md "Hostile input". The replay build
# ($(BUILD)/fuzz/replay_<target>, any compiler) runs the regression inputs in tests/test_fuzz_regress.sh.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
FUZZ_DIR     := build/fuzz
FUZZ_SRC     := $(wildcard fuzz/fuzz_*.c)
FUZZ_BIN     := $(patsubst fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_SRC))
FUZZ_REPLAY  := $(patsubst fuzz/fuzz_%.c,$(BUILD)/fuzz/replay_%,$(FUZZ_SRC))
FUZZ_LIBSRC  := $(filter-out src/main.c $(addsuffix /%,$(OPT_DIRS)),$(wildcard src/*.c src/*/*.c))
FUZZ_OBJ     := $(patsubst src/%.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_LIBSRC))
FUZZ_CFLAGS  := -std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -fopenmp -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wno-pass-failed -MMD -MP -Isrc $(PKG_CFLAGS) \
                -DSD_VERSION='"$(VERSION)"' -DSD_GIT_COMMIT='"fuzz"' -DSD_GIT_DIRTY=0 -DSD_HAVE_DNNL=0 -DSD_HAVE_CUDNN=0
# 1 when $(FUZZ_CC) can link a libFuzzer target (evaluated only where used).
FUZZ_OK = $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' | \
            $(FUZZ_CC) -x c -fsanitize=fuzzer,address - -o /dev/null 2>/dev/null && echo 1)

fuzz:
	@if [ "$(FUZZ_OK)" != 1 ]; then echo "fuzz: $(FUZZ_CC) cannot link a libFuzzer target (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; fi
	@$(MAKE) --no-print-directory $(FUZZ_BIN)

fuzz-smoke: fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) PYTHON=$(PYTHON) sh scripts/fuzz-smoke.sh

fuzz-corpus:
	@rm -rf $(FUZZ_DIR)/seeds && $(PYTHON) scripts/fuzz-corpus.py $(FUZZ_DIR)/seeds && echo "seeds in $(FUZZ_DIR)/seeds"

$(FUZZ_DIR)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(Q)$(call say,CC,$<)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/libshowdown.a: $(FUZZ_OBJ)
	@rm -f $@
	$(Q)$(call say,AR,$@)ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(FUZZ_DIR)/libshowdown.a
	$(Q)$(call say,LD,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_DIR)/libshowdown.a $(PKG_LIBS) -lm -fopenmp

$(BUILD)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/replay_main.c fuzz/fuzz.h $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(call say,CC,$<)$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $< fuzz/replay_main.c $(LIB) $(LDLIBS_BASE)

# ---- benchmarks and the report ------------------------------------------------------------------
bench: deps
	@$(MAKE) --no-print-directory $(BIN)
	@mkdir -p out/bench
	@# every back-end built; exit 4 (SD_EXIT_NODEV) means only that the GPU cells could not run here (they are
	@# in bench.json as failed, with the reason): the CPU comparison goes on
	./$(BIN) bench --workload mnist_mlp,mnist_cnn,cifar10_vgg --backend all --data synthetic --epochs 2 \
	    --batches 20 --repeat 3 --json out/bench/bench.json || [ $$? -eq 4 ]
	PYTHON=$(PYTHON) sh scripts/bench-cpu.sh ./$(BIN) out/bench
	bash scripts/bench-report.sh ./$(BIN) out/bench

# native dnnl vs PyTorch (newest installed: as shipped and at its best setting) on every workload, interleaved,
# fastest windows confirmed over rounds, peak memory and busy-machine flags; out/bench/cpu.json. WORKLOADS=a,b ROUNDS=N SECONDS_PER_CELL=S for less.
bench-cpu: deps
	@$(MAKE) --no-print-directory $(BIN)
	PYTHON=$(PYTHON) sh scripts/bench-cpu.sh ./$(BIN) out/bench

# mnist_mlp on Fashion-MNIST through dnnl and ref over 5 seeds: epoch-2 accuracies and their means (~10 min)
accuracy-parity: deps
	@$(MAKE) --no-print-directory $(BIN)
	PYTHON=$(PYTHON) sh scripts/accuracy-parity.sh ./$(BIN)

# The main job (docs/showdown.md; scripts/report.sh): install the pinned frameworks (REPORT_FRAMEWORKS=a,b or none
# limits it), then every workload on native and every installed framework (training and inference as shipped,
# framework cells capped in time), the best settings by bench-cpu's candidates (one quick round; FULL=1: its
# confirmed rounds), peak memory and the quick accuracy runs; scores, the published tables re-checked, the render.
# The inputs are recorded (out/report-runs/N/): `./showdown report` renders this report again byte for byte.
# RESUME=1 goes on from where a stopped or killed run stopped (the bench groups and best-setting choice it finished,
# out/report-state.txt); it starts anew if that run had other settings or none is recorded.
REPORT_FRAMEWORKS ?= all
FULL ?= 0
RESUME ?= 0
report: deps
	@$(MAKE) --no-print-directory $(BIN)
	@REPORT_FRAMEWORKS=$(REPORT_FRAMEWORKS) FULL=$(FULL) RESUME=$(RESUME) PYTHON=$(PYTHON) bash scripts/report.sh ./$(BIN)

# The acceptance test on a GPU machine (scripts/gpu-check.sh): one line per check and a verdict, exit 0 PASS,
# 1 FAIL, 4 CANNOT RUN (no device, or no cuDNN back-end in this build; make then reports Error 4). Test
# binaries run one Criterion job at a time (one CUDA context).
gpu-check:
	@$(MAKE) --no-print-directory $(BIN) $(BUILD)/tests/test_cudnn $(BUILD)/tests/test_parity $(BUILD)/tests/test_dp
	@LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 SHOWDOWN=$(abspath $(BIN)) BUILD=$(BUILD) \
	  HAVE_CUDNN=$(HAVE_CUDNN) CU=$(CU) PYTHON=$(PYTHON) sh scripts/gpu-check.sh

# The README's two commands on a fresh Debian 12 root made with debootstrap, from a clone of HEAD
# (scripts/fresh-check.sh says what it asserts). Needs root; about 25 minutes on 2 cores.
fresh-check:
	bash scripts/fresh-check.sh

clean:
	rm -rf build showdown

-include $(OBJ:.o=.d) $(BUILD)/main.d $(FUZZ_OBJ:.o=.d)
