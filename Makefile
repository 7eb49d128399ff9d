# bootrig: `make demo` measures one boot of the simulated board, `make test` runs every test.
# Both set up what they need first (Debian packages, a virtualenv) and are safe to repeat.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RIG := $(BIN)/rig
# What a measured boot needs, and what only the tests need (a real InfluxDB server,
# a browser to render report.html).
APT_BASE := sigrok-cli python3-venv
APT_TEST := influxdb chromium ser2net
# The QEMU arm64 target (docs/qemu.md): QEMU, Debian's U-Boot, and what builds the
# kernels and root filesystem from Debian's linux-source-6.1 and -6.12 (the latter from
# bookworm-security) and busybox-static.
APT_QEMU := qemu-system-arm u-boot-qemu u-boot-tools linux-source-6.1 linux-source-6.12 \
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross bc bison flex libssl-dev cpio \
	e2fsprogs xz-utils perl patch gcc make
CONFIG ?= config/rig.toml
BOARD ?=

.PHONY: setup setup-test labgrid demo test lint fmt pytest robot clean-venv influx-up influx-down
.PHONY: robot-docs soak nightly nightly-install bench-soak bench-chaos qemu-images qemu-demo robot-qemu bisect-repo

# Debian packages: installed only when missing, so repeated runs do not touch apt.
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@mkdir -p $(VENV) && touch $@
endef

$(VENV)/.apt-ok: Makefile
	$(call apt_install,$(APT_BASE))

$(VENV)/.apt-test-ok: Makefile
	$(call apt_install,$(APT_BASE) $(APT_TEST))

$(VENV)/.apt-qemu-ok: Makefile
	$(call apt_install,$(APT_QEMU))

$(VENV)/.installed: $(VENV)/.apt-ok pyproject.toml
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $@

setup: $(VENV)/.installed

# labgrid in an environment of its own (docs/instruments.md, "labgrid"): it pins
# pyserial-labgrid, a fork that installs the same `serial` module as pyserial, so the two
# cannot share one. Its requirement is pyproject.toml's [tool.bootrig] labgrid.
LG_VENV := .venv-labgrid
$(LG_VENV)/.installed: $(VENV)/.apt-ok pyproject.toml
	@[ -x $(LG_VENV)/bin/python ] || $(PYTHON) -m venv $(LG_VENV)
	$(LG_VENV)/bin/pip install -q --upgrade pip
	$(LG_VENV)/bin/pip install -q $$($(PYTHON) -c 'import tomllib; \
	  print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["tool"]["bootrig"]["labgrid"]))')
	@touch $@

labgrid: $(LG_VENV)/.installed
	@echo "labgrid's Python (for [power] python): $(CURDIR)/$(LG_VENV)/bin/python"

setup-test: setup $(VENV)/.apt-test-ok

demo: setup
	$(RIG) run --config $(CONFIG) $(if $(BOARD),--board $(BOARD))

lint: setup
	$(BIN)/ruff check rig simboard tests bench decoders
	$(BIN)/ruff format --check rig simboard tests bench decoders

fmt: setup
	$(BIN)/ruff format rig simboard tests bench decoders
	$(BIN)/ruff check --fix rig simboard tests bench decoders

# The QEMU target's images, cached outside the repository (rebuilt only when an input
# changes; each kernel build takes minutes cold, a second when cached): with Linux 6.1
# and with 6.12, the 6.1 wireless variant (an initcall rig try can blacklist), and the
# hookless test bed: Debian's own arm64 kernel with a busybox
# initramfs (seconds).
qemu-images: setup $(VENV)/.apt-qemu-ok
	$(RIG) qemu build
	$(RIG) qemu build --config config/qemu-arm64-6.12.toml
	$(RIG) qemu build --config config/qemu-arm64-wifi.toml
	$(RIG) qemu build --config config/qemu-arm64-stock.toml

