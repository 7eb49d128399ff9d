# bootrig: `make demo` measures one boot of the simulated board, `make test` runs every test.
# Both set up what they need first (Debian packages, a virtualenv) and are safe to repeat.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RIG := $(BIN)/rig
APT_PACKAGES := sigrok-cli python3-venv influxdb chromium
CONFIG ?= config/rig.toml
BOARD ?=

.PHONY: setup demo test lint fmt pytest robot clean-venv influx-up influx-down

# Debian packages: installed only when missing, so repeated runs do not touch apt.
$(VENV)/.apt-ok:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@mkdir -p $(VENV) && touch $@

$(VENV)/.installed: $(VENV)/.apt-ok pyproject.toml
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $@

setup: $(VENV)/.installed

demo: setup
	$(RIG) run --config $(CONFIG) $(if $(BOARD),--board $(BOARD))

lint: setup
	$(BIN)/ruff check rig tests bench decoders
	$(BIN)/ruff format --check rig tests bench decoders

fmt: setup
	$(BIN)/ruff format rig tests bench decoders
	$(BIN)/ruff check --fix rig tests bench decoders

pytest: setup
	$(BIN)/pytest

robot: setup
	$(BIN)/robot --outputdir results/robot testsuites

test: lint pytest robot

# A private InfluxDB on 127.0.0.1 (data under results/influxdb), for `[influx]` in a config.
influx-up: setup
	$(RIG) influx serve --detach

influx-down: setup
	$(RIG) influx stop

clean-venv:
	rm -rf $(VENV)
