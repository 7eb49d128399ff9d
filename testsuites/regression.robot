*** Settings ***
Documentation       Before/after: a baseline soak of the simulated fast board, then the same board
...                 (no regression) and a board whose kernel stage is 20 ms longer (a regression the
...                 keyword must catch and name). See docs/compare.md.
Library             OperatingSystem
Library             String
Library             rig.robot.BootRig    config=${CONFIG}    board=${BOARD}    AS    Baseline
Suite Setup         Make Slow Kernel Board

*** Variables ***
${CONFIG}           ${CURDIR}/../config/rig.toml
${BOARD}            ${CURDIR}/../config/boards/fast.toml
${CYCLES}           10
${THRESHOLD}        5ms
${REGRESSED}        Stage 'kernel' regressed: \\+\\d+\\.\\d\\d ms after - before \\(median shift, \\d+% CI \\+\\d+\\.\\d\\d ms \\.\\. \\+\\d+\\.\\d\\d ms, Mann-Whitney p = [0-9.e-]+\\); \\d+ measured boots in /.+ against \\d+ of baseline /.+

*** Test Cases ***
Baseline Soak
    ${summary}=    Baseline.Run Soak    cycles=${CYCLES}
    Set Suite Variable    ${BASELINE}    ${summary}[folder]

Same Board Does Not Regress
    Baseline.Measure Boots    ${CYCLES}
    # A practical threshold (as ChromeOS counts changes from 100 ms): the board's jitter
    # is about 1 ms, so a check run in every CI cannot fail by chance (2.5 % per check
    # at alpha 0.05 without one).
    ${result}=    Baseline.Stage Should Not Regress    kernel    baseline=${BASELINE}
    ...    last=${CYCLES}    threshold=${THRESHOLD}
    Should Be Equal    ${result}[verdict]    no_change
    Baseline.Stage Should Not Regress    power_to_ui    baseline=${BASELINE}    last=${CYCLES}
    ...    threshold=${THRESHOLD}

A Longer Kernel Is Caught
    Import Library    rig.robot.BootRig    config=${CONFIG}    board=${SLOW BOARD}    AS    Slow
    Slow.Run Soak    cycles=${CYCLES}
    Run Keyword And Expect Error    REGEXP:${REGRESSED}
    ...    Slow.Stage Should Not Regress    kernel    baseline=${BASELINE}    threshold=${THRESHOLD}
    Slow.Stage Should Not Regress    bootloader    baseline=${BASELINE}    threshold=${THRESHOLD}

*** Keywords ***
Make Slow Kernel Board
    ${text}=    Get File    ${BOARD}
    ${slow}=    Replace String    ${text}    duration_s = 0.12\n    duration_s = 0.14\n
    Should Not Be Equal    ${slow}    ${text}
    Create File    ${OUTPUT DIR}/fast-slow-kernel.toml    ${slow}
    Set Suite Variable    ${SLOW BOARD}    ${OUTPUT DIR}/fast-slow-kernel.toml
