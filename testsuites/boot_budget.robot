*** Settings ***
Documentation       Boot time budgets, boot by boot. ``robot testsuites/boot_budget.robot`` measures
...                 the simulated board of config/rig.toml against config/budgets.toml;
...                 ``--variable CONFIG:my-rig.toml`` measures another rig (a real one too)
...                 against the budgets file its ``[board] budgets`` names, or
...                 ``--variable BUDGETS:my-budgets.toml`` (the board must be in the file),
...                 ``--variable BOARD:config/boards/fast.toml`` boots another simulated board
...                 and ``--variable BOOTS:20`` repeats the per-boot check more often.
...                 ``--variable PLACE:b1`` boots the board of labgrid place b1 (held for the
...                 suite, always released); pabot runs it on many places at once, each
...                 board against its own budgets (docs/robot.md, "Many boards: pabot").
...                 Keywords: rig.robot.BootRig (``make robot-docs``, docs/robot.md).
Library             rig.robot.BootRig    config=${CONFIG}    board=${BOARD}    place=${PLACE}
Resource            resources/budgets.resource
Suite Setup         Load Budgets    ${BUDGETS}    default=${CURDIR}/../config/budgets.toml

*** Variables ***
${CONFIG}           ${CURDIR}/../config/rig.toml
${BOARD}            ${NONE}
${PLACE}            ${NONE}
${BUDGETS}          ${NONE}    # the rig config's [board] budgets, else the default
${BOOTS}            2

*** Test Cases ***
Board Boots To A Usable UI
    Measure Boot
    Boot Should Succeed

Every Stage Is Within Its Budget
    All Stages Should Be Within Budget

Kernel Is Within Its Budget
    Stage Should Be Within Budget    kernel

Power To UI Is Within Its Budget
    Power To UI Should Be Within Budget

Every Boot Of A Few More Is Within Budget
    Repeat Keyword    ${BOOTS} times    Measure Boot Within Budget

A Stage Over Budget Names Boot, Stage, Overshoot And Artifacts
    [Documentation]    A budget that cannot be met, on purpose: checks what the failure says.
    Run Keyword And Expect Error    REGEXP:${STAGE OVER BUDGET}
    ...    Stage Should Be Within Budget    kernel    1ms

A Misspelt Stage Is An Error, Not A Pass
    [Documentation]    A budget for a stage the rig does not measure must not pass silently.
    Run Keyword And Expect Error    Unknown stage 'kernal'*
    ...    Stage Should Be Within Budget    kernal    1s
