*** Settings ***
Documentation       Energy budgets, stage by stage, from a bench supply's readings.
...                 ``robot testsuites/energy.robot`` powers the simulated board through its
...                 simulated SCPI supply (PyVISA, config/examples/sim-psu.toml) and checks
...                 each stage's joules against ``[boards.<board>.energy]`` in
...                 config/budgets.toml; ``--variable CONFIG:my-rig.toml`` checks a real rig
...                 whose ``[power]`` is a ``visa`` supply (budgets: its ``[board] budgets``
...                 or ``--variable BUDGETS:FILE``). A relay rig reads no current:
...                 its stages have no energy, and the keyword says so instead of passing.
Library             rig.robot.BootRig    config=${CONFIG}    AS    Bench
Library             rig.robot.BootRig    config=${RELAY CONFIG}    AS    Relay
Resource            resources/budgets.resource
Suite Setup         Bench.Load Budgets    ${BUDGETS}    default=${CURDIR}/../config/budgets.toml

*** Variables ***
${CONFIG}           ${CURDIR}/../config/examples/sim-psu.toml
${RELAY CONFIG}     ${CURDIR}/../config/rig.toml
${BUDGETS}          ${NONE}    # the rig config's [board] budgets, else the default
${JOULES}           \\d+\\.\\d{4} J

*** Test Cases ***
Board Boots On The Bench Supply
    Bench.Measure Boot
    Bench.Boot Should Succeed

Every Stage Is Within Its Energy Budget
    FOR    ${stage}    IN    bootloader    kernel    rootfs_mount    init    application
        Bench.Stage Energy Should Be Within Budget    ${stage}
    END

A Stage Over Its Energy Budget Names Boot, Joules, Overshoot And Artifacts
    [Documentation]    A budget that cannot be met, on purpose: checks what the failure says.
    Run Keyword And Expect Error
    ...    REGEXP:Boot ${RUN ID}: stage 'kernel' used ${JOULES} \\(± ${JOULES}\\), over its energy budget of 0\\.0010 J by ${JOULES} \\(\\+\\d+\\.\\d %\\)\\. Artifacts: /.+/${RUN ID}
    ...    Bench.Stage Energy Should Be Within Budget    kernel    0.001

A Relay Rig Has No Energy To Check
    [Documentation]    No supply, no readings: a failure that says why, never a pass.
    Relay.Load Budgets    ${BUDGETS}    default=${CURDIR}/../config/budgets.toml
    Relay.Measure Boot
    Run Keyword And Expect Error
    ...    Boot *: stage 'kernel' has no energy (the run has no supply readings: its power driver reads no current)*
    ...    Relay.Stage Energy Should Be Within Budget    kernel
