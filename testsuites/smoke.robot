*** Settings ***
Documentation       One measured boot of the simulated board through the real `rig` command:
...                 the artifact folder of the contract (docs/contract.md) is written and the boot succeeds.
...                 Budgets per stage come with boot_budget.robot.
Library             Process
Library             OperatingSystem
Library             Collections

*** Variables ***
${CONFIG}           config/rig.toml
${BOARD}            config/boards/fast.toml
${RIG}              .venv/bin/rig

*** Test Cases ***
Measured Boot Writes The Artifact Folder
    ${result}=    Run Process    ${RIG}    run    --config    ${CONFIG}    --board    ${BOARD}    --json
    ...    timeout=120s    on_timeout=kill
    Should Be Equal As Integers    ${result.rc}    0    msg=rig run failed: ${result.stderr}
    ${out}=    Evaluate    json.loads($result.stdout)    modules=json
    ${folder}=    Get From Dictionary    ${out}    folder
    FOR    ${name}    IN    run.json    console.jsonl    console.log    capture.sr    report.json
        File Should Exist    ${folder}/${name}
    END
    ${report}=    Get From Dictionary    ${out}    report
    Should Be Equal    ${report}[outcome]    ok
    Should Be True    ${report}[power_to_ui_s] > 0