# The git repository `rig bisect` is tested on with the QEMU target (docs/bisect.md):
# linux-source-6.1 with our hooks plus eight small commits, its kernel objects started
# from the ones qemu-images keeps; cached outside the repository like the images.
bisect-repo: qemu-images
	bash firmware-hooks/qemu-arm64/bisect-repo.sh

# One measured boot of real U-Boot and Linux under QEMU, with initcall_debug so the
# report has the initcall breakdown (QEMU_ARGS= for a boot without it).
QEMU_ARGS ?= initcall_debug loglevel=8
qemu-demo: qemu-images
	$(RIG) run --config config/qemu-arm64.toml --set 'qemu.kernel_args="$(QEMU_ARGS)"'

# Everything the tests need is installed above, so under `make test` no test may skip:
# a missing tool or image fails its test, and any skip fails the run (tests/require.py).
pytest: setup-test qemu-images bisect-repo $(LG_VENV)/.installed
	BOOTRIG_REQUIRE_ALL=1 $(BIN)/pytest --durations=25

robot: setup-test
	$(BIN)/robot --outputdir results/robot testsuites

# The budget suite on the real kernel under QEMU (budgets: boards.qemu-arm64).
robot-qemu: setup-test qemu-images
	$(BIN)/robot --variable CONFIG:$(CURDIR)/config/qemu-arm64.toml \
	  --outputdir results/robot-qemu testsuites/boot_budget.robot

test: lint pytest robot robot-qemu

# A private InfluxDB on 127.0.0.1 (data under results/.influxdb), auth on: user bootrig,
# password in results/.influxdb/admin-password (0600); see docs/influxdb.md for `[influx]`.
influx-up: setup
	$(RIG) influx serve --detach

influx-down: setup
	$(RIG) influx stop

# The Robot library's keyword documentation (libdoc HTML), under results/docs/.
robot-docs: setup
	@mkdir -p results/docs
	$(BIN)/python -m robot.libdoc rig.robot.BootRig results/docs/BootRig.html

# A power-cycle soak: `make soak CYCLES=300`, `make soak SOAK_CONFIG=my-rig.toml`.
SOAK_CONFIG ?= config/nightly/soak.toml
CYCLES ?=
soak: setup
	$(BIN)/python -m rig.soak --config $(SOAK_CONFIG) $(if $(CYCLES),--cycles $(CYCLES))

# What the nightly timer runs: the soak, the Robot suites, then the trend gate
# (rig trend --mark --fail-on-new, docs/trend.md); outputs in results/nightly/<stamp>/.
nightly: setup
	config/nightly/nightly.sh

# Install the nightly systemd units for this checkout (user units by default; for the
# system manager: make nightly-install SYSTEMD_DIR=/etc/systemd/system).
SYSTEMD_DIR ?= $(HOME)/.config/systemd/user
nightly-install:
	@mkdir -p $(SYSTEMD_DIR)
	@for unit in bootrig-nightly.service bootrig-nightly.timer; do \
	  sed 's|@BOOTRIG_DIR@|$(CURDIR)|g' config/nightly/$$unit > $(SYSTEMD_DIR)/$$unit; \
	  echo "installed $(SYSTEMD_DIR)/$$unit"; \
	done
	@echo "now: systemctl [--user] daemon-reload && systemctl [--user] enable --now bootrig-nightly.timer"

# The soak under fire (>= 300 cycles, faults, InfluxDB outage, SIGKILL + resume).
bench-soak: setup
	$(BIN)/python bench/soak_faults.py

# Rig-side chaos (SIGTERM/SIGKILL + resume, full disk, InfluxDB down, relay gone, slow
# analyzer); root: it mounts a small tmpfs for the results. SEED=N repeats a run.
bench-chaos: setup
	$(BIN)/python bench/chaos.py $(if $(SEED),--seed $(SEED))

clean-venv:
	rm -rf $(VENV)
