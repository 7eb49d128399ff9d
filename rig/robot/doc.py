"""The library introduction shown by libdoc (Robot Framework documentation format)."""

LIBRARY_DOC = """\
Measures embedded Linux boot time on a bootrig rig and checks it against time budgets.

A boot is measured from the power edge (the debounced rising edge of the supply rail on
the logic analyzer) to the ``ui_ready`` marker, and split into the stages of the rig
configuration (by default ``bootloader``, ``kernel``, ``rootfs_mount``, ``init`` and
``application``). Every boot keeps its raw artifacts in ``results/<run-id>/``, and
every failure message says where they are.

== Table of contents ==

%TOC%

= Setting up =

Import the library with the rig configuration to use. Paths are relative to the
directory Robot Framework runs in; the suites shipped in ``testsuites/`` pass
``${CURDIR}``-based defaults and take ``--variable CONFIG:other.toml``.

| =Setting= | =Value=           | =Value=               | =Value=                        |
| Library   | rig.robot.BootRig | config=${CONFIG}      |                                |
| Library   | rig.robot.BootRig | config=${CONFIG}      | board=config/boards/fast.toml  |
| Library   | rig.robot.BootRig | config=${CONFIG}      | place=${PLACE}                 |

The library has suite scope: the instruments (relay, console, logic analyzer, and the
simulated board when the config has a ``[sim]`` table) are opened at the first power
cycle of a suite and released when the suite ends, also when a test fails. A console
port that died during a boot (USB adapter unplugged) is reopened before the next one.

With ``place``, the board is that of a labgrid place, as for ``rig run --place``: the
place is acquired with the instruments and held for the whole suite, so no one else
takes the board between its boots, and released when the suite ends. One suite per
place on a host at a time: a second one fails naming the first's PID (labgrid cannot
tell two processes of one user apart). pabot runs a suite on many places at once, one
argument file per place (docs/robot.md, "Many boards: pabot"); the suite's metadata
names its ``Board``, ``Variant``, ``Config`` and ``Place``.

= Measuring boots =

`Measure Boot` power-cycles the target once and analyzes the boot; `Measure Boots`
does it N times; `Run Soak` runs a whole soak like ``rig soak`` (journal, summary,
InfluxDB). `Power Cycle Target` and `Analyze Boot` are the two halves of
`Measure Boot`. Every measured boot is remembered for the rest of the suite: the
checks on a single boot look at the latest one, the statistical checks at the last N.

The report of a boot is a dictionary (``report.json``, see docs/artifacts.md):

| =Key=          | =Meaning= |
| run_id         | the boot id, also the name of its artifact folder |
| outcome        | ``ok`` or a failure class, see `Outcomes` |
| power_to_ui_s  | seconds from the power edge to the ``ui_ready`` marker |
| stages         | list of ``{name, start_s, end_s, duration_s, source, uncertainty_s}`` |

= Budgets =

A budget is the longest a stage (or the whole power-to-UI) may take. Give it to the
keyword as a Robot Framework time (``1.3s``, ``140 ms``, ``0.14``), or load the
budgets of the rig's board from ``config/budgets.toml`` with `Load Budgets`:

| [boards.fastboard]
| power_to_ui_s = 0.40
|
| [boards.fastboard.stages]
| kernel = 0.15
|
| [boards.fastboard.percentiles.95]
| kernel = 0.14
| power_to_ui_s = 0.39

A ``[boards.<board>.variants.<variant>]`` table changes the board's budgets for one
variant, key by key: a stage (or percentile) it does not name keeps the board's budget.
The same file and rule give the Grafana budget lines and ``rig soak``'s verdicts. A
keyword given no budget uses the loaded ones (and, if nothing was loaded, the budgets file
the rig config names with ``[board] budgets``, else ``budgets.toml`` next to the rig
config).

Statistical budgets (`Stage Percentile Should Be Within Budget`) check a percentile
over the last N measured boots; percentiles interpolate linearly between closest ranks.
Boots that did not measure the stage are left out of the percentile and counted by
`Failure Rate Should Be At Most`.

= Outcomes =

Each boot gets an outcome from the evidence in its artifacts; the values are those of
`Outcome` (the report's ``outcome`` string, ``hang_in_<stage>`` for a hang), and
`Boot Outcome Should Be` takes one:

| =Outcome=          | =Evidence= |
| ok                 | the boot reached its UI (boundaries without hooks are notes, not failures) |
| hang_in_<stage>    | the UI was never reached: the stage after the last boundary seen |
| panic              | the kernel's panic line (``Kernel panic - not syncing``) on the console |
| missing_marker     | a hook the boot shows it has did not fire, or quiet hides the UI's tag |
| console_lost       | the console ended before the UI tag: its port died, or no byte arrived |
| no_power_edge      | the capture shows no debounced power-up (relay or supply) |
| reset              | the board started again during its boot: only its first boot is timed |
| analyzer_error     | the logic analyzer capture could not be taken (console artifacts kept) |
| rig_error          | the rig itself failed during the cycle |
| interrupted        | Ctrl-C or SIGTERM stopped the run before the boot ended |
| invalid_artifacts  | the artifacts contradict themselves |

The last four say how the run fared, not the board: failure rates leave them out.

= Changes =

`Try Change` boots the board with a change (config overrides ``KEY=VALUE``, as ``rig
run --set`` takes them) and without it, interleaved, as ``rig cost`` does; `Try Advice`
does it with the knob of an advisory of a boot's report, as ``rig try`` does. `Change
Should Gain` then fails unless the gain on a stage (without - with, the Hodges-Lehmann
shift) is at least the stated one by its one-sided lower bound, and names the gain, the
bound, the interval, the boots and their folder (docs/robot.md, "Changes"):

| Try Change         | sim.kernel_args="lpj=1495040" | pairs=5 |
| Change Should Gain | kernel                        | 20ms    |

= Failure messages =

A budget failure is one sentence with the boot id, the stage, the measured time, the
budget, the overshoot and the artifact folder:

| Boot 20250101T020304Z-a1b2c3: stage 'kernel' took 1.402153 s, over its budget of
| 1.300000 s by 0.102153 s (+7.9 %). Artifacts: /lab/results/20250101T020304Z-a1b2c3

A percentile failure names the three slowest boots and their folders.

= Examples =

| *** Settings ***
| Library    rig.robot.BootRig    config=config/rig.toml
|
| *** Test Cases ***
| Boot Meets Its Budgets
|     Load Budgets    config/budgets.toml
|     Measure Boot
|     Boot Should Succeed
|     Stage Should Be Within Budget    kernel    1.3s
|     Power To UI Should Be Within Budget
|
| Kernel Is Fast Enough Nineteen Times Out Of Twenty
|     Measure Boots    20
|     Stage Percentile Should Be Within Budget    kernel    95    1.4s
"""
