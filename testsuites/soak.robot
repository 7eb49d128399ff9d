*** Settings ***
Documentation       A short soak with statistical budgets: ${CYCLES} power cycles of the simulated
...                 fast board, then percentiles and the failure rate against config/budgets.toml.
...                 ``--variable CYCLES:300`` soaks longer, ``--variable CONFIG:my-rig.toml
...                 --variable BOARD:None`` soaks another rig, against the budgets file its
...                 ``[board] budgets`` names or ``--variable BUDGETS:my-budgets.toml``.
Library             rig.robot.BootRig    config=${CONFIG}    board=${BOARD}
Resource            resources/budgets.resource
Suite Setup         Load Budgets    ${BUDGETS}    default=${CURDIR}/../config/budgets.toml

*** Variables ***
${CONFIG}               ${CURDIR}/../config/rig.toml
${BOARD}                ${CURDIR}/../config/boards/fast.toml
${BUDGETS}              ${NONE}    # the rig config's [board] budgets, else the default
${CYCLES}               10
${MAX FAILURE RATE}     0 %

*** Test Cases ***
Soak Accounts For Every Cycle
    ${summary}=    Run Soak    cycles=${CYCLES}
    Should Be Equal As Integers    ${summary}[cycles][run]    ${CYCLES}
    Should Be Equal As Integers    ${summary}[cycles][classified]    ${CYCLES}
    Should Be Equal As Integers    ${summary}[cycles][unjournaled]    0
    Should Be Equal    ${summary}[status]    completed

Failure Rate Is Within Budget
    Failure Rate Should Be At Most    ${MAX FAILURE RATE}

Kernel p95 Is Within Budget
    Stage Percentile Should Be Within Budget    kernel    95

Init p95 Is Within Budget
    Stage Percentile Should Be Within Budget    init    95

Power To UI p95 Is Within Budget
    Power To UI Percentile Should Be Within Budget    95

Boot Times Vary Little
    ${stats}=    Get Stage Statistics    power_to_ui
    Should Be True    ${stats}[stddev] < 0.02    power-to-UI stddev ${stats}[stddev] s

A Percentile Over Budget Names The Slowest Boots
    [Documentation]    A statistical budget that cannot be met, on purpose: checks the message.
    Run Keyword And Expect Error    REGEXP:${P95 OVER BUDGET}
    ...    Stage Percentile Should Be Within Budget    kernel    95    10ms
