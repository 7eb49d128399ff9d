*** Settings ***
Documentation       A change must deliver the gain it is made for: the knobs board (every step an
...                 advisory's knob acts on, no run-to-run variance) booted with and without a change,
...                 interleaved. lpj=1495040 skips the kernel's delay-loop calibration (about 47 ms);
...                 the board's own advice uboot_bootdelay (bootdelay=0) skips the 1 s autoboot
...                 countdown. A change that gains less than stated, or nothing on the stage named,
...                 fails and says what it gained. See docs/robot.md, "Changes".
Library             rig.robot.BootRig    config=${CONFIG}    board=${BOARD}
Resource            resources/budgets.resource

*** Variables ***
${CONFIG}           ${CURDIR}/../config/rig.toml
${BOARD}            ${CURDIR}/../tests/data/boards/knobs.toml
${PAIRS}            4
# The simulated board has no first boot unlike the others: no warm-up boots to pay for.
${WARMUP}           0
${MS}               [+-]\\d+\\.\\d{3} ms
${LPJ}              Change sim\\.kernel_args="lpj=1495040"
${BOUND}            95% lower bound ${MS} \\(90% interval ${MS} \\.\\. ${MS}\\); ${PAIRS} boots with the change against ${PAIRS} without
${GAINS LESS}       ${LPJ} does not gain 100 ms on stage 'kernel': gain \\+4\\d\\.\\d{3} ms \\(without - with, median shift\\), ${BOUND}: its lower bound is under 100 ms\\. Boots: /.+/cost-${RUN ID}
${GAINS NOTHING}    Change uboot_bootdelay \\(sim\\.uboot_env\\.bootdelay="0"\\) does not gain 1 ms on stage 'kernel': gain [+-]0\\.\\d{3} ms \\(without - with, median shift\\), ${BOUND}: its lower bound is under 1 ms\\. Boots: /.+/cost-${RUN ID}

*** Test Cases ***
Skipping The Delay Calibration Gains 20 ms In The Kernel
    ${change}=    Try Change    sim.kernel_args="lpj=1495040"    pairs=${PAIRS}    warmup=${WARMUP}
    Should Be Equal    ${change}[outcomes_with]    ${{ {"ok": ${PAIRS}} }}
    Change Should Gain    kernel    20ms
    Change Should Gain    power_to_ui    20ms
    Run Keyword And Expect Error    REGEXP:${GAINS LESS}
    ...    Change Should Gain    kernel    100ms

The Advice To Skip The Autoboot Countdown Gains Its Second
    Measure Boot
    ${change}=    Try Advice    uboot_bootdelay    pairs=${PAIRS}    warmup=${WARMUP}
    Should Be Equal    ${change}[knob]    bootdelay=0
    Change Should Gain    bootloader    900ms
    Change Should Gain    kernel    -1ms    # costs the kernel at most 1 ms
    Run Keyword And Expect Error    REGEXP:${GAINS NOTHING}
    ...    Change Should Gain    kernel    1ms
